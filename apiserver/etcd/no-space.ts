/**
 * etcd's NOSPACE alarm, in the apiserver's words. When etcd's backend
 * reaches its --quota-backend-bytes, etcd raises the alarm and, until it is
 * disarmed, refuses every write that would add data (puts, transactions with
 * puts, lease grants) with "etcdserver: mvcc: database space exceeded";
 * reads, deletes, compaction and defragmentation still work. The host is
 * healthy, so this is not a connection failure: see fault-handling.ts.
 */
import type { EtcdTlsFiles } from './client-tls.js';

const NOSPACE = /database space exceeded/;

/** True for etcd's refusal of a write under the NOSPACE alarm. */
export function isNoSpace(err: unknown): boolean {
  return NOSPACE.test(String((err as Error)?.message ?? err));
}

/** etcd refused a write because its NOSPACE alarm is raised; the message says how to recover. */
export class EtcdNoSpaceError extends Error {
  override readonly name = 'EtcdNoSpaceError';

  constructor(recovery: string, cause: unknown) {
    super(noSpaceMessage(recovery), { cause });
  }
}

/** What a refused write and /readyz say while the alarm is raised. */
export function noSpaceMessage(recovery: string): string {
  return `etcd is out of space (NOSPACE alarm): it refuses writes until space is freed; reads and deletes still work. To free space run: ${recovery} (it compacts etcd's history, defragments and disarms the alarm; see docs/troubleshooting.md)`;
}

/** The `cairn etcd defrag` command line for these endpoints and TLS files. */
export function recoveryCommand(endpoints: string[], tls: EtcdTlsFiles = {}): string {
  const flags = [['--etcd-cafile', tls.caFile], ['--etcd-certfile', tls.certFile], ['--etcd-keyfile', tls.keyFile]].filter(([, file]) => file);
  return ['cairn etcd defrag --etcd-endpoints', endpoints.join(','), ...flags.map(([flag, file]) => `${flag} ${file}`)].join(' ');
}

/**
 * `cairn etcd status` and `cairn etcd defrag`: maintenance straight against
 * etcd, for what cannot go through the API. Above all the NOSPACE alarm:
 * etcd then refuses writes, the apiserver answers them 507 with the
 * `cairn etcd defrag` command line to run, and this frees the space
 * (apiserver/etcd/maintenance.ts does the work).
 */
import { explainEtcdFailure } from '../../apiserver/etcd/client-tls.js';
import { memberIdHex, memberStatus, openMembers, raisedAlarms, reclaimSpace, type MemberClient, type MemberStatus } from '../../apiserver/etcd/maintenance.js';
import { GET_PADDING, tabwrite } from '../client/tabwriter.js';
import { etcdTlsFiles, type EtcdTlsFlags } from '../etcd-flags.js';

/** The flags of `cairn etcd status|defrag`. */
export interface EtcdFlags extends EtcdTlsFlags {
  etcdEndpoints: string[];
}

/** Runs `cairn etcd status`: a line per member, then the raised alarms. */
export async function showStatus(flags: EtcdFlags): Promise<void> {
  await withMembers(flags, async (members) => {
    const statuses = await Promise.all(members.map(memberStatus));
    const alarms = await raisedAlarms(members[0]!.client);
    process.stdout.write(`${statusTable(statuses)}\n`);
    process.stdout.write(alarms.length === 0 ? 'alarms: none\n' : alarms.map((a) => `alarm: ${a.alarm} on member ${memberIdHex(a.memberId)}\n`).join(''));
  });
}

/** Runs `cairn etcd defrag`: compacts, defragments, disarms NOSPACE; prints each step and the sizes before and after. */
export async function defrag(flags: EtcdFlags): Promise<void> {
  await withMembers(flags, async (members) => {
    const report = await reclaimSpace(members, (line) => process.stdout.write(`${line}\n`));
    for (const after of report.after) {
      const before = report.before.find((b) => b.endpoint === after.endpoint)!;
      process.stdout.write(`${after.endpoint}: database ${size(before.dbSize)} → ${size(after.dbSize)}\n`);
    }
    if (report.disarmed.length === 0) process.stdout.write('no NOSPACE alarm was raised\n');
    else process.stdout.write("etcd takes writes again; if they are refused again at once, the objects alone fill etcd's quota: delete some and run this again, or raise etcd's --quota-backend-bytes\n");
  });
}

/** The status lines as a table. Pure. */
export function statusTable(statuses: MemberStatus[]): string {
  const rows = statuses.map((s) => [s.endpoint, memberIdHex(s.memberId), s.version, size(s.dbSize), size(s.dbSizeInUse)]);
  return tabwrite([['ENDPOINT', 'MEMBER', 'VERSION', 'DB SIZE', 'IN USE'], ...rows], GET_PADDING);
}

async function withMembers(flags: EtcdFlags, fn: (members: MemberClient[]) => Promise<void>): Promise<void> {
  const tls = etcdTlsFiles(flags);
  const { members, close } = openMembers(flags.etcdEndpoints, tls);
  try {
    await fn(members);
  } catch (err) {
    const explained = explainEtcdFailure(err, flags.etcdEndpoints, tls);
    if (explained !== err) throw explained;
    throw new Error(`etcd at ${flags.etcdEndpoints.join(', ')}: ${(err as Error).message} (the embedded etcd of cairn server listens on a new port at each start: take the endpoint from its latest error, /readyz or log)`, { cause: err });
  } finally {
    close();
  }
}

function size(bytes: number): string {
  return bytes < 2 ** 20 ? `${Math.ceil(bytes / 1024)} KiB` : `${(bytes / 2 ** 20).toFixed(1)} MiB`;
}

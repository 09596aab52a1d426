/**
 * `cairn restore --from-agents` (docs/restore.md): rebuilds a lost etcd
 * from the copies the agents keep in their data dirs. Reads every dir
 * (read-only), merges the copies (apiserver/restore/merge.ts, pure), writes
 * them into an empty etcd with its revision raised past the old one
 * (apiserver/restore/write.ts), and prints the report.
 */
import path from 'node:path';
import { readAgentDir } from '../../agent/metadata-copy.js';
import { mergeAgentCopies, type AgentCopy } from '../../apiserver/restore/merge.js';
import { withRestoreTarget, type RestoreTarget } from '../../apiserver/restore/target.js';
import { writeRestored } from '../../apiserver/restore/write.js';
import { defaultCrdDir, servedDefinitions } from '../../apiserver/server.js';
import type { KubeObject } from '../../apiserver/storage/codec.js';
import { etcdTlsFiles, type EtcdTlsFlags } from '../etcd-flags.js';
import { restoreReport } from './restore-report.js';

/** The flags of `cairn restore`. */
export interface RestoreFlags extends EtcdTlsFlags {
  fromAgents: string[];
  dataDir?: string;
  etcdEndpoints?: string[];
  force: boolean;
  revisionMargin: number;
  crdDir?: string;
}

/** Runs `cairn restore --from-agents`. */
export async function runRestore(flags: RestoreFlags): Promise<void> {
  const target = restoreTarget(flags);
  const dirs = readAgentDirs(flags.fromAgents);
  const copies: AgentCopy[] = dirs.map((d) => ({ source: d.node ?? d.dir, objects: d.objects as KubeObject[] }));
  const merge = mergeAgentCopies(copies, servedDefinitions(flags.crdDir ?? defaultCrdDir()));
  const floorRevision = merge.highestRevision + flags.revisionMargin;
  const { outcome, where } = await withRestoreTarget(target, async (client, where) => ({ outcome: await writeRestored(client, merge.objects, { force: flags.force, floorRevision, now: new Date() }), where }));
  process.stdout.write(restoreReport(merge, { target: where, sources: copies.map((c) => c.source), problems: dirs.flatMap((d) => d.problems), outcome }));
}

function restoreTarget(flags: RestoreFlags): RestoreTarget {
  const endpoints = flags.etcdEndpoints ?? [];
  if (flags.dataDir && endpoints.length > 0) throw new Error('give either --data-dir (the embedded etcd of a cairn server) or --etcd-endpoints (an external etcd), not both');
  if (flags.dataDir) return { dataDir: path.resolve(flags.dataDir) };
  if (endpoints.length > 0) return { endpoints, tls: etcdTlsFiles(flags) };
  throw new Error('say where to restore into: --data-dir <the cairn server data dir> (its embedded etcd), or --etcd-endpoints <urls> (an external, empty etcd)');
}

function readAgentDirs(dirs: string[]): ReturnType<typeof readAgentDir>[] {
  const read = dirs.map((d) => readAgentDir(path.resolve(d)));
  const empty = read.filter((d) => d.objects.length === 0).map((d) => d.dir);
  if (empty.length > 0) {
    throw new Error(`no copy of any object in ${empty.join(', ')}: is that an agent's --data-dir (it holds workitems/ and metadata/)? Copy each agent's metadata/ and workitems/ here first (e.g. mkdir -p node-a && for d in metadata workitems; do rsync -a "node-a:/var/lib/cairn/agent/$d" ./node-a/; done)`);
  }
  return read;
}

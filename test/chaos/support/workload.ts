/**
 * What the chaos scenarios keep running while they break the cluster: a
 * replica-3 gluster Volume with a writer instance appending checksummed
 * records to it, and a few ticking process instances; how to tell the
 * cluster has converged again; and how to check the Volume's data once it
 * has (every brick the same bytes, every record intact and in order).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { Instance } from '../../../api/instance.js';
import type { Volume } from '../../../api/volume.js';
import { tag, tickCommand } from '../../e2e/agent/harness.js';
import type { ChaosCluster } from './chaos-cluster.js';

export const NS = 'chaos';
/** Seconds before a client gives up on a brick it cannot reach (gluster's 42 by default), so a brick partition fits a trial. */
export const PING_TIMEOUT_S = 2;
/**
 * The Volume's options: the short ping timeout, and a self-heal crawl every 5 s instead of 600 s. A
 * self-heal daemon idle through a partition never sees its brick go (it sends nothing, so it times
 * nothing out) and so never sees it return: what the brick missed waits for the next crawl.
 */
const VOLUME_OPTIONS = { 'network.ping-timeout': String(PING_TIMEOUT_S), 'cluster.heal-timeout': '5' };

/** Appends `<n> <sha256(n)[:16]>` lines to records, carrying on from the last line after a restart; a failed append is retried. */
function writerCommand(marker: string): string[] {
  const script = [
    'cd "$CAIRN_VOLUME_DATA" || exit 1',
    'n=$(tail -n 1 records 2>/dev/null | cut -d" " -f1); n=${n:-0}',
    'while true; do m=$((n+1)); line="$m $(echo $m | sha256sum | cut -c1-16)"',
    '  if echo "$line" >> records; then n=$m; else sleep 0.2; fi; sleep 0.05',
    `done # ${tag(marker, 'writer')}`,
  ].join('\n');
  return ['sh', '-c', script];
}

/** Creates the Volume, the writer and `tickers` ticking instances; resolves once all run. */
export async function startWorkload(c: ChaosCluster, marker: string, tickers: number): Promise<string[]> {
  await c.client.create('Volume', { metadata: { name: 'data', namespace: NS }, spec: { size: '64Mi', replicas: 3, driver: 'gluster', options: VOLUME_OPTIONS } } as Volume);
  const instance = (name: string, command: string[], volumes?: Instance['spec']['volumes']) =>
    c.client.create('Instance', { metadata: { name, namespace: NS }, spec: { memory: '16Mi', terminationGracePeriodSeconds: 1, ...(volumes ? { volumes } : {}), process: { command } } } as Instance);
  const names = Array.from({ length: tickers }, (_, i) => `tick-${i}`);
  for (const n of names) await instance(n, tickCommand(marker, n));
  await instance('writer', writerCommand(marker), [{ name: 'data', volumeName: 'data' }]);
  return [...names, 'writer'];
}

/** Why the cluster has not converged ('' once it has): no crash, Nodes Ready, Instances Running, the Volume Ready. */
export async function notConverged(c: ChaosCluster): Promise<string> {
  if (c.crashes.length) return c.crashes.join('; ');
  const nodes = (await c.client.list('Node', { namespace: NS })).items.filter((n) => n.status?.phase !== 'Ready');
  if (nodes.length) return `nodes not Ready: ${nodes.map((n) => `${n.metadata.name} (${n.status?.phase})`).join(', ')}`;
  const instances = (await c.client.list('Instance', { namespace: NS })).items.filter((i) => i.status?.phase !== 'Running');
  const why = (i: Instance) => i.status?.conditions?.find((x) => x.type === 'Ready' && x.status !== 'True');
  if (instances.length) return `instances not Running: ${instances.map((i) => `${i.metadata.name} (${i.status?.phase} on ${i.status?.nodeName}: ${why(i)?.reason}: ${why(i)?.message})`).join(', ')}`;
  const v = await c.client.get('Volume', NS, 'data');
  if (v?.status?.phase === 'Ready') return '';
  const ready = v?.status?.conditions?.find((x) => x.type === 'Ready');
  const bricks = (v?.status?.replicas ?? []).map((r) => `${r.nodeName} ${r.state}/${r.brick?.state} heals ${r.brick?.pendingHeals ?? 0}`);
  return `volume data is ${v?.status?.phase} (${ready?.reason}: ${ready?.message}; ${bricks.join(', ')})`;
}

/**
 * What a trial waited on, each change with the seconds since the trial began: what a slow trial's kept
 * logs cannot say (they are at warn level, and a restarted process's log starts afresh).
 */
export class Timeline {
  private readonly start = Date.now();
  private readonly lines: string[] = [];
  private last = '';
  note(what: string): void {
    if (what === this.last) return;
    this.last = what;
    this.lines.push(`+${((Date.now() - this.start) / 1000).toFixed(1)} s ${what}`);
  }
  text(): string {
    return this.lines.join('\n') + '\n';
  }
}

/** Polls until the cluster converged; the time it took. */
export async function waitConverged(c: ChaosCluster, timeoutMs: number, timeline?: Timeline): Promise<number> {
  const start = Date.now();
  let why = '';
  while (Date.now() - start < timeoutMs) {
    why = await notConverged(c).catch((err: Error) => `API: ${err.message}`);
    timeline?.note(why || 'converged');
    if (!why) return Date.now() - start;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`the cluster did not converge in ${timeoutMs / 1000} s: ${why}`);
}

const sha = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The records file on every brick of the Volume. */
function brickCopies(c: ChaosCluster, v: Volume): Array<{ node: string; bytes: Buffer }> {
  return (v.status?.replicas ?? []).map((r) => ({ node: r.nodeName!, bytes: fs.readFileSync(path.join(c.dir, 'agents', r.nodeName!, 'bricks', NS, `data-${r.index}`, 'records')) }));
}

/** Records out of order, duplicated or torn in `text`. */
function badRecords(text: string): string[] {
  const bad: string[] = [];
  let last = 0;
  for (const line of text.split('\n').filter(Boolean)) {
    const [n, hash] = line.split(' ');
    const seq = Number(n);
    if (!(seq > last) || hash !== sha(Buffer.from(`${seq}\n`)).slice(0, 16)) bad.push(line);
    last = Math.max(last, seq || last);
  }
  return bad;
}

/**
 * What the Volume holds, once healed: records written, and every mismatch
 * between bricks or torn record. The writer goes on appending, so bricks
 * are compared over the bytes they all have, and may differ by the one
 * record in flight.
 */
export async function volumeDataCheck(c: ChaosCluster): Promise<{ records: number; mismatches: string[] }> {
  const v = (await c.client.get('Volume', NS, 'data'))!;
  const copies = brickCopies(c, v);
  const common = Math.min(...copies.map((b) => b.bytes.length));
  const prefixes = new Set(copies.map((b) => sha(b.bytes.subarray(0, common))));
  const sizes = copies.map((b) => `${b.node} ${b.bytes.length} B`).join(', ');
  const mismatches = prefixes.size > 1 || Math.max(...copies.map((b) => b.bytes.length)) - common > 64 ? [`bricks differ: ${sizes}`] : [];
  const text = copies[0]?.bytes.subarray(0, common).toString('utf8') ?? '';
  const bad = badRecords(text.slice(0, text.lastIndexOf('\n') + 1));
  if (bad.length) mismatches.push(`${bad.length} bad records, first: ${bad.slice(0, 3).join(' | ')}`);
  return { records: text.split('\n').filter(Boolean).length, mismatches };
}

/**
 * Waits until every brick holds the same records (self-heal done) and none
 * is torn; returns the number of records. Throws with the last mismatch
 * after `timeoutMs`, or at once on a torn record the bricks agree on. While
 * they differ, a brick that fell behind may show a hole of zeros: the
 * mounts write on at the other bricks' offsets, past its end, and the heal
 * fills the gap in after.
 */
export async function waitVolumeHealed(c: ChaosCluster, timeoutMs: number, timeline?: Timeline): Promise<{ records: number }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    // The API may answer 503 for a moment (an etcd election after a member's cut): that is no verdict on the data.
    const check = await volumeDataCheck(c).catch((err: Error) => ({ records: 0, mismatches: [`bricks differ: not read (API: ${err.message})`] }));
    timeline?.note(check.mismatches.join('; ') || 'volume data healed');
    if (check.mismatches.length === 0) return { records: check.records };
    const healing = check.mismatches.some((m) => m.startsWith('bricks differ'));
    if (!healing || Date.now() > deadline) throw new Error(`volume data: ${check.mismatches.join('; ')}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

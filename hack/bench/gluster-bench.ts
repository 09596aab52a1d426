/**
 * The gluster volume benchmark (issue 14, docs/volumes.md): `cairn server`
 * with its controller and three `cairn agent` processes (default lease
 * timings), a replica-3 gluster Volume, and:
 * - sequential write throughput (dd bs=1M conv=fsync) onto the volume's
 *   mount on a node, the mount the agent made for an instance, against
 *   the same volfiles run by hand (bare glusterfsd on plain directories
 *   and a glusterfs FUSE mount), against a local directory; rounds
 *   alternate, medians compared in this one run. Target: Cairn ≥ 0.9×
 *   bare GlusterFS;
 * - heal time of 256 MiB: a brick's node is down (agent and brick killed)
 *   while 256 MiB are written, then comes back; from its agent's start to
 *   the Volume Ready again with nothing left to heal and the brick's copy
 *   complete;
 * - node death → the instance Running on another node and its data read
 *   back there with the same checksum.
 *
 * Usage: `npm run bench:gluster [-- --rounds 3 --mib 256]`. Exit 3 when the
 * throughput target is missed, 1 when the run fails. Every process, mount
 * and loop device it makes is gone on exit, failure, SIGINT/SIGTERM and
 * watchdog. Needs root and GlusterFS (hack/install-gluster.sh).
 */
import { execFile, execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { promisify } from 'node:util';
import { CairnClient } from '../../api/client/cairn-client.js';
import { loadKubeConfig } from '../../api/client/kubeconfig.js';
import type { Instance } from '../../api/instance.js';
import type { Volume } from '../../api/volume.js';
import { stopChild } from '../../apiserver/etcd/process.js';
import { freePort } from '../../apiserver/util/free-port.js';
import { clientVolfile, oneBrickVolfile } from '../../controller/reconcilers/volume/volfiles.js';
import { volumeIdXattr } from '../../agent/drivers/volume/gluster-brick.js';
import { answers, isMountPoint } from '../../agent/drivers/volume/gluster-mount.js';
import { CAIRN_BIN, spawnCairn, type CairnProcess } from '../cairn-process.js';
import { killGlusterUnder } from '../gluster-cleanup.js';
import { fmt, killMarked, median, numberArg, runBenchmark, until } from './lib.js';

const run = promisify(execFile);
const ROUNDS = numberArg('rounds', 3);
const MIB = numberArg('mib', 256);
const NS = 'bench';
const NODES = ['node-a', 'node-b', 'node-c'];
const MARKER = `cairn-gluster-bench-${process.pid}`;
const TARGET_RATIO = 0.9;

let server: CairnProcess | undefined;
let dir: string | undefined;
const agents = new Map<string, ChildProcess>();
const bare: ChildProcess[] = [];

const dataDir = (node: string) => path.join(dir!, node);
const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

function startAgent(kubeconfig: string, node: string): void {
  const child = spawn(process.execPath, [CAIRN_BIN, 'agent', '--kubeconfig', kubeconfig, '--cluster', NS, '--node-name', node, '--data-dir', dataDir(node), '--monitor-port', '0', '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'] });
  agents.set(node, child);
}

async function cleanup(): Promise<void> {
  for (const a of agents.values()) await stopChild(a, 5000).catch(() => undefined);
  killMarked(MARKER);
  for (const b of bare) b.kill('SIGKILL');
  if (dir) {
    for (const n of NODES) killGlusterUnder(dataDir(n));
    killGlusterUnder(path.join(dir, 'bare'));
  }
  await server?.stop().catch(() => undefined);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

/** MB/s of one dd of MIB MiB into `target` with fsync; the file is removed after. */
async function ddRate(target: string): Promise<number> {
  const file = path.join(target, `dd-${process.pid}.bin`);
  const t0 = performance.now();
  await run('dd', ['if=/dev/zero', `of=${file}`, 'bs=1M', `count=${MIB}`, 'conv=fsync'], { maxBuffer: 1 << 20 });
  const seconds = (performance.now() - t0) / 1000;
  fs.rmSync(file, { force: true });
  return (MIB * 2 ** 20) / 1e6 / seconds;
}

/** The same volfiles as the Cairn Volume's, run by hand: three bare glusterfsd on plain directories and a FUSE mount. */
async function startBareGluster(volume: Volume, ports: number[]): Promise<string> {
  const root = path.join(dir!, 'bare');
  const volumeName = `${NS}-bare`;
  const bricks = ports.map((port, i) => ({ host: '127.0.0.1', port, path: path.join(root, `brick-${i}`) }));
  for (const [i, b] of bricks.entries()) {
    fs.mkdirSync(path.join(b.path, '.glusterfs'), { recursive: true });
    execFileSync('setfattr', ['-n', 'trusted.glusterfs.volume-id', '-v', volumeIdXattr(volume.metadata.uid!), b.path]);
    fs.writeFileSync(path.join(root, `brick-${i}.vol`), oneBrickVolfile(volumeName, volume.metadata.uid!, b));
    bare.push(spawn('glusterfsd', ['-N', '-f', path.join(root, `brick-${i}.vol`), '-l', path.join(root, `brick-${i}.log`), '--brick-name', b.path], { stdio: 'ignore' }));
  }
  fs.writeFileSync(path.join(root, 'client.vol'), clientVolfile({ volume: volumeName, volumeId: volume.metadata.uid!, bricks }));
  const mnt = path.join(root, 'mnt');
  fs.mkdirSync(mnt);
  await new Promise((r) => setTimeout(r, 1000));
  bare.push(spawn('glusterfs', ['-N', '-f', path.join(root, 'client.vol'), '-l', path.join(root, 'client.log'), mnt], { stdio: 'ignore' }));
  await until('the bare mount', 20_000, async () => isMountPoint(mnt) && answers(mnt));
  return mnt;
}

/** Writes known.bin once and records what it reads back per node, then sleeps: the instance whose data is checked after failover. */
function instanceCommand(): string[] {
  return ['sh', '-c', [
    'cd "$CAIRN_VOLUME_DATA" || exit 1',
    '[ -f known.bin ] || { head -c 16777216 /dev/urandom > known.tmp && mv known.tmp known.bin; }',
    'sha256sum known.bin | cut -d" " -f1 > read.tmp && mv read.tmp "read-on-$CAIRN_NODE"',
    `while true; do sleep 1; done # ${MARKER}`,
  ].join('\n')];
}

async function main(): Promise<boolean> {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-gluster-bench-'));
  server = spawnCairn(['server', '--data-dir', path.join(dir, 'server'), '--port', '0', '--log-level', 'warn']);
  await server.ready;
  const kubeconfig = path.join(dir, 'server', 'admin.kubeconfig');
  const client = new CairnClient(loadKubeConfig({ kubeconfig }));
  await client.create('Cluster', { metadata: { name: NS }, spec: {} });
  for (const n of NODES) startAgent(kubeconfig, n);
  await until('three Ready nodes', 60_000, async () => (await client.list('Node', { namespace: NS })).items.filter((n) => n.status?.phase === 'Ready').length === 3);
  await client.create('Volume', { metadata: { name: 'data', namespace: NS }, spec: { size: `${Math.max(1024, MIB * 4)}Mi`, replicas: 3, driver: 'gluster' } } as Volume);
  const volume = await until('the Volume Ready', 120_000, async () => {
    const v = await client.get('Volume', NS, 'data');
    return v?.status?.phase === 'Ready' ? v : undefined;
  });
  await client.create('Instance', { metadata: { name: 'app', namespace: NS }, spec: { memory: '32Mi', terminationGracePeriodSeconds: 1, volumes: [{ name: 'data', volumeName: 'data' }], process: { command: instanceCommand() } } } as Instance);
  const first = await until('the instance Running', 60_000, async () => {
    const i = await client.get('Instance', NS, 'app');
    return i?.status?.phase === 'Running' ? i.status.nodeName : undefined;
  });
  const cairnMount = path.join(dataDir(first), 'mounts', NS, 'data');
  await until('known.bin written', 30_000, async () => fs.existsSync(path.join(cairnMount, `read-on-${first}`)));
  const written = sha(path.join(cairnMount, 'known.bin'));

  const ports = [await freePort(), await freePort(), await freePort()];
  const bareMount = await startBareGluster(volume, ports);
  const local = fs.mkdtempSync(path.join(dir, 'local-'));
  const rates = { cairn: [] as number[], bare: [] as number[], local: [] as number[] };
  console.log(`\ngluster volume, replica 3 on one machine: dd ${MIB} MiB, bs=1M, conv=fsync, ${ROUNDS} rounds`);
  // One write each first, not counted: a fresh filesystem's first allocations and cold caches are not the steady state.
  for (const target of [cairnMount, bareMount, local]) await ddRate(target);
  for (let i = 0; i < ROUNDS; i++) {
    rates.cairn.push(await ddRate(cairnMount));
    rates.bare.push(await ddRate(bareMount));
    rates.local.push(await ddRate(local));
    console.log(`  round ${i + 1}: cairn ${fmt(rates.cairn.at(-1)!)} MB/s, bare gluster ${fmt(rates.bare.at(-1)!)} MB/s, local dir ${fmt(rates.local.at(-1)!)} MB/s`);
  }
  const [c, b, l] = [median(rates.cairn), median(rates.bare), median(rates.local)];
  const ratio = c / b;
  console.log(`  median: cairn ${fmt(c)} MB/s = ${fmt(ratio, 2)}× bare gluster (${fmt(b)} MB/s; target ≥ ${TARGET_RATIO}× ${ratio >= TARGET_RATIO ? 'PASS' : 'FAIL'}), ${fmt(c / l, 2)}× local dir (${fmt(l)} MB/s)`);

  await healTime(client, kubeconfig, first, cairnMount);
  await failover(client, first, written);
  return ratio >= TARGET_RATIO;
}

/** A brick's node down while 256 MiB are written; its agent back: seconds until the Volume is Ready with nothing to heal and the copy complete. */
async function healTime(client: CairnClient, kubeconfig: string, writerNode: string, mount: string): Promise<void> {
  const away = NODES.find((n) => n !== writerNode)!;
  await stopChild(agents.get(away)!, 5000);
  agents.delete(away);
  killGlusterUnder(dataDir(away));
  const file = path.join(mount, 'heal.bin');
  await run('dd', ['if=/dev/urandom', `of=${file}`, 'bs=1M', 'count=256', 'conv=fsync']);
  const t0 = performance.now();
  startAgent(kubeconfig, away);
  const v = await until('the Volume healed', 300_000, async () => {
    const now = await client.get('Volume', NS, 'data');
    const left = (now?.status?.replicas ?? []).reduce((n, r) => n + (r.brick?.pendingHeals ?? 0), 0);
    return now?.status?.phase === 'Ready' && left === 0 ? now : undefined;
  }, 100);
  const seconds = (performance.now() - t0) / 1000;
  const r = v.status!.replicas!.find((x) => x.nodeName === away)!;
  const copy = path.join(dataDir(away), 'bricks', NS, `data-${r.index}`, 'heal.bin');
  const complete = fs.existsSync(copy) && fs.statSync(copy).size === 256 * 2 ** 20 && sha(copy) === sha(file);
  console.log(`  heal of 256 MiB after its brick's node came back: ${fmt(seconds, 1)} s from its agent's start to the Volume Ready with 0 pending heals; the brick's copy ${complete ? 'matches' : 'DOES NOT match'}`);
  if (!complete) throw new Error(`the healed copy ${copy} does not match`);
  fs.rmSync(file);
}

/** The instance's node dies: seconds until it runs elsewhere and has read its data back with the same checksum. */
async function failover(client: CairnClient, lost: string, written: string): Promise<void> {
  agents.get(lost)!.kill('SIGKILL');
  agents.delete(lost);
  killMarked(MARKER);
  killGlusterUnder(dataDir(lost));
  const t0 = performance.now();
  const moved = await until('the instance Running elsewhere', 120_000, async () => {
    const i = await client.get('Instance', NS, 'app');
    return i?.status?.phase === 'Running' && i.status.nodeName !== lost ? i.status.nodeName : undefined;
  }, 50);
  const running = (performance.now() - t0) / 1000;
  const readBack = path.join(dataDir(moved!), 'mounts', NS, 'data', `read-on-${moved}`);
  await until('the data read back', 30_000, async () => fs.existsSync(readBack), 50);
  const verified = (performance.now() - t0) / 1000;
  const same = fs.readFileSync(readBack, 'utf8').trim() === written;
  console.log(`  node death (kill -9 of agent, instance, bricks and mounts): Running on ${moved} after ${fmt(running, 1)} s, its 16 MiB read back ${same ? 'with the same checksum' : 'DIFFERENT'} after ${fmt(verified, 1)} s`);
  if (!same) throw new Error('the data read after failover differs');
}

runBenchmark(main, cleanup, 20 * 60_000);

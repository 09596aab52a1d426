/**
 * The controller benchmark (issue 3, "Benchmark"): hollow nodes, as
 * kubemark and kwok do it. One run on loopback against a fresh throwaway
 * etcd, every part its own process: `cairn apiserver`, `cairn controller`,
 * and hollow-nodes.js (N Nodes that renew their leases and mark WorkItems
 * Done after a short delay). 5,000 Instances are applied at once; the run
 * measures seconds until all are Running, instances/s, p50/p99 of
 * per-instance create→Running latency, controller RSS and CPU, and — in
 * the same run — the raw ceiling: etcd puts/s divided by the etcd writes
 * one instance actually cost (the keys written or deleted in the run, read
 * back from etcd's history, ÷ instances). The revision delta, printed
 * beside it, counts etcd transactions: the same unless one transaction
 * wrote several keys (a lease's expiry deletes all its Events at once).
 *
 * Usage: `npm run bench:controller [-- --nodes 200 --instances 5000 --workers 32]`.
 * CONTROLLER_CPU_PROF=<dir> / APISERVER_CPU_PROF=<dir> write that process's V8 CPU profile there
 * (read it with profile-summary.js).
 * Exit status: 0 all targets met, 3 a target missed, 1 the run failed.
 * Everything it starts is stopped on exit, failure, SIGINT/SIGTERM and watchdog.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { Watch } from '@kubernetes/client-node';
import { Etcd3 } from 'etcd3';
import { loadKubeConfig } from '../../api/client/kubeconfig.js';
import { stopChild } from '../../apiserver/etcd/process.js';
import { MAX_RECEIVE_BYTES } from '../../apiserver/storage/etcd-store.js';
import { keyResource } from '../../apiserver/storage/keys.js';
import { CAIRN_BIN, spawnCairn, type CairnProcess } from '../cairn-process.js';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../etcd.js';
import { CpuMeter, expectStatus, fmt, numberArg, percentile, procCpuSeconds, procStatusMiB, request, runBenchmark, runConcurrent, targetFromKubeconfig, type ApiTarget } from './lib.js';

const NODES = numberArg('nodes', 200);
const INSTANCES = numberArg('instances', 5000);
const WORKERS = numberArg('workers', 64);
const CONCURRENCY = 64;
const CLUSTER = 'bench';
const WATCHDOG_MS = 300_000;
const GROUP_PATH = '/apis/cairn.dev/v1alpha1';

let etcd: ThrowawayEtcd | undefined;
let server: CairnProcess | undefined;
let controller: ChildProcess | undefined;
let hollow: ChildProcess | undefined;
let dir: string | undefined;
let api: ApiTarget | undefined;

async function cleanup(): Promise<void> {
  api?.agent.destroy();
  for (const c of [controller, hollow]) if (c) await stopChild(c, 5000).catch(() => undefined);
  await server?.stop().catch(() => undefined);
  await etcd?.cleanup().catch(() => undefined);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}


let controllerHealth: string | undefined;

/** Prints the controller's queue and reconcile metrics (where its time went). */
async function printControllerMetrics(): Promise<void> {
  if (!controllerHealth) return;
  const text = await (await fetch(`${controllerHealth}/metrics`)).text();
  const keep = /^cairn_(reconcile_total|reconcile_duration_seconds_(sum|count)|workqueue_(adds_total|retries_total|queue_duration_seconds_(sum|count))|nodejs_heap_size_(used|total)_bytes|nodejs_external_memory_bytes)[{ ]/;
  console.log(text.split('\n').filter((l) => keep.test(l)).map((l) => `    ${l}`).join('\n'));
}

function spawnNode(script: string[], onLine?: (line: string) => void): ChildProcess {
  const child = spawn(process.execPath, script, { stdio: ['ignore', 'pipe', 'pipe'] });
  let buf = '';
  child.stdout!.on('data', (d) => {
    buf += d;
    for (let i = buf.indexOf('\n'); i >= 0; i = buf.indexOf('\n')) {
      onLine?.(buf.slice(0, i));
      buf = buf.slice(i + 1);
    }
  });
  child.stderr!.on('data', (d: Buffer) => {
    controllerHealth ??= /"health":"([^"]+)"/.exec(d.toString())?.[1];
    if (!d.includes('"level":"info"')) process.stderr.write(`[${path.basename(script[script.length > 1 ? 1 : 0]!)}] ${d}`);
  });
  return child;
}

async function rawPutRate(endpoint: string): Promise<number> {
  const raw = new Etcd3({ hosts: endpoint });
  const doc = JSON.stringify({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name: 'x', namespace: CLUSTER }, spec: { cpus: 1, memory: '64Mi', process: { command: ['/bin/true'] } }, status: { phase: 'Running' } });
  await runConcurrent(500, CONCURRENCY, async (i) => void (await raw.put(`/bench-raw/warm/${i}`).value(doc)));
  const r = await runConcurrent(5000, CONCURRENCY, async (i) => void (await raw.put(`/bench-raw/put/${i}`).value(doc)));
  await raw.delete().prefix('/bench-raw/');
  raw.close();
  return r.perSecond;
}

/** The writes between two revisions, by the resource of their key (etcd keeps the history until compacted). */
async function writesByResource(endpoint: string, fromRev: number, toRev: number): Promise<Map<string, number>> {
  // etcd sends up to 1,000 revisions in one watch message: over 4 MiB with objects of a few KiB.
  const raw = new Etcd3({ hosts: endpoint, grpcOptions: { 'grpc.max_receive_message_length': MAX_RECEIVE_BYTES } });
  const counts = new Map<string, number>();
  let seen = fromRev;
  const watcher = await raw.watch().prefix('').startRevision(String(fromRev + 1)).create();
  let timer: NodeJS.Timeout | undefined;
  try {
    await new Promise<void>((resolve, reject) => {
      watcher.on('error', reject);
      watcher.on('data', (res) => {
        for (const e of res.events) {
          if (Number(e.kv.mod_revision) > toRev) continue;
          const key = e.kv.key.toString();
          const what = `${keyResource(key)}${e.type === 'Delete' ? ' (delete)' : ''}`;
          counts.set(what, (counts.get(what) ?? 0) + 1);
          seen = Math.max(seen, Number(e.kv.mod_revision));
        }
        if (seen >= toRev) resolve();
      });
      // The count is the run's figure: one cut short would flatter it.
      timer = setTimeout(() => reject(new Error(`reading etcd's history of the run: got to revision ${seen} of ${toRev} in 30 s`)), 30_000);
    });
  } finally {
    clearTimeout(timer);
    await watcher.cancel();
    raw.close();
  }
  return counts;
}

async function etcdRevision(endpoint: string): Promise<number> {
  const raw = new Etcd3({ hosts: endpoint });
  const res = await raw.get('/cairn-bench-probe').exec();
  raw.close();
  return Number(res.header.revision);
}

/** Resolves when every instance has been seen Running; records when. */
function watchRunning(kubeconfig: string, runningAt: Map<string, number>, total: number): Promise<void> {
  const kc = loadKubeConfig({ kubeconfig });
  return new Promise((resolve, reject) => {
    const onEvent = (_type: string, obj: { metadata: { name: string }; status?: { phase?: string } }) => {
      if (obj.status?.phase === 'Running' && !runningAt.has(obj.metadata.name)) {
        runningAt.set(obj.metadata.name, performance.now());
        if (runningAt.size === total) resolve();
      }
    };
    void new Watch(kc).watch(`${GROUP_PATH}/namespaces/${CLUSTER}/instances`, { timeoutSeconds: 600 }, onEvent, (err) => (runningAt.size < total ? reject(err ?? new Error('watch ended')) : resolve()));
  });
}

async function main(): Promise<boolean> {
  etcd = await startThrowawayEtcd();
  const putsPerSecond = await rawPutRate(etcd.endpoint);
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-ctl-bench-'));
  const serverProfile = process.env.APISERVER_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.APISERVER_CPU_PROF}`] : [];
  server = spawnCairn(['apiserver', '--etcd-endpoints', etcd.endpoint, '--data-dir', dir, '--port', '0', '--log-level', 'warn'], serverProfile);
  await server.ready;
  const kubeconfig = path.join(dir, 'admin.kubeconfig');
  api = targetFromKubeconfig(kubeconfig, CONCURRENCY);
  await expectStatus(api, [201], 'POST', `${GROUP_PATH}/clusters`, { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: CLUSTER } });
  const hollowReady = new Promise<void>((resolve) => (hollow = spawnNode([fileURLToPath(new URL('hollow-nodes.js', import.meta.url)), kubeconfig, CLUSTER, String(NODES), '100'], (l) => l.includes('hollow nodes ready') && resolve())));
  await hollowReady;
  controller = spawnNode([...(process.env.CONTROLLER_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.CONTROLLER_CPU_PROF}`] : []), CAIRN_BIN, 'controller', '--kubeconfig', kubeconfig, '--metrics-port', '0', '--workers', String(WORKERS), '--log-level', 'info']);
  await waitForNodesReady(api);
  await waitForControllerCounts(api);
  console.log(`${NODES} hollow nodes Ready; controller pid ${controller.pid}, RSS ${fmt(procStatusMiB(controller.pid!), 1)} MiB`);
  const rev0 = await etcdRevision(etcd.endpoint);
  const runningAt = new Map<string, number>();
  const allRunning = watchRunning(kubeconfig, runningAt, INSTANCES);
  const cpu0 = procCpuSeconds(controller.pid!);
  const meter = new CpuMeter({ controller: controller.pid!, apiserver: server.child.pid!, etcd: etcd.process.child.pid!, hollow: hollow!.pid!, bench: process.pid });
  const sentAt = new Float64Array(INSTANCES);
  const t0 = performance.now();
  const create = await runConcurrent(INSTANCES, CONCURRENCY, async (i) => {
    sentAt[i] = performance.now();
    const body = { apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name: `i-${i}`, namespace: CLUSTER }, spec: { cpus: 1, memory: '64Mi', process: { command: ['sleep', 'infinity'] } } };
    return (await request(api!, 'POST', `${GROUP_PATH}/namespaces/${CLUSTER}/instances`, body)).status === 201;
  });
  if (create.errors) throw new Error(`creating instances: ${create.firstError}`);
  console.log(`created ${INSTANCES} instances in ${fmt(create.seconds, 1)} s (${fmt(create.perSecond)}/s)`);
  await allRunning;
  const seconds = (Math.max(...runningAt.values()) - t0) / 1000;
  const latencies = Float64Array.from({ length: INSTANCES }, (_, i) => (runningAt.get(`i-${i}`)! - sentAt[i]!) / 1000);
  const cpuSeconds = procCpuSeconds(controller.pid!) - cpu0;
  const rss = procStatusMiB(controller.pid!);
  const peak = procStatusMiB(controller.pid!, 'VmHWM');
  const rev1 = await etcdRevision(etcd.endpoint);
  console.log(`  ${meter.report()}`);
  const byResource = [...(await writesByResource(etcd.endpoint, rev0, rev1))].sort((a, b) => b[1] - a[1]);
  const writesPerInstance = byResource.reduce((sum, [, n]) => sum + n, 0) / INSTANCES;
  console.log(`  etcd writes per instance by resource: ${byResource.map(([r, n]) => `${r} ${fmt(n / INSTANCES, 2)}`).join(', ')}`);
  await printControllerMetrics();
  const rows: Array<[string, string, string, boolean | undefined]> = [
    [`seconds until all ${INSTANCES} Running`, fmt(seconds, 1), '≤ 30', seconds <= 30],
    ['instances/s', fmt(INSTANCES / seconds), '', undefined],
    ['create→Running p50 (s)', fmt(percentile(latencies, 50), 2), '', undefined],
    ['create→Running p99 (s)', fmt(percentile(latencies, 99), 2), '≤ 10', percentile(latencies, 99) <= 10],
    ['controller RSS now / peak (MiB)', `${fmt(rss)} / ${fmt(peak)}`, '≤ 200', peak <= 200],
    ['controller CPU (s, % of one core)', `${fmt(cpuSeconds, 1)} (${fmt((100 * cpuSeconds) / seconds)} %)`, '', undefined],
    ['raw etcd puts/s (same run)', fmt(putsPerSecond), '', undefined],
    ['etcd writes per instance (measured)', fmt(writesPerInstance, 2), '≤ 4', writesPerInstance <= 4],
    ['etcd transactions per instance (revisions)', fmt((rev1 - rev0) / INSTANCES, 2), '', undefined],
    ['raw ceiling: instances/s = puts/s ÷ writes', fmt(putsPerSecond / writesPerInstance), '', undefined],
  ];
  console.log(`\n${NODES} hollow nodes, ${INSTANCES} instances, controller --workers ${WORKERS}`);
  for (const [figure, value, target, ok] of rows) console.log(`  ${figure.padEnd(44)} ${value.padStart(14)}  ${target.padEnd(6)} ${ok === undefined ? '' : ok ? 'PASS' : 'FAIL'}`);
  return rows.every(([, , , ok]) => ok !== false);
}

/** The controller is leading with synced caches once it has counted every node into the Cluster's status. */
async function waitForControllerCounts(t: ApiTarget): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const r = await request(t, 'GET', `${GROUP_PATH}/clusters/${CLUSTER}`);
    const c = JSON.parse(r.body.toString()) as { status?: { counts?: { nodesReady?: number } } };
    if (c.status?.counts?.nodesReady === NODES) return;
    await new Promise((res) => setTimeout(res, 200));
  }
  throw new Error('the controller did not report the nodes in the Cluster status');
}

async function waitForNodesReady(t: ApiTarget): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const r = await request(t, 'GET', `${GROUP_PATH}/namespaces/${CLUSTER}/nodes`);
    const list = JSON.parse(r.body.toString()) as { items: Array<{ status?: { phase?: string } }> };
    if (list.items.length === NODES && list.items.every((n) => n.status?.phase === 'Ready')) return;
    await new Promise((res) => setTimeout(res, 500));
  }
  throw new Error('hollow nodes did not become Ready');
}

runBenchmark(main, cleanup, WATCHDOG_MS);

/**
 * The apiserver benchmark (issue 2, "Benchmark"): one run on loopback against
 * one fresh throwaway etcd, with `cairn apiserver` as a separate process.
 *
 *   1. creates/s through the apiserver vs raw etcd3 puts of the same documents (concurrency 64),
 *      and through a bare HTTPS server doing only a create's write and watch (bare-server.ts), the floor
 *   2. gets/s through the apiserver vs raw etcd3 gets of the same keys (concurrency 64)
 *   3. watch delivery latency, 100 watchers, a writer creating 1,000 objects/s for 5 s
 *   4. time to LIST 10,000 objects as JSON and as Table (median of 5)
 *   5. apiserver RSS with those objects stored
 *
 * Usage: `npm run bench [-- --cpu-prof <dir>]`. With --cpu-prof the apiserver
 * writes a V8 CPU profile into <dir> when it stops (open it in Chrome DevTools);
 * `node dist/hack/bench/profile-summary.js <file> [top] [from-to]` prints where
 * the time went, optionally for one phase (each phase prints its window as
 * `server t+a–b s`). Each phase also prints the CPU use of the apiserver, etcd,
 * this load generator and everything else on the machine: figures taken while
 * other processes load the cores are pessimistic.
 * Exit status: 0 all targets met, 3 a target missed, 1 the run failed.
 * Everything it starts (etcd, the apiserver, temp dirs) is removed on exit,
 * on failure, on SIGINT/SIGTERM and when the watchdog fires.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import { performance } from 'node:perf_hooks';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Etcd3 } from 'etcd3';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../etcd.js';
import { CpuMeter, expectStatus, fmt, latencySummary, median, percentile, procStatusMiB, request, runConcurrent, targetFromKubeconfig, type ApiTarget, type RunResult } from './lib.js';
import { stopChild } from '../../apiserver/etcd/process.js';
import { spawnCairn, type CairnProcess } from '../cairn-process.js';
import { watchLatencyBench } from './watch-latency.js';

const CONCURRENCY = 64;
const N_CREATE = 20_000;
const N_GET = 10_000;
const N_WARMUP = 500;
const WATCHERS = 100;
const WATCH_RATE = 1000;
const WATCH_SECONDS = 5;
const N_LIST = 10_000;
const LIST_RUNS = 5;
const WATCHDOG_MS = 240_000;
const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io';
const GROUP_PATH = '/apis/cairn.dev/v1alpha1';

const instancesPath = (ns: string) => `${GROUP_PATH}/namespaces/${ns}/instances`;
const instance = (ns: string, name: string) => ({
  apiVersion: 'cairn.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name, namespace: ns },
  spec: { cpus: 1, memory: '64Mi', process: { command: ['/bin/true'] } },
});

interface Row {
  figure: string;
  value: string;
  target: string;
  verdict: 'PASS' | 'FAIL' | 'info';
}

let aborted = false;
/** Prints a result line; silent once the run was aborted (the phase in flight then only sees errors). */
const log = (s: string) => void (aborted || console.log(s));
let spawnedAt = 0;
const phase = (s: string) => log(`\n${s}`);
const rate = (r: RunResult) => `${fmt(r.perSecond)}/s (${r.count} in ${fmt(r.seconds, 2)} s, ${latencySummary(r)}${r.errors ? `, ${r.errors} ERRORS, first: ${r.firstError}` : ''})`;

// ---- resources and their cleanup -------------------------------------------
let etcd: ThrowawayEtcd | undefined;
/** Set while etcd starts, so an interrupt in that window still stops it. */
let etcdStarting: Promise<ThrowawayEtcd> | undefined;
let server: CairnProcess | undefined;
let bare: ChildProcess | undefined;
let floor: ApiTarget | undefined;
let raw: Etcd3 | undefined;
let api: ApiTarget | undefined;
let serverDir: string | undefined;
let cleaning: Promise<void> | undefined;

function cleanup(): Promise<void> {
  cleaning ??= (async () => {
    // Let an etcd that is starting finish (main() sees `aborted` and stops there), so it can be stopped.
    etcd ??= await etcdStarting?.catch(() => undefined);
    api?.agent.destroy();
    floor?.agent.destroy();
    try { raw?.close(); } catch { /* already closed */ }
    await server?.stop().catch((e) => console.error('stopping the apiserver:', e));
    if (bare) await stopChild(bare);
    await etcd?.cleanup().catch((e) => console.error('stopping etcd:', e));
    if (serverDir) fs.rmSync(serverDir, { recursive: true, force: true });
  })();
  return cleaning;
}

function abort(why: string, code: number): void {
  if (aborted) return;
  aborted = true;
  console.error(why);
  if (server && code === 1) console.error(`apiserver stderr (tail):\n${server.logs().slice(-4000)}`);
  void cleanup().finally(() => process.exit(code));
}

const watchdog = setTimeout(() => abort(`benchmark exceeded ${WATCHDOG_MS / 1000} s; aborting`, 1), WATCHDOG_MS);
process.once('SIGINT', () => abort('interrupted', 130));
process.once('SIGTERM', () => abort('terminated', 143));

// ---- the run ----------------------------------------------------------------
async function main(): Promise<Row[]> {
  const profIdx = process.argv.indexOf('--cpu-prof');
  const profDir = profIdx > 0 ? path.resolve(process.argv[profIdx + 1] ?? 'cpu-prof') : undefined;
  const workersIdx = process.argv.indexOf('--workers');
  const workers = workersIdx > 0 ? Number(process.argv[workersIdx + 1]) : 1;

  const t0 = performance.now();
  etcdStarting = startThrowawayEtcd();
  etcd = await etcdStarting;
  if (aborted) throw new Error('aborted');
  // Our own data dir, so it is removed even when the server fails to start.
  serverDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-bench-'));
  spawnedAt = performance.now();
  const serverArgs = ['apiserver', '--etcd-endpoints', etcd.endpoint, '--data-dir', serverDir, '--listen', '127.0.0.1', '--port', '0', '--log-level', 'warn', '--workers', String(workers)];
  server = spawnCairn(serverArgs, profDir ? ['--cpu-prof', `--cpu-prof-dir=${profDir}`, '--cpu-prof-interval=500'] : []);
  const url = await server.ready;
  api = targetFromKubeconfig(path.join(serverDir, 'admin.kubeconfig'), CONCURRENCY);
  floor = await startBareServer(etcd.endpoint, serverDir, api);
  const bareTarget = floor;
  raw = new Etcd3({ hosts: etcd.endpoint });
  const t = api;
  const etcd3 = raw;
  const pids = { apiserver: server.child.pid!, etcd: etcd.process.child.pid!, bench: process.pid };
  const createPids = { ...pids, 'bare server': bare!.pid! };
  log(`etcd ${etcd.endpoint} (pid ${pids.etcd}), apiserver ${url} (pid ${pids.apiserver}, ${workers} worker${workers > 1 ? 's' : ''}), ready in ${fmt((performance.now() - t0) / 1000, 1)} s${profDir ? `; CPU profile → ${profDir}` : ''}`);
  log(`apiserver RSS at start: ${fmt(procStatusMiB(pids.apiserver), 1)} MiB`);

  for (const ns of ['bench', 'bench-watch', 'bench-list']) {
    await expectStatus(t, [201], 'POST', `${GROUP_PATH}/clusters`, { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: ns } });
  }

  // Warm-up: TLS connections, JIT, etcd's gRPC channel.
  await runConcurrent(N_WARMUP, CONCURRENCY, async (i) => (await request(t, 'POST', instancesPath('bench'), instance('bench', `warm-${i}`))).status === 201);
  await runConcurrent(N_WARMUP, CONCURRENCY, async (i) => (await request(t, 'GET', `${instancesPath('bench')}/warm-${i}`)).status === 200);
  await runConcurrent(N_WARMUP, CONCURRENCY, async (i) => (await request(bareTarget, 'POST', instancesPath('bench'), instance('bench', `warm-${i}`))).status === 201);
  await runConcurrent(N_WARMUP, CONCURRENCY, async (i) => void (await etcd3.put(`/bench-raw/warm/${i}`).value(JSON.stringify(instance('bench', `warm-${i}`)))));
  await runConcurrent(N_WARMUP, CONCURRENCY, async (i) => (await etcd3.get(`/bench-raw/warm/${i}`).buffer()) !== null);

  // 1. creates: the apiserver first; its 201 bodies (the stored documents) are then put raw.
  phase('[1] creates, concurrency 64');
  const stored: string[] = new Array<string>(N_CREATE);
  let cpu = new CpuMeter(createPids, spawnedAt);
  const apiCreate = await runConcurrent(N_CREATE, CONCURRENCY, async (i) => {
    const r = await request(t, 'POST', instancesPath('bench'), instance('bench', `i-${i}`));
    stored[i] = r.body.toString();
    return r.status === 201;
  });
  log(`  apiserver POST : ${rate(apiCreate)}\n    ${cpu.report()}`);
  cpu = new CpuMeter(createPids, spawnedAt);
  const bareCreate = await runConcurrent(N_CREATE, CONCURRENCY, async (i) => (await request(bareTarget, 'POST', instancesPath('bench'), instance('bench', `i-${i}`))).status === 201);
  log(`  bare server POST: ${rate(bareCreate)}\n    ${cpu.report()}`);
  cpu = new CpuMeter(createPids, spawnedAt);
  const rawPut = await runConcurrent(N_CREATE, CONCURRENCY, async (i) => void (await etcd3.put(`/bench-raw/instances/bench/i-${i}`).value(stored[i]!)));
  log(`  raw etcd3 put  : ${rate(rawPut)}\n    ${cpu.report()}`);
  const createRatio = apiCreate.perSecond / rawPut.perSecond;
  const floorRatio = bareCreate.perSecond / rawPut.perSecond;
  log(`  ratio ${fmt(createRatio, 2)}, bare server ${fmt(floorRatio, 2)} (document ${stored[0]!.length} bytes)`);

  // 2. gets of the same keys: GET by name vs raw gets of the apiserver's own etcd keys.
  phase('[2] gets, concurrency 64');
  const pick = (i: number) => (i * 7919) % N_CREATE;
  cpu = new CpuMeter(pids, spawnedAt);
  const apiGet = await runConcurrent(N_GET, CONCURRENCY, async (i) => (await request(t, 'GET', `${instancesPath('bench')}/i-${pick(i)}`)).status === 200);
  log(`  apiserver GET  : ${rate(apiGet)}\n    ${cpu.report()}`);
  cpu = new CpuMeter(pids, spawnedAt);
  const rawGet = await runConcurrent(N_GET, CONCURRENCY, async (i) => (await etcd3.get(`/registry/cairn.dev/instances/bench/i-${pick(i)}`).buffer()) !== null);
  log(`  raw etcd3 get  : ${rate(rawGet)}\n    ${cpu.report()}`);
  const getRatio = apiGet.perSecond / rawGet.perSecond;
  log(`  ratio ${fmt(getRatio, 2)}`);

  // 3. watch delivery latency.
  phase(`[3] watch latency: ${WATCHERS} watchers, ${WATCH_RATE} creates/s for ${WATCH_SECONDS} s`);
  cpu = new CpuMeter(pids, spawnedAt);
  const w = await watchLatencyBench(t, { namespace: 'bench-watch', watchers: WATCHERS, rate: WATCH_RATE, seconds: WATCH_SECONDS, drainMs: 15_000, body: (name) => instance('bench-watch', name) });
  const wp50 = percentile(w.latencies, 50);
  const wp99 = percentile(w.latencies, 99);
  const ap50 = percentile(w.afterAck, 50);
  const ap99 = percentile(w.afterAck, 99);
  const watchComplete = w.completeWatchers === WATCHERS && w.createErrors === 0 && w.duplicates === 0 && w.brokenStreams === 0;
  log(`  writer: ${w.created} creates in ${fmt(w.writeSeconds, 2)} s (${fmt(w.created / w.writeSeconds)}/s)${w.createErrors ? `, ${w.createErrors} ERRORS, first: ${w.firstCreateError}` : ''}`);
  log(`  deliveries ${w.latencies.length}/${w.created * WATCHERS}: p50 ${fmt(wp50, 1)} ms, p90 ${fmt(percentile(w.latencies, 90), 1)} ms, p99 ${fmt(wp99, 1)} ms, max ${fmt(percentile(w.latencies, 100), 1)} ms`);
  log(`  create latency p50 ${fmt(percentile(w.createLatencies, 50), 1)} ms, p99 ${fmt(percentile(w.createLatencies, 99), 1)} ms; delivery after the 201: p50 ${fmt(percentile(w.afterAck, 50), 1)} ms, p99 ${fmt(percentile(w.afterAck, 99), 1)} ms`);
  log(`  complete watchers ${w.completeWatchers}/${WATCHERS}, missing ${w.missing}, duplicates ${w.duplicates}, broken streams ${w.brokenStreams}; bench event-loop delay p99 ${fmt(w.clientLoopDelayP99, 1)} ms`);
  log(`    ${cpu.report()}`);

  // 4. LIST 10,000 objects, JSON and Table.
  phase(`[4] LIST ${N_LIST} objects`);
  cpu = new CpuMeter(pids, spawnedAt);
  const fill = await runConcurrent(N_LIST, CONCURRENCY, async (i) => (await request(t, 'POST', instancesPath('bench-list'), instance('bench-list', `l-${i}`))).status === 201);
  log(`  filled bench-list: ${rate(fill)}`);
  const timeList = async (accept: string, check: (body: { kind?: string; items?: unknown[]; rows?: unknown[] }) => number) => {
    const times: number[] = [];
    let bytes = 0;
    for (let run = 0; run < LIST_RUNS; run++) {
      const start = performance.now();
      const r = await request(t, 'GET', instancesPath('bench-list'), undefined, { Accept: accept });
      times.push(performance.now() - start);
      if (r.status !== 200) throw new Error(`LIST (${accept}) → ${r.status}: ${r.body.toString().slice(0, 300)}`);
      const n = check(JSON.parse(r.body.toString()));
      if (n !== N_LIST) throw new Error(`LIST (${accept}) returned ${n} items, expected ${N_LIST}`);
      bytes = r.body.length;
    }
    return { times, bytes };
  };
  log(`  fill ${cpu.report()}`);
  cpu = new CpuMeter(pids, spawnedAt);
  const listJson = await timeList('application/json', (b) => (b.kind === 'InstanceList' ? (b.items?.length ?? -1) : -1));
  const listTable = await timeList(TABLE_ACCEPT, (b) => (b.kind === 'Table' ? (b.rows?.length ?? -1) : -1));
  const jsonMs = median(listJson.times);
  const tableMs = median(listTable.times);
  log(`  JSON : median ${fmt(jsonMs)} ms  (runs ${listJson.times.map((x) => fmt(x)).join(', ')} ms; ${fmt(listJson.bytes / 1048576, 1)} MiB)`);
  log(`  Table: median ${fmt(tableMs)} ms  (runs ${listTable.times.map((x) => fmt(x)).join(', ')} ms; ${fmt(listTable.bytes / 1048576, 1)} MiB)`);
  log(`    ${cpu.report()}`);

  // 5. RSS with everything stored (read right after the lists).
  const rss = procStatusMiB(pids.apiserver);
  const hwm = procStatusMiB(pids.apiserver, 'VmHWM');
  const objects = 3 + N_WARMUP + N_CREATE + w.created + N_LIST;
  log(`\n[5] apiserver RSS ${fmt(rss, 1)} MiB (peak ${fmt(hwm, 1)} MiB) with ${objects} objects stored`);

  const ok = (b: boolean) => (b ? 'PASS' : 'FAIL') as Row['verdict'];
  const clean = (r: RunResult) => r.errors === 0;
  return [
    { figure: 'create throughput (apiserver / raw etcd3)', value: `${fmt(createRatio, 2)}× (${fmt(apiCreate.perSecond)}/s vs ${fmt(rawPut.perSecond)}/s)`, target: '≥ 0.65×', verdict: ok(createRatio >= 0.65 && clean(apiCreate) && clean(rawPut)) },
    { figure: `create floor (bare HTTPS server with a watch / raw etcd3${workers > 1 ? `; one process against ${workers} workers` : ''})`, value: `${fmt(floorRatio, 2)}× (${fmt(bareCreate.perSecond)}/s); apiserver / bare ${fmt(apiCreate.perSecond / bareCreate.perSecond, 2)}×`, target: '—', verdict: clean(bareCreate) ? 'info' : 'FAIL' },
    { figure: 'get throughput (apiserver / raw etcd3)', value: `${fmt(getRatio, 2)}× (${fmt(apiGet.perSecond)}/s vs ${fmt(rawGet.perSecond)}/s)`, target: '≥ 0.5×', verdict: ok(getRatio >= 0.5 && clean(apiGet) && clean(rawGet)) },
    { figure: `watch delivery p99, from the write's 201 (${WATCHERS} watchers, ${WATCH_RATE}/s)`, value: `${fmt(ap99, 1)} ms (p50 ${fmt(ap50, 1)} ms)`, target: '≤ 50 ms', verdict: ok(ap99 <= 50) },
    { figure: `watch end-to-end p99, from the write sent (incl. write queueing)`, value: `${fmt(wp99, 1)} ms (p50 ${fmt(wp50, 1)} ms)`, target: '≤ 50 ms', verdict: ok(wp99 <= 50) },
    { figure: 'watch completeness', value: `${w.completeWatchers}/${WATCHERS} watchers got all ${w.created - w.createErrors} events`, target: 'all, once', verdict: ok(watchComplete) },
    { figure: `LIST ${N_LIST} JSON (median of ${LIST_RUNS})`, value: `${fmt(jsonMs)} ms`, target: '≤ 1000 ms', verdict: ok(jsonMs <= 1000) },
    { figure: `LIST ${N_LIST} Table (median of ${LIST_RUNS})`, value: `${fmt(tableMs)} ms`, target: '≤ 1000 ms', verdict: ok(tableMs <= 1000) },
    { figure: `apiserver RSS (${objects} objects)`, value: `${fmt(rss, 1)} MiB (peak ${fmt(hwm, 1)})`, target: '—', verdict: 'info' },
  ];
}

/**
 * Starts bare-server.ts over the same etcd, with the apiserver's serving certificate, so `api`'s CA and
 * token (which it ignores) reach it; the target to send its creates to.
 */
async function startBareServer(endpoint: string, dataDir: string, api: ApiTarget): Promise<ApiTarget> {
  const script = fileURLToPath(new URL('bare-server.js', import.meta.url));
  const pki = path.join(dataDir, 'pki');
  bare = spawn(process.execPath, [script, endpoint, path.join(pki, 'apiserver.crt'), path.join(pki, 'apiserver.key')], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<string>((resolve, reject) => {
    bare!.stdout!.once('data', (d: Buffer) => resolve(d.toString().trim()));
    bare!.once('exit', (code) => reject(new Error(`the bare server exited (${code}) before it listened`)));
    bare!.once('error', reject);
  });
  return { ...api, url: new URL(`https://127.0.0.1:${port}`), agent: new https.Agent({ keepAlive: true, maxSockets: CONCURRENCY, ca: api.ca }) };
}

function printSummary(rows: Row[]): void {
  const widths = [0, 1, 2].map((c) => Math.max(...rows.map((r) => [r.figure, r.value, r.target][c]!.length), ['figure', 'value', 'target'][c]!.length));
  const line = (a: string, b: string, c: string, d: string) => `${a.padEnd(widths[0]!)}  ${b.padEnd(widths[1]!)}  ${c.padEnd(widths[2]!)}  ${d}`;
  log('\nSummary');
  log(line('figure', 'value', 'target', 'result'));
  log(line('-'.repeat(widths[0]!), '-'.repeat(widths[1]!), '-'.repeat(widths[2]!), '------'));
  for (const r of rows) log(line(r.figure, r.value, r.target, r.verdict));
}

const started = performance.now();
main().then(
  async (rows) => {
    printSummary(rows);
    await cleanup();
    clearTimeout(watchdog);
    log(`\ntotal ${fmt((performance.now() - started) / 1000, 1)} s`);
    process.exit(rows.some((r) => r.verdict === 'FAIL') ? 3 : 0);
  },
  (err: unknown) => abort(`benchmark failed: ${err instanceof Error ? err.stack : String(err)}`, 1),
);

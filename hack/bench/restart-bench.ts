/**
 * The restart benchmark (issue 17, defect 1): how long `cairn server`, with
 * its embedded etcd, takes to become ready again over about 50 MiB of
 * objects — 250 Instances of 100 KiB and 5,000 Leases of 5 KiB by default,
 * far past the 4 MiB gRPC message a page of them once had to fit. It times
 * an empty restart first, then fills the store and times each restart from
 * the spawn to the printed URL (the watch cache is full then), to /readyz
 * answering 200, and to a full LIST of the Instances. Prints every round and
 * the medians.
 *
 * Usage: `npm run bench:restart [-- --rounds 3 --instances 250 --leases 5000]`.
 * Target: ready within 30 s, the start-up timeout of the e2e harness (exit 3
 * when missed, 1 when the run fails). The server and its data dir are
 * removed on exit, failure, SIGINT/SIGTERM and watchdog.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { spawnCairn, type CairnProcess } from '../cairn-process.js';
import { expectStatus, fmt, median, numberArg, request, runBenchmark, runConcurrent, targetFromKubeconfig, type ApiTarget } from './lib.js';

const ROUNDS = numberArg('rounds', 3);
const INSTANCES = numberArg('instances', 250);
const LEASES = numberArg('leases', 5000);
const NS = 'restart';
const INSTANCES_PATH = `/apis/cairn.dev/v1alpha1/namespaces/${NS}/instances`;
const LEASES_PATH = `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`;
const TARGET_S = 30;

let dir = '';
let server: CairnProcess | undefined;
let api: ApiTarget | undefined;

const pad = (kib: number) => ({ 'cairn.dev/pad': 'x'.repeat(kib * 1024) });
const instance = (i: number) => ({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name: `big-${i}`, namespace: NS, annotations: pad(100) }, spec: { cpus: 1, memory: '64Mi', process: { command: ['/bin/true'] } } });
const lease = (i: number) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: `lease-${i}`, namespace: NS, annotations: pad(5) }, spec: { holderIdentity: `holder-${i}` } });

/** Starts the server on the bench's data dir and points `api` at it. */
async function start(): Promise<void> {
  server = spawnCairn(['server', '--data-dir', path.join(dir, 'server'), '--port', '0', '--log-level', 'warn', '--no-controller']);
  await server.ready;
  api?.agent.destroy();
  api = targetFromKubeconfig(path.join(dir, 'server', 'admin.kubeconfig'), 16);
}

/** One restart: seconds from the spawn to the URL, to /readyz 200 and to a LIST of all `instances`. */
async function restart(instances: number): Promise<[number, number, number]> {
  await server!.stop();
  const t0 = performance.now();
  const since = () => (performance.now() - t0) / 1000;
  await start();
  const listening = since();
  while ((await request(api!, 'GET', '/readyz')).status !== 200) await new Promise((r) => setTimeout(r, 20));
  const ready = since();
  const list = await expectStatus(api!, [200], 'GET', INSTANCES_PATH);
  const listed = (JSON.parse(list.body.toString()) as { items: unknown[] }).items.length;
  if (listed !== instances) throw new Error(`listed ${listed} Instances after the restart, wrote ${instances}`);
  return [listening, ready, since()];
}

/** Runs the rounds and prints each and the medians; returns the median seconds to ready. */
async function measure(label: string, rounds: number, instances: number): Promise<number> {
  const runs: [number, number, number][] = [];
  for (let i = 0; i < rounds; i++) {
    runs.push(await restart(instances));
    const [l, r, s] = runs.at(-1)!;
    console.log(`  ${label} round ${i + 1}: listening ${fmt(l, 2)} s, /readyz 200 ${fmt(r, 2)} s, full LIST ${fmt(s, 2)} s`);
  }
  const m = (k: number) => fmt(median(runs.map((r) => r[k]!)), 2);
  console.log(`  ${label} median: listening ${m(0)} s, /readyz 200 ${m(1)} s, full LIST ${m(2)} s`);
  return median(runs.map((r) => r[1]));
}

async function main(): Promise<boolean> {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-restart-bench-'));
  await start();
  await expectStatus(api!, [201], 'POST', '/apis/cairn.dev/v1alpha1/clusters', { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: NS } });
  console.log('\nrestart of `cairn server` (embedded etcd, no controller)');
  await measure('empty', 1, 0);

  let bytes = 0;
  const post = async (p: string, obj: object) => {
    const body = JSON.stringify(obj);
    const r = await request(api!, 'POST', p, body);
    bytes += Buffer.byteLength(body);
    return r.status === 201;
  };
  const t0 = performance.now();
  const filled = [await runConcurrent(INSTANCES, 8, (i) => post(INSTANCES_PATH, instance(i))), await runConcurrent(LEASES, 16, (i) => post(LEASES_PATH, lease(i)))];
  const failed = filled.reduce((n, r) => n + r.errors, 0);
  if (failed > 0) throw new Error(`${failed} creates failed: ${filled.find((r) => r.firstError)?.firstError}`);
  console.log(`  wrote ${INSTANCES} Instances of 100 KiB and ${LEASES} Leases of 5 KiB, ${fmt(bytes / 2 ** 20, 1)} MiB, in ${fmt((performance.now() - t0) / 1000, 1)} s`);

  const ready = await measure(`${fmt(bytes / 2 ** 20)} MiB`, ROUNDS, INSTANCES);
  console.log(`  restart → ready over ${fmt(bytes / 2 ** 20)} MiB: median ${fmt(ready, 2)} s  target ≤ ${TARGET_S} s ${ready <= TARGET_S ? 'PASS' : 'FAIL'}`);
  return ready <= TARGET_S;
}

async function cleanup(): Promise<void> {
  api?.agent.destroy();
  await server?.stop().catch(() => undefined);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

runBenchmark(main, cleanup, 15 * 60_000);

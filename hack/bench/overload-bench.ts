/**
 * The overload benchmark (issue 18, item 2): `cairn apiserver` over a
 * throwaway etcd with 2,000 open watches on the Instances of a cluster,
 * bulk writers creating Instances as fast as 64 connections allow, and,
 * over a connection pool of their own as an agent has, a node's lease
 * renewal every 500 ms and a GET every 200 ms. Beside them run a real
 * controller and three real agents of another Cluster, with the default
 * heartbeat (2 s) and node lease (10 s): the controller also has the bulk
 * Instances to reconcile (no node of theirs: Unschedulable), and any Node
 * it marks anything but Ready during the flood is counted. Prints the
 * renewal and GET latencies, the writes/s the bulk clients got, the events
 * delivered, and the Nodes' phases seen.
 *
 * The flood runs twice on fresh servers, side by side: without priority
 * levels (`--max-requests-inflight 0`), then with the default
 * (apiserver/http/priority-levels.ts).
 *
 * Usage: `npm run bench:overload [-- --watchers 2000 --writers 64 --seconds 20]`.
 * Exit status: 0 the renewal p99 ≤ 1 s and no Node left Ready, 3 missed, 1 the run failed.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { stopChild } from '../../apiserver/etcd/process.js';
import { defaultApiServerOptions } from '../../apiserver/options.js';
import { CAIRN_BIN, spawnCairn, type CairnProcess } from '../cairn-process.js';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../etcd.js';
import { startLeaseProbe } from '../fuzz/lease-probe.js';
import { expectStatus, fmt, numberArg, percentile, request, runBenchmark, targetFromKubeconfig, until, type ApiTarget } from './lib.js';

const WATCHERS = numberArg('watchers', 2000);
const WRITERS = numberArg('writers', 64);
const SECONDS = numberArg('seconds', 20);
const NS = 'flood';
/** The Cluster whose agents must stay Ready through the flood. */
const NODES_NS = 'steady';
const NODES = ['node-a', 'node-b', 'node-c'];
const INSTANCES = `/apis/cairn.dev/v1alpha1/namespaces/${NS}/instances`;

let etcd: ThrowawayEtcd | undefined;
let server: CairnProcess | undefined;
const children: ChildProcess[] = [];
let dir: string | undefined;
const targets: ApiTarget[] = [];
const watches: Array<() => void> = [];

/** Opens a watch that reads and counts what it gets; resolves once the server answered. */
function openWatch(t: ApiTarget, agent: https.Agent, delivered: { bytes: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = https.get(new URL(`${INSTANCES}?watch=true`, t.url), { agent, headers: { Authorization: `Bearer ${t.token}` } }, (res) => {
      if (res.statusCode !== 200) return reject(new Error(`watch answered ${res.statusCode}`));
      res.on('data', (c: Buffer) => (delivered.bytes += c.length));
      res.on('error', () => undefined);
      resolve();
    });
    req.on('error', (err) => (watches.length < WATCHERS ? reject(err) : undefined));
    watches.push(() => req.destroy());
  });
}

/** `cairn <args>` as a child with its output dropped, stopped by cleanup(). */
function startChild(args: string[]): void {
  children.push(spawn(process.execPath, [CAIRN_BIN, ...args], { stdio: 'ignore' }));
}

/** The Nodes of NODES_NS with their phases ([] when the GET failed). */
async function steadyNodes(t: ApiTarget): Promise<Array<{ name: string; phase?: string }>> {
  const r = await request(t, 'GET', `/apis/cairn.dev/v1alpha1/namespaces/${NODES_NS}/nodes`);
  if (r.status !== 200) return [];
  return (JSON.parse(r.body.toString()) as { items: Array<{ metadata: { name: string }; status?: { phase?: string } }> }).items.map((n) => ({ name: n.metadata.name, phase: n.status?.phase }));
}

/** Polls the Nodes of NODES_NS every 250 ms until stopped; counts every sample of a Node not Ready. */
function watchNodePhases(t: ApiTarget): { stop: () => Promise<Map<string, number>> } {
  const notReady = new Map<string, number>();
  let running = true;
  const loop = (async () => {
    while (running) {
      for (const n of await steadyNodes(t)) if (n.phase !== 'Ready') notReady.set(`${n.name} ${n.phase}`, (notReady.get(`${n.name} ${n.phase}`) ?? 0) + 1);
      await new Promise((res) => setTimeout(res, 250));
    }
  })();
  return { stop: async () => ((running = false), await loop, notReady) };
}

/** Starts the controller and the agents of NODES_NS; resolves once every Node is Ready. */
async function startSteadyNodes(t: ApiTarget, kubeconfig: string): Promise<void> {
  await expectStatus(t, [201], 'POST', '/apis/cairn.dev/v1alpha1/clusters', { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: NODES_NS } });
  startChild(['controller', '--kubeconfig', kubeconfig, '--metrics-port', '0', '--log-level', 'warn']);
  for (const n of NODES) startChild(['agent', '--kubeconfig', kubeconfig, '--cluster', NODES_NS, '--node-name', n, '--data-dir', path.join(dir!, n), '--monitor-port', '0', '--qemu-accelerator', 'tcg', '--log-level', 'warn']);
  await until(`${NODES.length} Ready Nodes`, 60_000, async () => (await steadyNodes(t)).filter((n) => n.phase === 'Ready').length === NODES.length);
}

async function cleanup(): Promise<void> {
  for (const c of children.splice(0)) await stopChild(c, 5000);
  for (const stop of watches.splice(0)) stop();
  for (const t of targets.splice(0)) t.agent.destroy();
  await server?.stop().catch(() => undefined);
  await etcd?.cleanup().catch(() => undefined);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  server = etcd = dir = undefined;
}

/** What one flood showed. */
interface FloodResult {
  p99: number;
  notReady: string[];
}

/** The same flood twice, on fresh servers: without the workload seat limit, then with its default. */
async function main(): Promise<boolean> {
  const off = await flood('without priority levels (--max-requests-inflight 0)', ['--max-requests-inflight', '0']);
  await cleanup();
  const on = await flood(`with priority levels (the default --max-requests-inflight ${defaultApiServerOptions.maxRequestsInflight})`, []);
  console.log(`
  renewal p99 without / with: ${fmt(off.p99)} / ${fmt(on.p99)} ms; Nodes not Ready: ${off.notReady.length} / ${on.notReady.length}`);
  return on.p99 <= 1000 && on.notReady.length === 0;
}

async function flood(label: string, apiserverArgs: string[]): Promise<FloodResult> {
  etcd = await startThrowawayEtcd();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-overload-bench-'));
  server = spawnCairn(['apiserver', '--etcd-endpoints', etcd.endpoint, '--data-dir', dir, '--port', '0', '--log-level', 'warn', ...apiserverArgs]);
  await server.ready;
  const kubeconfig = path.join(dir, 'admin.kubeconfig');
  const bulk = targetFromKubeconfig(kubeconfig, WRITERS);
  const node = targetFromKubeconfig(kubeconfig, 4); // the agent's own pool, as NodeFence has
  targets.push(bulk, node);
  await expectStatus(bulk, [201], 'POST', '/apis/cairn.dev/v1alpha1/clusters', { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: NS } });
  const watchAgent = new https.Agent({ keepAlive: true, maxSockets: WATCHERS + 10, ca: bulk.ca });
  await startSteadyNodes(node, kubeconfig);
  const delivered = { bytes: 0 };
  for (let i = 0; i < WATCHERS; i += 100) await Promise.all(Array.from({ length: Math.min(100, WATCHERS - i) }, () => openWatch(bulk, watchAgent, delivered)));
  console.log(`\n${label}: ${WATCHERS} watches open on ${INSTANCES}; ${WRITERS} bulk writers for ${SECONDS} s, a lease renewal every 500 ms and a GET every 200 ms on a pool of their own`);
  const probe = await startLeaseProbe(node, NS, 'node-probe', 500);
  const phases = watchNodePhases(node);
  const gets: number[] = [];
  let writes = 0;
  let failures = 0;
  const until = performance.now() + SECONDS * 1000;
  const getter = (async () => {
    while (performance.now() < until) {
      const t0 = performance.now();
      const r = await request(node, 'GET', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/node-probe`);
      gets.push(r.status === 200 ? performance.now() - t0 : Infinity);
      await new Promise((res) => setTimeout(res, 200));
    }
  })();
  const writers = Array.from({ length: WRITERS }, async (_, w) => {
    for (let i = 0; performance.now() < until; i++) {
      const body = { apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name: `w${w}-${i}` }, spec: { cpus: 1, memory: '16Mi', process: { command: ['/bin/true'] } } };
      if ((await request(bulk, 'POST', INSTANCES, body)).status === 201) writes++;
      else failures++;
    }
  });
  await Promise.all([...writers, getter]);
  const renewals = await probe.stop();
  await new Promise((res) => setTimeout(res, 10_000)); // a lease that lapsed in the flood is called expired only a lease duration later
  const notReady = await phases.stop();
  const p99 = percentile(renewals, 99);
  console.log(`  lease renewals: ${renewals.length}, p50 ${fmt(percentile(renewals, 50))} ms, p99 ${fmt(p99)} ms, max ${fmt(Math.max(...renewals))} ms (target p99 ≤ 1000 ms)`);
  console.log(`  GETs on the same pool: ${gets.length}, p50 ${fmt(percentile(gets, 50))} ms, p99 ${fmt(percentile(gets, 99))} ms`);
  console.log(`  bulk writes: ${writes} in ${SECONDS} s (${fmt(writes / SECONDS)}/s), ${failures} refused or failed`);
  console.log(`  watch bytes delivered: ${fmt(delivered.bytes / 1024 / 1024, 1)} MiB`);
  const health = await request(node, 'GET', '/readyz');
  console.log(`  /readyz after the flood: ${health.status}`);
  const left = [...notReady].map(([phase, samples]) => `${phase} (${samples} samples)`);
  console.log(`  Nodes of the ${NODES.length} real agents (controller running) not Ready, sampled every 250 ms through the flood and 10 s after: ${left.length ? left.join(', ') : 'none'} (target none)`);
  return { p99, notReady: left };
}

runBenchmark(main, cleanup, 10 * 60_000);

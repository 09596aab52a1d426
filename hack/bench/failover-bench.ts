/**
 * The failover benchmark (docs/fencing.md): `cairn server` with its
 * controller over its own etcd, three `cairn agent` processes with their
 * default lease timings, and a Cluster with the default failure detection
 * (heartbeat 2 s, node lease 10 s, grace 0). Each round runs one process
 * instance, then kills the machine it runs on — its agent and the
 * instance's processes, SIGKILL — and times how long until the instance is
 * Running on another node; then brings the machine back for the next
 * round. Prints every round and the median, min and max.
 *
 * Usage: `npm run bench:failover [-- --rounds 5]`. Target: median ≤ 15 s
 * (exit 3 when missed, 1 when the run fails). Every process it starts,
 * instances included, is stopped on exit, failure, SIGINT/SIGTERM and
 * watchdog.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { stopChild } from '../../apiserver/etcd/process.js';
import { CAIRN_BIN, spawnCairn, type CairnProcess } from '../cairn-process.js';
import { expectStatus, fmt, killMarked, markedPids, median, numberArg, request, runBenchmark, targetFromKubeconfig, type ApiTarget } from './lib.js';

const ROUNDS = numberArg('rounds', 5);
const NS = 'bench';
const NODES = ['node-a', 'node-b', 'node-c'];
const GROUP_PATH = '/apis/cairn.dev/v1alpha1';
const MARKER = `cairn-failover-bench-${process.pid}`;
const TARGET_S = 15;

let server: CairnProcess | undefined;
let dir: string | undefined;
let api: ApiTarget | undefined;
const agents = new Map<string, ChildProcess>();

function startAgent(kubeconfig: string, node: string): void {
  // No timing flags: the agent's defaults are what is measured.
  const child = spawn(process.execPath, [CAIRN_BIN, 'agent', '--kubeconfig', kubeconfig, '--cluster', NS, '--node-name', node, '--data-dir', path.join(dir!, node), '--monitor-port', '0', '--qemu-accelerator', 'tcg', '--log-level', 'warn'], { stdio: ['ignore', 'ignore', 'inherit'] });
  agents.set(node, child);
}

async function cleanup(): Promise<void> {
  api?.agent.destroy();
  for (const a of agents.values()) await stopChild(a, 5000).catch(() => undefined);
  killMarked(MARKER);
  await server?.stop().catch(() => undefined);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined>, everyMs = 50): Promise<T> {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    const v = await probe();
    if (v !== undefined) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`${what} did not happen within ${timeoutMs / 1000} s`);
}

async function get<T>(t: ApiTarget, p: string): Promise<T | undefined> {
  const r = await request(t, 'GET', p);
  return r.status === 200 ? (JSON.parse(r.body.toString()) as T) : undefined;
}

type Named = { metadata: { name: string }; status?: { phase?: string; nodeName?: string } };

async function runningNode(t: ApiTarget, name: string): Promise<string | undefined> {
  const i = await get<Named>(t, `${GROUP_PATH}/namespaces/${NS}/instances/${name}`);
  return i?.status?.phase === 'Running' ? i.status.nodeName : undefined;
}

async function readyNodes(t: ApiTarget): Promise<number> {
  const list = await get<{ items: Named[] }>(t, `${GROUP_PATH}/namespaces/${NS}/nodes`);
  return list?.items.filter((n) => n.status?.phase === 'Ready').length ?? 0;
}

/** One round: returns seconds from the kill until the instance runs elsewhere. */
async function round(t: ApiTarget, kubeconfig: string, i: number): Promise<number> {
  const name = `victim-${i}`;
  const marker = `${MARKER}/${name}`;
  const command = ['sh', '-c', `while true; do sleep 0.5; done # ${marker}`];
  await expectStatus(t, [201], 'POST', `${GROUP_PATH}/namespaces/${NS}/instances`, { apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name, namespace: NS }, spec: { memory: '16Mi', terminationGracePeriodSeconds: 1, process: { command } } });
  const lost = await until(`${name} Running`, 60_000, () => runningNode(t, name));
  await until(`${name} started`, 10_000, async () => (markedPids(marker).length > 0 ? true : undefined));
  agents.get(lost)!.kill('SIGKILL');
  killMarked(marker);
  const killedAt = performance.now();
  const moved = await until(`${name} Running elsewhere`, 120_000, async () => {
    const n = await runningNode(t, name);
    return n && n !== lost ? n : undefined;
  });
  const seconds = (performance.now() - killedAt) / 1000;
  console.log(`  round ${i + 1}: ${name} on ${lost} killed → Running on ${moved} after ${fmt(seconds, 1)} s`);
  startAgent(kubeconfig, lost);
  await until('three Ready nodes', 60_000, async () => ((await readyNodes(t)) === 3 ? true : undefined), 200);
  await expectStatus(t, [200, 202], 'DELETE', `${GROUP_PATH}/namespaces/${NS}/instances/${name}`);
  return seconds;
}

async function main(): Promise<boolean> {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-failover-bench-'));
  server = spawnCairn(['server', '--data-dir', path.join(dir, 'server'), '--port', '0', '--log-level', 'warn']);
  await server.ready;
  const kubeconfig = path.join(dir, 'server', 'admin.kubeconfig');
  const t = (api = targetFromKubeconfig(kubeconfig, 16));
  await expectStatus(t, [201], 'POST', `${GROUP_PATH}/clusters`, { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: NS } });
  for (const n of NODES) startAgent(kubeconfig, n);
  await until('three Ready nodes', 60_000, async () => ((await readyNodes(t)) === 3 ? true : undefined), 200);
  console.log(`\nfailover with the default failure detection (heartbeat 2 s, node lease 10 s, grace 0), ${ROUNDS} rounds`);
  const seconds: number[] = [];
  for (let i = 0; i < ROUNDS; i++) seconds.push(await round(t, kubeconfig, i));
  const m = median(seconds);
  console.log(`  node death → Running elsewhere: median ${fmt(m, 1)} s (min ${fmt(Math.min(...seconds), 1)}, max ${fmt(Math.max(...seconds), 1)})  target ≤ ${TARGET_S} s ${m <= TARGET_S ? 'PASS' : 'FAIL'}`);
  return m <= TARGET_S;
}

runBenchmark(main, cleanup, 30 * 60_000);

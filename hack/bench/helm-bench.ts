/**
 * The Helm benchmark (issue 15): `cairn server` with its controller and
 * three agents; the example chart charts/cairn-app with 100 process
 * Instances, installed with the real `helm install` against `kubectl apply`
 * of the same manifests (`helm template`), side by side in one run. Each
 * round times from the command's start until every Instance is Running,
 * then removes them (`helm uninstall` / `kubectl delete`) and waits until
 * their processes are gone. Rounds alternate the two, so neither always
 * runs on a warmer system; the medians and their ratio are printed.
 *
 * Usage: `npm run bench:helm [-- --instances 100 --rounds 2]`. Exit status:
 * 0 done, 1 the run failed. Every process it starts, instances included,
 * is stopped on exit, failure, SIGINT/SIGTERM and watchdog.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { packagePath } from '../../api/package-files.js';
import { stopChild } from '../../apiserver/etcd/process.js';
import { CAIRN_BIN, spawnCairn, type CairnProcess } from '../cairn-process.js';
import { HELM_BIN } from '../helm.js';
import { expectStatus, fmt, killMarked, markedPids, median, numberArg, request, runBenchmark, targetFromKubeconfig, type ApiTarget, until } from './lib.js';

const N = numberArg('instances', 100);
const ROUNDS = numberArg('rounds', 2);
const NS = 'bench';
const NODES = ['node-a', 'node-b', 'node-c'];
const GROUP_PATH = '/apis/cairn.dev/v1alpha1';
const CHART = packagePath('charts', 'cairn-app');
// In every instance's command line, so the benchmark finds (and kills) exactly its own processes.
const MARKER = `helm-bench-${process.pid}`;

let server: CairnProcess | undefined;
let dir: string | undefined;
let api: ApiTarget | undefined;
const agents: ChildProcess[] = [];

function run(program: string, args: string[], env: NodeJS.ProcessEnv, stdin?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(program, args, { env, stdio: ['pipe', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(out) : reject(new Error(`${path.basename(program)} ${args.join(' ')} exited ${code}: ${err}`))));
    child.stdin.end(stdin ?? '');
  });
}

async function phases(t: ApiTarget): Promise<string[]> {
  const r = await request(t, 'GET', `${GROUP_PATH}/namespaces/${NS}/instances`);
  if (r.status !== 200) return [];
  return (JSON.parse(r.body.toString()) as { items: { status?: { phase?: string } }[] }).items.map((i) => i.status?.phase ?? '');
}

async function allRunning(t: ApiTarget): Promise<boolean> {
  const p = await phases(t);
  return p.length === N && p.every((x) => x === 'Running');
}

/** One way of deploying: seconds from its command's start until all N are Running; then it is undone. */
async function round(t: ApiTarget, env: NodeJS.ProcessEnv, how: 'helm' | 'kubectl'): Promise<number> {
  const values = ['--set', `replicas=${N}`, '--set', 'volume.enabled=false', '--set', `greeting=${MARKER}`, '--set', 'memory=16Mi'];
  const t0 = performance.now();
  if (how === 'helm') await run(HELM_BIN, ['install', 'bench', CHART, '-n', NS, ...values], env);
  else await run('kubectl', ['apply', '-n', NS, '-f', '-'], env, await run(HELM_BIN, ['template', 'bench', CHART, '-n', NS, ...values], env));
  await until(`${N} Running`, 300_000, () => allRunning(t));
  const seconds = (performance.now() - t0) / 1000;
  if (how === 'helm') await run(HELM_BIN, ['uninstall', 'bench', '-n', NS], env);
  else await run('kubectl', ['delete', 'instances', '-n', NS, '--all', '--wait=false'], env);
  await until('every instance gone', 300_000, async () => (await phases(t)).length === 0 && markedPids(MARKER).length === 0);
  return seconds;
}

async function cleanup(): Promise<void> {
  api?.agent.destroy();
  for (const a of agents) await stopChild(a, 5000).catch(() => undefined);
  killMarked(MARKER);
  await server?.stop().catch(() => undefined);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}

async function main(): Promise<boolean> {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-helm-bench-'));
  server = spawnCairn(['server', '--data-dir', path.join(dir, 'server'), '--port', '0', '--log-level', 'warn']);
  await server.ready;
  const kubeconfig = path.join(dir, 'server', 'admin.kubeconfig');
  const env = { ...process.env, KUBECONFIG: kubeconfig, HELM_CACHE_HOME: path.join(dir, 'helm'), HELM_CONFIG_HOME: path.join(dir, 'helm'), HELM_DATA_HOME: path.join(dir, 'helm') };
  const t = (api = targetFromKubeconfig(kubeconfig, 16));
  await expectStatus(t, [201], 'POST', `${GROUP_PATH}/clusters`, { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: NS } });
  for (const node of NODES) {
    const args = ['agent', '--kubeconfig', kubeconfig, '--cluster', NS, '--node-name', node, '--data-dir', path.join(dir, node), '--cpus', '64', '--memory', '8Gi', '--monitor-port', '0', '--log-level', 'error'];
    agents.push(spawn(process.execPath, [CAIRN_BIN, ...args], { stdio: ['ignore', 'ignore', 'inherit'] }));
  }
  await until('three Ready nodes', 60_000, async () => {
    const r = await request(t, 'GET', `${GROUP_PATH}/namespaces/${NS}/nodes`);
    return r.status === 200 && (JSON.parse(r.body.toString()) as { items: { status?: { phase?: string } }[] }).items.filter((n) => n.status?.phase === 'Ready').length === NODES.length;
  });
  console.log(`\n${N} process Instances of charts/cairn-app on 3 agents: helm install against kubectl apply of the same manifests, ${ROUNDS} rounds each, alternating`);
  const times: Record<'helm' | 'kubectl', number[]> = { helm: [], kubectl: [] };
  for (let i = 0; i < ROUNDS; i++) {
    for (const how of i % 2 === 0 ? (['kubectl', 'helm'] as const) : (['helm', 'kubectl'] as const)) {
      const s = await round(t, env, how);
      times[how].push(s);
      console.log(`  round ${i + 1}: ${how === 'helm' ? 'helm install ' : 'kubectl apply'} → all ${N} Running in ${fmt(s, 1)} s`);
    }
  }
  const helm = median(times.helm);
  const kubectl = median(times.kubectl);
  console.log(`  median: helm install ${fmt(helm, 1)} s, kubectl apply ${fmt(kubectl, 1)} s; helm / kubectl = ${fmt(helm / kubectl, 2)}×`);
  return true;
}

runBenchmark(main, cleanup, 30 * 60_000);

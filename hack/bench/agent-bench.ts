/**
 * The agent benchmark (issue 4, "Benchmark"): one `cairn agent` process,
 * 500 WorkItems for `process` instances running a tiny real program
 * (`sleep`), created at once through a real `cairn apiserver` over a fresh
 * throwaway etcd. Measures seconds until all are Done, operations/s, agent
 * RSS and CPU while starting them, the agent's idle CPU with all 500
 * running (one node lease renewed, whatever the number of instances;
 * measured from 5 s after the last is Done, as the agent is still busy
 * with the last of them for a few seconds), the
 * CPU of the 500 shims' fencing watchdogs, and seconds to stop them all
 * again (delete → finalizers gone). Targets: all Running ≤ 15 s, idle CPU
 * ≤ 2 %.
 *
 * Usage: `npm run bench:agent [-- --instances 500 --idle-seconds 30 --settle-seconds 5]`.
 * Exit status: 0 targets met, 3 a target missed, 1 the run failed. Every
 * process it starts — including the 500 detached instances — is stopped on
 * exit, failure, SIGINT/SIGTERM and watchdog.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { stopChild } from '../../apiserver/etcd/process.js';
import { CAIRN_BIN, spawnCairn, type CairnProcess } from '../cairn-process.js';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../etcd.js';
import { expectStatus, fmt, numberArg, processTree, request, runBenchmark, runConcurrent, targetFromKubeconfig, type ApiTarget } from './lib.js';

const N = numberArg('instances', 500);
const IDLE_SECONDS = numberArg('idle-seconds', 30);
// The agent is busy with the last WorkItems for a few seconds after they are Done: that is not idle.
const SETTLE_SECONDS = numberArg('settle-seconds', 5);
const CLUSTER = 'bench';
const NODE = 'bench-node';
const GROUP_PATH = '/apis/cairn.dev/v1alpha1';
const WI_PATH = `${GROUP_PATH}/namespaces/${CLUSTER}/workitems`;
const WATCHDOG_MS = 300_000;

let etcd: ThrowawayEtcd | undefined;
let server: CairnProcess | undefined;
let agent: ChildProcess | undefined;
let dir: string | undefined;
let api: ApiTarget | undefined;

/** Kills every instance process group the agent left under its data dir. */
function killInstances(dataDir: string): number {
  const root = path.join(dataDir, 'instances', CLUSTER);
  if (!fs.existsSync(root)) return 0;
  let killed = 0;
  for (const name of fs.readdirSync(root)) {
    try {
      const { pid } = JSON.parse(fs.readFileSync(path.join(root, name, 'state.json'), 'utf8')) as { pid: number };
      process.kill(-pid, 'SIGKILL');
      killed++;
    } catch {
      // already gone
    }
  }
  return killed;
}

/** The agent process and its operation workers (kept warm; the instances' shims are their children too, but are not the agent). */
function agentProcesses(pid: number): number[] {
  return processTree(pid).filter((p) => p === pid || readProc(p, 'cmdline').includes('operations/worker.js'));
}

function readProc(pid: number, file: string): string {
  try {
    return fs.readFileSync(`/proc/${pid}/${file}`, 'utf8');
  } catch {
    return ''; // ended meanwhile
  }
}

/** CPU seconds (user + system) of the agent and its workers. */
function agentCpuSeconds(pid: number): number {
  return agentProcesses(pid).reduce((sum, p) => {
    const stat = readProc(p, 'stat');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return stat ? sum + (Number(f[11]) + Number(f[12])) / 100 : sum;
  }, 0);
}

/** RSS in MiB of the agent and its workers. */
function agentRssMiB(pid: number): number {
  return agentProcesses(pid).reduce((sum, p) => sum + Number(/^VmRSS:\s+(\d+) kB/m.exec(readProc(p, 'status'))?.[1] ?? 0) / 1024, 0);
}

async function cleanup(): Promise<void> {
  api?.agent.destroy();
  if (agent) await stopChild(agent, 5000).catch(() => undefined);
  if (dir) killInstances(path.join(dir, 'agent'));
  await server?.stop().catch(() => undefined);
  await etcd?.cleanup().catch(() => undefined);
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}


function workItem(i: number) {
  return {
    apiVersion: 'cairn.dev/v1alpha1',
    kind: 'WorkItem',
    metadata: { name: `sleep-${i}.${NODE}`, namespace: CLUSTER, finalizers: ['cairn.dev/agent'] },
    spec: {
      nodeName: NODE,
      type: 'InstanceRuntime',
      owner: { kind: 'Instance', name: `sleep-${i}` },
      instance: { driver: 'process', runState: 'Running', cpus: 1, memory: '16Mi', process: { command: ['sleep', '100000'] } },
    },
  };
}

const failureReasons = new Map<string, string>();

/** Phases of the WorkItems; remembers every failure seen (the agent retries them, so they are transient unless the run times out). */
async function countPhases(t: ApiTarget): Promise<{ done: number; total: number }> {
  const r = await request(t, 'GET', WI_PATH);
  const items = (JSON.parse(r.body.toString()) as { items: Array<{ metadata: { name: string }; status?: { phase?: string; lastError?: { reason: string; message: string } } }> }).items;
  for (const w of items) if (w.status?.phase === 'Failed') failureReasons.set(w.metadata.name, `${w.status.lastError?.reason}: ${w.status.lastError?.message}`);
  return { done: items.filter((w) => w.status?.phase === 'Done').length, total: items.length };
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<number> {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    if (await check()) return (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 1000));
  }
  throw new Error(`${what} did not happen within ${timeoutMs / 1000} s`);
}

async function main(): Promise<boolean> {
  etcd = await startThrowawayEtcd();
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-agent-bench-'));
  server = spawnCairn(['apiserver', '--etcd-endpoints', etcd.endpoint, '--data-dir', dir, '--port', '0', '--log-level', 'warn']);
  await server.ready;
  const kubeconfig = path.join(dir, 'admin.kubeconfig');
  const t = (api = targetFromKubeconfig(kubeconfig, 64));
  await expectStatus(t, [201], 'POST', `${GROUP_PATH}/clusters`, { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: CLUSTER } });
  agent = spawn(process.execPath, [...(process.env.AGENT_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.AGENT_CPU_PROF}`] : []), CAIRN_BIN, 'agent', '--kubeconfig', kubeconfig, '--cluster', CLUSTER, '--node-name', NODE, '--data-dir', path.join(dir, 'agent'), '--monitor-port', '0', '--log-level', process.env.AGENT_LOG_LEVEL ?? 'warn'], { stdio: ['ignore', 'ignore', 'inherit'] });
  await until('node registration', 30_000, async () => (await request(t, 'GET', `${GROUP_PATH}/namespaces/${CLUSTER}/nodes/${NODE}`)).status === 200);
  const pid = agent.pid!;
  const cpu0 = agentCpuSeconds(pid);
  const t0 = performance.now();
  const created = await runConcurrent(N, 32, async (i) => (await request(t, 'POST', WI_PATH, workItem(i))).status === 201);
  if (created.errors) throw new Error(`creating WorkItems: ${created.firstError}`);
  let peakRss = 0;
  await until(`${N} WorkItems Done`, 120_000, async () => {
    peakRss = Math.max(peakRss, agentRssMiB(pid));
    const p = await countPhases(t);
    return p.done === N;
  });
  const startSeconds = (performance.now() - t0) / 1000;
  const startCpu = agentCpuSeconds(pid) - cpu0;
  await new Promise((r) => setTimeout(r, SETTLE_SECONDS * 1000));
  const idle0 = agentCpuSeconds(pid);
  const shimsDir = path.join(dir, 'agent', 'instances');
  const shims0 = shimCpuSeconds(shimsDir);
  await new Promise((r) => setTimeout(r, IDLE_SECONDS * 1000));
  const idleCpuPercent = (100 * (agentCpuSeconds(pid) - idle0)) / IDLE_SECONDS;
  const shimsCpuPercent = (100 * (shimCpuSeconds(shimsDir) - shims0)) / IDLE_SECONDS;
  const idleRss = agentRssMiB(pid);
  const d0 = performance.now();
  await runConcurrent(N, 32, async (i) => (await request(t, 'DELETE', `${WI_PATH}/sleep-${i}.${NODE}`)).status < 300);
  await until(`${N} WorkItems stopped and gone`, 120_000, async () => (await countPhases(t)).total === 0);
  const stopSeconds = (performance.now() - d0) / 1000;
  const rows: Array<[string, string, string, boolean | undefined]> = [
    [`seconds until all ${N} Done (running)`, fmt(startSeconds, 1), '≤ 15', startSeconds <= 15],
    ['operations/s (start)', fmt(N / startSeconds, 1), '', undefined],
    ['agent CPU while starting (s, % of one core, with its workers)', `${fmt(startCpu, 1)} (${fmt((100 * startCpu) / startSeconds)} %)`, '', undefined],
    ['agent RSS peak while starting (MiB, with its workers)', fmt(peakRss), '', undefined],
    [`agent idle CPU with ${N} running (${IDLE_SECONDS} s, from ${SETTLE_SECONDS} s after)`, `${fmt(idleCpuPercent, 2)} %`, '≤ 2 %', idleCpuPercent <= 2],
    ['agent RSS idle (MiB, with its warm workers)', fmt(idleRss), '', undefined],
    [`${N} shims' fencing watchdogs, idle CPU`, `${fmt(shimsCpuPercent, 2)} %`, '', undefined],
    [`seconds to stop and remove all ${N}`, fmt(stopSeconds, 1), '', undefined],
  ];
  console.log(`\none agent, ${N} process instances (sleep)`);
  if (failureReasons.size) console.log(`  ${failureReasons.size} WorkItems failed at least once and were retried; e.g. ${[...failureReasons.values()][0]}`);
  for (const [figure, value, target, ok] of rows) console.log(`  ${figure.padEnd(58)} ${value.padStart(12)}  ${target.padEnd(6)} ${ok === undefined ? '' : ok ? 'PASS' : 'FAIL'}`);
  return rows.every(([, , , ok]) => ok !== false);
}

/**
 * CPU seconds of the instances' shims and their fencing watchdogs (processes whose command line names
 * the instances dir), including the date and sleep children they reaped.
 */
function shimCpuSeconds(instancesDir: string): number {
  let sum = 0;
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (!fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(instancesDir)) continue;
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      sum += (Number(f[11]) + Number(f[12]) + Number(f[13]) + Number(f[14])) / 100;
    } catch {
      // exited meanwhile
    }
  }
  return sum;
}

runBenchmark(main, cleanup, WATCHDOG_MS);

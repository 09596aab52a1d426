/**
 * `cairn agent` as a real child process for end-to-end tests: started with
 * short heartbeat and lease timings, its monitor on a free port, and
 * handles to SIGTERM, SIGKILL, SIGSTOP and SIGCONT it. Also /proc helpers
 * to find, count and kill the (detached) instance processes an agent
 * starts, so after() hooks leave nothing running.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { CAIRN_BIN } from '../../hack/cairn-process.js';
import { isLive, readProcStat, type ProcStat } from '../../agent/drivers/process/proc.js';

/** How to start an agent. */
export interface AgentProcessOptions {
  /** The kubeconfig to run with; or, with `join`, none. */
  kubeconfig?: string;
  /** Overrides the kubeconfig's server URL (e.g. a proxy in front of the apiserver). */
  server?: string;
  /** Authenticate as the node: a join token (or none, once the data dir holds a credential), the server and its CA. */
  join?: { server: string; caFile: string; token?: string };
  cluster: string;
  nodeName: string;
  dataDir: string;
  heartbeatInterval?: string;
  leaseDuration?: string;
  shutdownGrace?: string;
  extraArgs?: string[];
  /** Prefixes the command (`nsenter --net=…` runs the agent on a chaos test host). */
  launcher?: string[];
  /** The agent's environment (default this process's); its instances inherit it. */
  env?: NodeJS.ProcessEnv;
}

/** A running agent process. */
export interface AgentProcess {
  child: ChildProcess;
  pid: number;
  /** http://127.0.0.1:<port> of /status, /metrics, /healthz, /readyz. */
  monitorUrl: string;
  /** Everything written to stderr (JSON log lines). */
  logs(): string;
  /** Resolves once the process has exited. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGTERM and wait for the exit (SIGKILL after `killAfterMs`). */
  stop(killAfterMs?: number): Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** SIGKILL and wait. */
  kill9(): Promise<void>;
}

/** Starts `cairn agent` and resolves once it printed its monitor URL. */
export async function startAgentProcess(o: AgentProcessOptions): Promise<AgentProcess> {
  const args = [
    CAIRN_BIN, 'agent',
    ...(o.kubeconfig ? ['--kubeconfig', o.kubeconfig] : []),
    ...(o.server ? ['--server', o.server] : []),
    ...(o.join ? ['--server', o.join.server, '--certificate-authority', o.join.caFile, ...(o.join.token ? ['--join-token', o.join.token] : [])] : []),
    '--cluster', o.cluster,
    '--node-name', o.nodeName,
    '--data-dir', o.dataDir,
    '--monitor-port', '0',
    '--heartbeat-interval', o.heartbeatInterval ?? '1s',
    // The node lease is the fence (docs/fencing.md): the default 10 s leaves a 6 s window, room for an agent
    // restart on a loaded CI machine without fencing the instances it re-adopts.
    '--lease-duration', o.leaseDuration ?? '10s',
    '--shutdown-grace', o.shutdownGrace ?? '2s',
    // The KVM probe costs seconds on machines where KVM stalls; tests that check it pass --qemu-accelerator auto.
    '--qemu-accelerator', 'tcg',
    ...(o.extraArgs ?? []),
  ];
  const [cmd, ...pre] = [...(o.launcher ?? []), process.execPath];
  const child = spawn(cmd!, [...pre, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: o.env ?? process.env });
  let stderr = '';
  let stdout = '';
  child.stderr!.on('data', (d) => (stderr += d));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
  const monitorUrl = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`cairn agent did not start in 30 s:\n${stdout}\n${stderr}`)), 30_000);
    child.stdout!.on('data', (d) => {
      stdout += d;
      const m = /status at (http:\/\/\S+)\/status/.exec(stdout);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    });
    void exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(new Error(`cairn agent exited (${code ?? signal}) before it started:\n${stderr}`));
    });
  }).catch(async (err: unknown) => {
    child.kill('SIGKILL');
    await exited;
    throw err;
  });
  const gone = () => child.exitCode !== null || child.signalCode !== null;
  return {
    child,
    pid: child.pid!,
    monitorUrl,
    logs: () => stderr,
    exited,
    async stop(killAfterMs = 10_000) {
      if (!gone()) {
        const killer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        child.kill('SIGTERM');
        const r = await exited;
        clearTimeout(killer);
        return r;
      }
      return exited;
    },
    async kill9() {
      if (!gone()) child.kill('SIGKILL');
      await exited;
    },
  };
}

/** GET a JSON document of the agent's monitor. */
export async function monitorJson<T = any>(agent: Pick<AgentProcess, 'monitorUrl'>, path: string): Promise<T> {
  const res = await fetch(`${agent.monitorUrl}${path}`);
  if (!res.ok) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** GET a text document of the agent's monitor. */
export async function monitorText(agent: Pick<AgentProcess, 'monitorUrl'>, path: string): Promise<{ status: number; text: string }> {
  const res = await fetch(`${agent.monitorUrl}${path}`);
  return { status: res.status, text: await res.text() };
}

/** Whether `pid` is a live (non-zombie) process. */
export function alive(pid: number | undefined): boolean {
  return pid !== undefined && isLive(readProcStat(pid));
}

/** The command line of `pid`, arguments joined by spaces ('' when it is gone). */
export function cmdline(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

/** Live processes whose command line contains `marker`. */
export function processesWith(marker: string): ProcStat[] {
  const found: ProcStat[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    const pid = Number(e);
    if (pid === process.pid || !cmdline(pid).includes(marker)) continue;
    let stat: ProcStat | undefined;
    try {
      stat = readProcStat(pid);
    } catch {
      stat = undefined;
    }
    if (isLive(stat)) found.push(stat);
  }
  return found;
}

/** Distinct sessions of the live processes carrying `marker`: one per running copy of an instance. */
export function copiesOf(marker: string): number[] {
  return [...new Set(processesWith(marker).map((s) => s.session))];
}

/** Live members of process group `pgid`. */
export function groupMembers(pgid: number): number[] {
  const members: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    let stat: ProcStat | undefined;
    try {
      stat = readProcStat(Number(e));
    } catch {
      stat = undefined;
    }
    if (isLive(stat) && stat.pgrp === pgid) members.push(stat.pid);
  }
  return members;
}

/** SIGKILLs a process group, ignoring one that is gone. */
export function killGroup(pgid: number | undefined): void {
  if (!pgid || pgid <= 1) return;
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    // already gone
  }
}

/** SIGKILLs every process group that has a live process carrying `marker` (the instances of one test file), never the test runner's own. */
export function killMarked(marker: string): void {
  const own = readProcStat(process.pid)?.pgrp;
  for (const s of processesWith(marker)) {
    if (s.pgrp !== own) killGroup(s.pgrp);
    try {
      process.kill(s.pid, 'SIGKILL');
    } catch {
      // already gone
    }
  }
}

/**
 * Real `cairn controller` processes for the end-to-end controller tests:
 * spawn one with short leader-election timings, read its JSON log lines,
 * its /metrics, and the leader Lease; plus the test cluster's objects.
 * Every process spawned here is tracked so an after hook can SIGKILL
 * whatever a failing test left behind.
 */
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { CairnClient } from '../../../api/client/cairn-client.js';
import { isNotFound } from '../../../api/client/errors.js';
import { loadKubeConfig, type PooledKubeConfig } from '../../../api/client/kubeconfig.js';
import type { Instance } from '../../../api/instance.js';
import { CONTROLLER_LEASE_NAME, SYSTEM_NAMESPACE } from '../../../api/names.js';
import type { Volume } from '../../../api/volume.js';
import { spawnCairn } from '../../../hack/cairn-process.js';
import { eventually, sleep } from '../../support/eventually.js';

/** Leader-election timings every controller of these tests runs with. */
export const TIMINGS = { leaseDurationMs: 3000, renewDeadlineMs: 2000, retryPeriodMs: 500 };

/** One parsed JSON log line of a controller. */
export interface LogLine {
  level: string;
  message: string;
  timestamp?: string;
  [field: string]: unknown;
}

/** A `cairn controller` child process. */
export interface ControllerProcess {
  identity: string;
  child: ChildProcess;
  /** Wall-clock ms when it was spawned. */
  spawnedAt: number;
  /** Parsed JSON log lines so far (non-JSON lines are kept as level "raw"). */
  lines(): LogLine[];
  /** Raw stderr so far. */
  logs(): string;
  /** The first line whose message starts with `message`, once it has been logged. */
  waitFor(message: string, timeoutMs?: number): Promise<LogLine>;
  /** The /healthz, /readyz, /metrics base URL (after "controller started"). */
  healthUrl(): Promise<string>;
  /** cairn_leader_is_leader as /metrics reports it. */
  isLeaderMetric(): Promise<number>;
  /** Resolves with the exit code or signal. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>;
  kill9(): Promise<void>;
  /** SIGTERM, SIGKILL after 10 s. */
  stop(): Promise<void>;
}

const spawned = new Set<ChildProcess>();

/** SIGKILLs every controller process still running (for after hooks). */
export async function killAllControllers(): Promise<void> {
  const waits: Promise<unknown>[] = [];
  for (const child of spawned) {
    if (child.exitCode === null && child.signalCode === null) {
      waits.push(new Promise((r) => child.once('exit', r)));
      child.kill('SIGKILL');
    }
  }
  spawned.clear();
  await Promise.all(waits);
}

function parseLines(stderr: string): LogLine[] {
  return stderr
    .split('\n')
    .filter((l) => l.trim())
    .map((l) => {
      try {
        return JSON.parse(l) as LogLine;
      } catch {
        return { level: 'raw', message: l };
      }
    });
}

/** Options of a controller process. */
export interface ControllerProcessOptions {
  kubeconfig: string;
  identity: string;
  /** Overrides the kubeconfig's server URL (to route through a proxy). */
  server?: string;
  extraArgs?: string[];
}

/** Spawns `cairn controller` with the test timings and a free metrics port. */
export function startController(o: ControllerProcessOptions): ControllerProcess {
  const ms = (n: number) => `${n}ms`;
  const args = [
    'controller',
    '--kubeconfig', o.kubeconfig,
    '--identity', o.identity,
    '--lease-duration', ms(TIMINGS.leaseDurationMs),
    '--renew-deadline', ms(TIMINGS.renewDeadlineMs),
    '--retry-period', ms(TIMINGS.retryPeriodMs),
    '--metrics-port', '0',
    '--log-level', 'info',
    ...(o.server ? ['--server', o.server] : []),
    ...(o.extraArgs ?? []),
  ];
  const spawnedAt = Date.now();
  const cairn = spawnCairn(args);
  const child = cairn.child;
  spawned.add(child);
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null; at: number }>((resolve) => {
    const done = () => resolve({ code: child.exitCode, signal: child.signalCode, at: Date.now() });
    if (child.exitCode !== null || child.signalCode !== null) done();
    else child.once('exit', done);
  });
  void exited.then(() => spawned.delete(child));
  const lines = () => parseLines(cairn.logs());
  const proc: ControllerProcess = {
    identity: o.identity,
    child,
    spawnedAt,
    lines,
    logs: cairn.logs,
    async waitFor(message, timeoutMs = 20_000) {
      let found: LogLine | undefined;
      await eventually(`${o.identity} to log "${message}"\n${cairn.logs()}`, () => !!(found = lines().find((l) => l.message.startsWith(message))), timeoutMs, 25);
      return found!;
    },
    async healthUrl() {
      const started = await proc.waitFor('controller started');
      return String(started.health);
    },
    async isLeaderMetric() {
      const res = await fetch(`${await proc.healthUrl()}/metrics`);
      const text = await res.text();
      const m = /^cairn_leader_is_leader\{[^}]*\} (\d+)/m.exec(text);
      return m ? Number(m[1]) : 0;
    },
    exited,
    async kill9() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGKILL');
      await exited;
    },
    stop: cairn.stop,
  };
  return proc;
}

/** Reads the leader Lease cairn-system/cairn-controller (undefined before the first controller created it). */
export async function readLeaderLease(kc: KubeConfig): Promise<V1Lease | undefined> {
  const api = kc.makeApiClient(CoordinationV1Api);
  try {
    return await api.readNamespacedLease({ namespace: SYSTEM_NAMESPACE, name: CONTROLLER_LEASE_NAME });
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Polls the leader Lease until holder(lease) is true; returns when it first was, in wall-clock ms. */
export async function waitForLeaseHolder(kc: KubeConfig, pred: (holder: string | undefined) => boolean, timeoutMs: number, everyMs = 25): Promise<{ at: number; holder: string | undefined }> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const before = Date.now();
    const lease = await readLeaderLease(kc).catch(() => undefined);
    const holder = lease?.spec?.holderIdentity ?? undefined;
    if (pred(holder)) return { at: before, holder };
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for the leader lease; holder is ${holder}`);
    await sleep(everyMs);
  }
}

/** A client for the test's apiserver, from its admin kubeconfig. */
export function clientFor(kubeconfigPath: string): { kc: PooledKubeConfig; client: CairnClient } {
  const kc = loadKubeConfig({ kubeconfig: kubeconfigPath });
  return { kc, client: new CairnClient(kc, 'e2e-test') };
}

/** A process Instance requesting 1 cpu and 64Mi. */
export function instanceObject(namespace: string, name: string): Instance {
  return {
    apiVersion: 'cairn.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name, namespace },
    spec: { cpus: 1, memory: '64Mi', process: { command: ['/bin/sleep', '3600'] } },
  };
}

/** A file Volume of `size` with `replicas` replicas. */
export function volumeObject(namespace: string, name: string, replicas: number, size = '1Gi'): Volume {
  return { apiVersion: 'cairn.dev/v1alpha1', kind: 'Volume', metadata: { name, namespace }, spec: { size, replicas } };
}

/** Creates the Cluster that owns namespace `name`. */
export async function createCluster(client: CairnClient, name: string): Promise<void> {
  await client.create('Cluster', { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name }, spec: {} });
}

/** Whether a pid is alive (a zombie counts as gone). */
export function pidAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z';
  } catch {
    return false;
  }
}

/** Direct children of a pid, with their command lines (Linux /proc). */
export function childrenOf(pid: number): Array<{ pid: number; cmdline: string[] }> {
  const out: Array<{ pid: number; cmdline: string[] }> = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== pid) continue;
      const cmdline = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      out.push({ pid: Number(entry), cmdline });
    } catch {
      // the process exited while we looked
    }
  }
  return out;
}

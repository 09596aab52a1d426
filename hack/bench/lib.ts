/**
 * Small helpers for the apiserver benchmark: a lean HTTPS client (Node's
 * `https` with keep-alive, no client-node), a fixed-concurrency runner,
 * percentiles and the RSS of a process.
 */
import fs from 'node:fs';
import https from 'node:https';
import { performance } from 'node:perf_hooks';
import * as k8s from '@kubernetes/client-node';

/** What a request to the apiserver needs: base URL, token, CA and the pooled agent. */
export interface ApiTarget {
  url: URL;
  token: string;
  ca: Buffer;
  agent: https.Agent;
}

/** A finished response, body fully read. */
export interface HttpResult {
  status: number;
  body: Buffer;
}

/** Reads the URL, CA and token out of an admin kubeconfig and makes a keep-alive agent. */
export function targetFromKubeconfig(file: string, maxSockets = 64): ApiTarget {
  const kc = new k8s.KubeConfig();
  kc.loadFromFile(file);
  const cluster = kc.getCurrentCluster();
  const user = kc.getCurrentUser();
  if (!cluster?.caData || !user?.token) throw new Error(`${file}: no certificate-authority-data or token`);
  const ca = Buffer.from(cluster.caData, 'base64');
  return { url: new URL(cluster.server), token: user.token, ca, agent: new https.Agent({ keepAlive: true, maxSockets, ca }) };
}

const REQUEST_TIMEOUT_MS = 30_000;

/** One HTTPS request; resolves with the status and whole body (never rejects on HTTP errors). */
export function request(t: ApiTarget, method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<HttpResult> {
  const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: t.url.hostname,
        port: t.url.port,
        method,
        path,
        agent: t.agent,
        headers: {
          Authorization: `Bearer ${t.token}`,
          Accept: 'application/json',
          ...(payload !== undefined ? { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(payload) } : {}),
          ...headers,
        },
        timeout: REQUEST_TIMEOUT_MS,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks) }));
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`${method} ${path}: no answer in ${REQUEST_TIMEOUT_MS} ms`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Like `request` but throws unless the status is one of `ok`. */
export async function expectStatus(t: ApiTarget, ok: number[], method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<HttpResult> {
  const r = await request(t, method, path, body, headers);
  if (!ok.includes(r.status)) throw new Error(`${method} ${path} → ${r.status}: ${r.body.toString().slice(0, 500)}`);
  return r;
}

/** Outcome of a fixed-concurrency run. */
export interface RunResult {
  count: number;
  errors: number;
  firstError?: string;
  seconds: number;
  perSecond: number;
  /** Per-operation latencies in ms. */
  latencies: Float64Array;
}

/**
 * Runs `op(i)` for i in [0, n) with `concurrency` operations in flight.
 * An op that throws or returns false counts as an error (the run goes on).
 */
export async function runConcurrent(n: number, concurrency: number, op: (i: number) => Promise<boolean | void>): Promise<RunResult> {
  const latencies = new Float64Array(n);
  let next = 0;
  let errors = 0;
  let firstError: string | undefined;
  const fail = (msg: string) => {
    errors++;
    firstError ??= msg;
  };
  const start = performance.now();
  const worker = async () => {
    for (let i = next++; i < n; i = next++) {
      const t0 = performance.now();
      try {
        if ((await op(i)) === false) fail(`operation ${i} failed`);
      } catch (err) {
        fail(String(err));
      }
      latencies[i] = performance.now() - t0;
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, n) }, worker));
  const seconds = (performance.now() - start) / 1000;
  return { count: n, errors, firstError, seconds, perSecond: n / seconds, latencies };
}

/** The p-th percentile (0..100) of `values`, nearest-rank. */
export function percentile(values: ArrayLike<number>, p: number): number {
  if (values.length === 0) return NaN;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[rank]!;
}

/** The median of `values`. */
export function median(values: number[]): number {
  return percentile(values, 50);
}

/** VmRSS (or another /proc/<pid>/status field measured in kB) in MiB, summed over the process and its descendants (apiserver workers), or of the process alone with tree=false (an agent whose operation workers come and go). */
export function procStatusMiB(pid: number, field = 'VmRSS', tree = true): number {
  return (tree ? processTree(pid) : [pid]).reduce((sum, p) => {
    const status = fs.readFileSync(`/proc/${p}/status`, 'utf8');
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(status);
    if (!m) throw new Error(`/proc/${p}/status has no ${field}`);
    return sum + Number(m[1]) / 1024;
  }, 0);
}

/** `pid` and every process descended from it. */
export function processTree(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // the process ended while we looked
    }
  }
  const out = [pid];
  for (let i = 0; i < out.length; i++) out.push(...(parents.get(out[i]!) ?? []));
  return out;
}

/** The number after `--name` on the command line, or `dflt` when the flag is absent. */
export function numberArg(name: string, dflt: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i > 0 ? Number(process.argv[i + 1]) : dflt;
}

/** Formats a number with `digits` decimals. */
export function fmt(n: number, digits = 0): string {
  return Number.isFinite(n) ? n.toFixed(digits) : String(n);
}

/** A short latency summary of a run. */
export function latencySummary(r: RunResult): string {
  return `p50 ${fmt(percentile(r.latencies, 50), 1)} ms, p99 ${fmt(percentile(r.latencies, 99), 1)} ms`;
}

/** CPU seconds (user + system) a process and its descendants have used so far, from /proc/<pid>/stat (clock ticks of 1/100 s). */
export function procCpuSeconds(pid: number): number {
  // The benchmark's own children are the servers it measures separately: count it alone.
  const pids = pid === process.pid ? [pid] : processTree(pid);
  return pids.reduce((sum, p) => {
    const stat = fs.readFileSync(`/proc/${p}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return sum + (Number(fields[11]) + Number(fields[12])) / 100;
  }, 0);
}

/** CPU seconds the whole machine has been busy (all cores, from /proc/stat), to spot other load. */
export function machineBusySeconds(): number {
  const line = fs.readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
  const [user, nice, system, , , irq, softirq, steal] = line.split(/\s+/).slice(1).map(Number) as number[];
  return (user! + nice! + system! + irq! + softirq! + steal!) / 100;
}

/** CPU use of some processes over a span, as a fraction of one core each, plus everything else on the machine. */
export class CpuMeter {
  private readonly start: { pid: number; cpu: number }[];
  private readonly machine0 = machineBusySeconds();
  private readonly t0 = performance.now();
  /** `origin`: the performance.now() the reported window is relative to (the apiserver's spawn). */
  constructor(private readonly pids: Record<string, number>, private readonly origin = 0) {
    this.start = Object.values(pids).map((pid) => ({ pid, cpu: procCpuSeconds(pid) }));
  }
  /** e.g. `cpu: apiserver 95%, etcd 60%, bench 80%  [server t+12.1–16.3 s]` */
  report(): string {
    const now = performance.now();
    const secs = (now - this.t0) / 1000;
    const used = this.start.map((s) => procCpuSeconds(s.pid) - s.cpu);
    const use = Object.keys(this.pids).map((name, i) => `${name} ${fmt((100 * used[i]!) / secs)}%`);
    const other = machineBusySeconds() - this.machine0 - used.reduce((a, b) => a + b, 0);
    use.push(`other processes ${fmt(Math.max(0, (100 * other) / secs))}%`);
    return `cpu: ${use.join(', ')}  [server t+${fmt((this.t0 - this.origin) / 1000, 1)}–${fmt((now - this.origin) / 1000, 1)} s]`;
  }
}

/**
 * Runs a benchmark's main(): exit 0 when it reports every target met, 3
 * when one was missed, 1 when it failed. cleanup() runs on every path,
 * including SIGINT/SIGTERM and the watchdog, exactly once.
 */
export function runBenchmark(main: () => Promise<boolean>, cleanup: () => Promise<void>, watchdogMs: number): void {
  let done = false;
  const finish = (code: number, why?: string) => {
    if (done) return;
    done = true;
    clearTimeout(watchdog);
    if (why) console.error(why);
    void cleanup().finally(() => process.exit(code));
  };
  const watchdog = setTimeout(() => finish(1, `benchmark exceeded ${watchdogMs / 1000} s; aborting`), watchdogMs);
  process.once('SIGINT', () => finish(130, 'interrupted'));
  process.once('SIGTERM', () => finish(143, 'terminated'));
  main().then(
    (ok) => finish(ok ? 0 : 3),
    (err: unknown) => finish(1, `benchmark failed: ${String((err as Error)?.stack ?? err)}`),
  );
}

/** Pids of the processes whose command line carries `marker` (this process excepted). */
export function markedPids(marker: string): number[] {
  const pids: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    try {
      if (fs.readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(marker)) pids.push(Number(e));
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

/** SIGKILLs the processes whose command line carries `marker`. */
export function killMarked(marker: string): void {
  for (const pid of markedPids(marker)) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone
    }
  }
}

/** Polls `probe` every `everyMs` until it yields a value (anything but undefined or false); throws naming `what` after `timeoutMs`. */
export async function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined | false>, everyMs = 100): Promise<T> {
  const t0 = performance.now();
  while (performance.now() - t0 < timeoutMs) {
    const v = await probe();
    if (v !== undefined && v !== false) return v;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`${what} did not happen within ${timeoutMs / 1000} s`);
}

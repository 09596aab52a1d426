/**
 * Runs one etcd member as a child process on loopback ports: the embedded
 * etcd of `cairn server` and the throwaway etcd of tests and benchmarks.
 * Ports are chosen free just before the start; since another process can
 * take a port in that window, a start that fails is retried on new ports.
 * etcd is tied to the life of this process (see dieWithParent), so a
 * kill -9 of the server does not leave it running.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../util/free-port.js';

/** How to run the member. */
export interface EtcdProcessOptions {
  /** etcd's --data-dir; created when missing. */
  dataDir: string;
  /** The etcd binary; default `etcd` from PATH. */
  binary?: string;
  /** Where etcd's own log goes; default `<dataDir>/../etcd.log`. */
  logFile?: string;
  /** How long to wait for /health; default 20 s. */
  startTimeoutMs?: number;
  /** Fixed ports (a restart of the same member keeps its address); free ones by default. */
  clientPort?: number;
  peerPort?: number;
  /** etcd's --quota-backend-bytes (its NOSPACE threshold); etcd's default (2 GiB) when absent. */
  quotaBackendBytes?: number;
}

/** A running etcd member. */
export interface EtcdProcess {
  /** http://127.0.0.1:<port> */
  endpoint: string;
  clientPort: number;
  peerPort: number;
  child: ChildProcess;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once the process is gone. */
  stop(graceMs?: number): Promise<void>;
}

/** Starts etcd and resolves once it answers /health, retrying on port clashes. */
export async function startEtcd(opts: EtcdProcessOptions): Promise<EtcdProcess> {
  let lastError: unknown;
  const attempts = opts.clientPort ? 1 : 3;
  for (let attempt = 0; attempt < attempts; attempt++) {
    try {
      return await startOnce(opts);
    } catch (err) {
      lastError = err;
    }
  }
  throw lastError;
}

/** Where the pid of the etcd serving a data dir is recorded. */
const pidFileOf = (dataDir: string) => `${dataDir}.pid`;

/**
 * Kills an etcd left running on this data dir by a server that was killed
 * with SIGKILL where etcd could not be tied to it (no setpriv, see
 * dieWithParent), or that lost the race before the tie. Only called by the
 * holder of the data-dir lock, so such an etcd has no owner; it is
 * recognised by its command line naming this data dir, never by pid alone.
 */
async function killOrphanedEtcd(dataDir: string): Promise<void> {
  let pid: number;
  try {
    pid = Number(fs.readFileSync(pidFileOf(dataDir), 'utf8').trim());
  } catch {
    return;
  }
  const cmdline = () => {
    try {
      return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      return [];
    }
  };
  const args = cmdline();
  if (!Number.isInteger(pid) || pid <= 1 || !args.some((a) => a.endsWith('etcd')) || args[args.indexOf('--data-dir') + 1] !== dataDir) return;
  process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && cmdline().length > 0 && !fs.readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z'); i++) await new Promise((r) => setTimeout(r, 50));
}

async function startOnce(opts: EtcdProcessOptions): Promise<EtcdProcess> {
  fs.mkdirSync(opts.dataDir, { recursive: true, mode: 0o700 });
  await killOrphanedEtcd(opts.dataDir);
  const clientPort = opts.clientPort ?? (await freePort());
  const peerPort = opts.peerPort ?? (await freePort());
  const endpoint = `http://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const logFile = opts.logFile ?? path.join(path.dirname(opts.dataDir), 'etcd.log');
  const log = fs.openSync(logFile, 'a');
  const binary = opts.binary ?? 'etcd';
  const [command, ...wrapperArgs] = [...dieWithParent(), binary];
  const child = spawn(command!, [...wrapperArgs,
    '--name', 'cairn', '--data-dir', opts.dataDir,
    '--listen-client-urls', endpoint, '--advertise-client-urls', endpoint,
    '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer,
    '--initial-cluster', `cairn=${peer}`, '--initial-cluster-state', 'new',
    '--log-level', 'warn', '--logger', 'zap',
    // Cairn's apiserver compacts on its own schedule (API.md); etcd must not.
    '--auto-compaction-retention', '0',
    ...(opts.quotaBackendBytes ? ['--quota-backend-bytes', String(opts.quotaBackendBytes)] : []),
  ], { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  const notInstalled = () => new Error(`etcd is not installed (no ${binary} on PATH): run hack/install-etcd.sh, or pass --etcd-endpoints of a running etcd`);
  const missing = new Promise<never>((_, reject) => {
    child.once('error', (err: NodeJS.ErrnoException) => reject(err.code === 'ENOENT' ? notInstalled() : err));
    // Through setpriv, a missing etcd is setpriv's exit code 127 rather than a spawn error.
    child.once('exit', (code) => code === 127 && reject(notInstalled()));
  });
  missing.catch(() => undefined);
  if (child.pid) fs.writeFileSync(pidFileOf(opts.dataDir), `${child.pid}\n`);
  const proc: EtcdProcess = { endpoint, clientPort, peerPort, child, stop: (graceMs) => stopChild(child, graceMs) };
  try {
    await Promise.race([waitHealthy(endpoint, child, opts.startTimeoutMs ?? 20_000, logFile), missing]);
  } catch (err) {
    await proc.stop(1000);
    throw err;
  }
  return proc;
}

/**
 * The command prefix that makes etcd die with this process: util-linux's
 * `setpriv --pdeathsig` sets Linux's PR_SET_PDEATHSIG, which survives the
 * exec, so etcd stays this process's direct child under its own name and
 * pid, and gets SIGTERM (a clean shutdown) when the thread that spawned it
 * (the main thread) dies, kill -9 included. Where setpriv is missing or too
 * old (not Linux, a minimal image), etcd runs bare and an orphan is killed
 * by the next start instead (killOrphanedEtcd). Probed once per process.
 */
function dieWithParent(): string[] {
  deathSignalPrefix ??= spawnSync('setpriv', ['--pdeathsig', 'TERM', '--', 'true'], { stdio: 'ignore' }).status === 0 ? ['setpriv', '--pdeathsig', 'TERM', '--'] : [];
  return deathSignalPrefix;
}
let deathSignalPrefix: string[] | undefined;

async function waitHealthy(endpoint: string, child: ChildProcess, timeoutMs: number, logFile: string): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`etcd exited (${child.exitCode ?? child.signalCode}) before it became healthy; see ${logFile}`);
    }
    try {
      // A member under the NOSPACE alarm serves reads and deletes, which is what it takes to recover.
      const res = await fetch(`${endpoint}/health?exclude=NOSPACE`, { signal: AbortSignal.timeout(1000) });
      const body = (await res.json()) as { health?: string };
      if (body.health === 'true') return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`etcd at ${endpoint} did not become healthy within ${timeoutMs} ms; see ${logFile}`);
}

/** Sends SIGTERM, then SIGKILL after the grace period; resolves once the child has exited. */
export function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const killer = setTimeout(() => child.kill('SIGKILL'), graceMs);
    child.once('exit', () => {
      clearTimeout(killer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

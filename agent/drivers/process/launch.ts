/**
 * Launching an instance's command so that it outlives the worker and the
 * agent: a POSIX shell shim started with setsid (detached) becomes session
 * leader and process group of the instance, optionally moves itself into
 * the instance's cgroup, runs the command in the foreground with stdout and
 * stderr appended to console.log, and when the command ends writes
 * "<its pid> <status>" to the exit file (128+n for signal n). That lets any
 * later agent learn exit statuses of processes it did not fork, for about
 * 1 MB of memory per instance. The shim traps TERM/INT/HUP only so that it
 * survives a group SIGTERM long enough to record the command's status; a
 * SIGTERM that lands after the trap but before the command started makes it
 * skip the command (status 143) instead of starting one that never got it.
 * One that lands before the trap kills the shim itself (no exit file).
 * One that lands between the shim's fork of the command and its exec is
 * lost: the fork still has the shell's handler, which swallows it. So a stop
 * waits for commandStarted first (stop.ts).
 *
 * The shim also starts a watchdog (bash, in the same process group): it
 * sleeps until the node's fencing deadline (epoch ms) the agent keeps
 * pushing forward in the fence file, and when the clock passes it — the
 * agent died or cannot renew the node lease — records status 137 and
 * SIGKILLs the whole group. The controller starts a replacement only after
 * the lease expired, which is later than that deadline, so a dead agent
 * never leaves a second copy running (docs/fencing.md). It sleeps until
 * the deadline (at most 30 s), then re-reads the file, which renewals have
 * pushed forward meanwhile, with no fork per wake. A deadline moved back
 * is noticed at the next wake. A fence file that is missing,
 * unreadable or not a number counts as a deadline already passed: the agent
 * writes it before it starts anything, so losing it means losing the fence.
 *
 * Spawn, reading the shim's start time and writing state.json happen in one
 * synchronous stretch: a SIGTERM to the worker is handled only afterwards,
 * so no launched process is left unrecorded.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { WorkItemInstanceSpec } from '../../../api/workitem.js';
import { volumeEnvName } from '../../../api/names.js';
import { OperationError } from '../../operations/errors.js';
import { childPids, commandLine, readProcStat } from './proc.js';

/** The watchdog's $0, which tells it from the command among the shim's children. */
const WATCHDOG_NAME = 'cairn-watchdog';

/**
 * The fencing watchdog: bash, because its builtins let it wake without forking ($EPOCHREALTIME for
 * the clock, `read -t` on a pipe that never delivers for the nap), so hundreds of instances cost
 * almost nothing while they wait. $1 exit file, $2 fence file, $3 the shim's pid (recorded as the
 * instance's, with 137). No TERM trap: the shim's TERM at the end of the instance ends it at once.
 */
const WATCHDOG = [
  'exitf=$1; fence=$2; shim=$3',
  'exec {nap}<> <(:); wait $! 2>/dev/null',
  'while :; do',
  '  d=; read -r d 2>/dev/null < "$fence"',
  '  now=${EPOCHREALTIME/[.,]/}; now=${now:0:13}',
  '  case $d:$now in :*|*:|*[!0-9:]*) left=0 ;; *) left=$((d - now)) ;; esac',
  '  if ((left <= 0)); then echo "$shim 137" > "$exitf.tmp" && mv -f "$exitf.tmp" "$exitf"; kill -KILL 0; fi',
  '  ((left > 30000)) && left=30000',
  '  printf -v frac %03d $((left % 1000))',
  '  read -t "$((left / 1000)).$frac" -u "$nap"',
  'done',
].join('\n');

/** The shim: $1 exit file, $2 cgroup.procs to join ('' for none), $3 fence file ('' for none), $4 the watchdog, then the command and its arguments. */
const SHIM = [
  'exitf=$1; procs=$2; fence=$3; watchdog=$4; shift 4',
  'if [ -n "$procs" ]; then echo $$ > "$procs" || exit 125; fi',
  `if [ -n "$fence" ]; then LC_ALL=C /bin/bash -c "$watchdog" ${WATCHDOG_NAME} "$exitf" "$fence" $$ & fi`,
  'trap stopping=1 TERM INT HUP',
  'if [ -z "$stopping" ]; then "$@"; code=$?; else code=143; fi',
  'if [ -n "$fence" ]; then kill $! 2>/dev/null; wait $! 2>/dev/null; fi',
  'echo "$$ $code" > "$exitf.tmp" && mv -f "$exitf.tmp" "$exitf"',
  'exit $code',
].join('\n');

/**
 * Whether the shim `pid` has exec'd the command, or is gone: it has a child that is neither the watchdog
 * nor a fork not yet exec'd (which still shows the shim's own command line) nor in the midst of an exec
 * (an empty one). The shim forks the command once, at its start, so from then on a signal to the group
 * reaches the command.
 */
export function commandStarted(pid: number): boolean {
  const shim = commandLine(pid)?.join('\0');
  if (!shim) return true; // gone, or a zombie
  return childPids(pid).some((child) => {
    const argv = commandLine(child) ?? [];
    return argv.length > 0 && argv.join('\0') !== shim && argv[3] !== WATCHDOG_NAME;
  });
}

/** PATH of instances when the agent has none. */
const DEFAULT_PATH = '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

/** Everything a launch needs, resolved and checked. */
export interface LaunchSpec {
  /** Absolute path of the program, then its arguments. */
  argv: string[];
  env: Record<string, string>;
  cwd: string;
  logPath: string;
  exitPath: string;
  /** cgroup.procs of the instance's cgroup, when limits are enforced. */
  cgroupProcs?: string;
  /** The fencing deadline file the shim's watchdog follows, when the instance runs under a lease. */
  fencePath?: string;
}

/** Hash of the parts of the spec a running process depends on; a change restarts it. */
export function specHash(spec: WorkItemInstanceSpec, volumePaths: Record<string, string>): string {
  const { process: proc, cpus, memory } = spec;
  const relevant = { command: proc?.command, args: proc?.args ?? [], env: proc?.env ?? [], workingDir: proc?.workingDir, cpus, memory, volumePaths };
  return createHash('sha256').update(JSON.stringify(relevant)).digest('hex').slice(0, 16);
}

/** The instance's environment: PATH, CAIRN_INSTANCE/CLUSTER/NODE, one CAIRN_VOLUME_* per attachment, then spec.process.env. */
export function instanceEnv(spec: WorkItemInstanceSpec, ids: { instance: string; cluster: string; node: string }, volumePaths: Record<string, string>): Record<string, string> {
  const env: Record<string, string> = {
    PATH: process.env.PATH ?? DEFAULT_PATH,
    CAIRN_INSTANCE: ids.instance,
    CAIRN_CLUSTER: ids.cluster,
    CAIRN_NODE: ids.node,
  };
  for (const [name, p] of Object.entries(volumePaths)) env[volumeEnvName(name)] = p;
  for (const v of spec.process?.env ?? []) env[v.name] = v.value ?? '';
  return env;
}

function executable(file: string): 'ok' | 'missing' | 'denied' {
  try {
    if (!fs.statSync(file).isFile()) return 'missing';
    fs.accessSync(file, fs.constants.X_OK);
    return 'ok';
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'missing' : 'denied';
  }
}

/** The absolute path of `command` as the instance's PATH and working dir resolve it; NotFound / PermissionDenied otherwise. */
export function resolveCommand(command: string, envPath: string, cwd: string, node: string): string {
  const candidates = command.includes('/') ? [path.resolve(cwd, command)] : envPath.split(':').filter(Boolean).map((d) => path.join(d, command));
  let denied: string | undefined;
  for (const file of candidates) {
    const verdict = executable(file);
    if (verdict === 'ok') return file;
    if (verdict === 'denied') denied ??= file;
  }
  if (denied) {
    throw new OperationError('PermissionDenied', `command ${denied} on node ${node} is not executable by the agent`, `make it executable (chmod +x ${denied}) or fix spec.process.command`);
  }
  throw new OperationError(
    'NotFound',
    `the command ${command} does not exist on node ${node}`,
    `install ${command} on node ${node} (searched PATH=${envPath}) or fix spec.process.command`,
  );
}

let watchdogShellOk = false;

// The watchdog reads the clock from bash's $EPOCHREALTIME (bash 5.0 on): an older bash has none, and its
// watchdog would never fire (it now fires at once instead), so such a node refuses to run fenced instances.
function requireWatchdogShell(): void {
  if (watchdogShellOk) return;
  if (executable('/bin/bash') !== 'ok') throw new OperationError('DriverUnavailable', 'cannot fence the instance: /bin/bash, which runs its fencing watchdog, is missing', 'install bash 5 or later on the node');
  const clock = spawnSync('/bin/bash', ['-c', 'echo "$EPOCHREALTIME"'], { encoding: 'utf8' }).stdout?.trim() ?? '';
  if (!/^\d+[.,]\d+$/.test(clock)) throw new OperationError('DriverUnavailable', 'cannot fence the instance: /bin/bash has no $EPOCHREALTIME (it is older than 5.0), which its fencing watchdog reads the clock from', 'install bash 5 or later on the node');
  watchdogShellOk = true;
}

/** Starts the shim as a new session; returns its pid and start ticks, read before the event loop can reap it. */
export function launch(spec: LaunchSpec): { pid: number; startTicks: number } {
  const log = fs.openSync(spec.logPath, 'a', 0o644);
  try {
    fs.rmSync(spec.exitPath, { force: true });
    if (spec.fencePath) requireWatchdogShell();
    const child = spawn('/bin/sh', ['-c', SHIM, 'cairn-shim', spec.exitPath, spec.cgroupProcs ?? '', spec.fencePath ?? '', WATCHDOG, ...spec.argv], {
      detached: true,
      stdio: ['ignore', log, log],
      env: spec.env,
      cwd: spec.cwd,
    });
    child.on('error', () => undefined);
    child.unref();
    const stat = child.pid === undefined ? undefined : readProcStat(child.pid);
    if (!stat) throw new OperationError('DriverUnavailable', 'cannot start /bin/sh for the instance shim', 'install a POSIX shell as /bin/sh on the node');
    return { pid: stat.pid, startTicks: stat.startTicks };
  } finally {
    fs.closeSync(log);
  }
}

/**
 * Stopping an instance: once the shim has started the command (a SIGTERM
 * before its exec could be lost, launch.ts), SIGTERM to its whole process
 * group, up to the grace period for the shim (and so the command it waits
 * for) to end, then SIGKILL to the group; finally a SIGKILL sweep of the
 * group for members that outlived the shim. The instance is not the worker's child, so its end
 * is seen by polling /proc (zombies count as gone). Runs in a worker; an
 * abort of the operation stops the waiting at once with the abort's reason,
 * leaving the instance as it is for the next operation to finish.
 */
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { isSameProcess, type ProcessState } from './state.js';
import { bootId, groupMembers, readProcStat } from './proc.js';
import { commandStarted } from './launch.js';

/** How often the stop checks whether the instance is gone: first after 1 ms, doubling up to this. */
const POLL_MS = 50;
/** How long a stop waits for a shim that has just started to exec the command; then it signals all the same. */
const START_WAIT_MS = 2_000;
/** How long to wait for the kernel to deliver a SIGKILL before giving up. */
const KILL_WAIT_MS = 5_000;

/** How a stop ended: by signal, by the instance's own shutdown when asked (a VM's ACPI power-down), or nothing to stop. */
export type StopOutcome = 'SIGTERM' | 'SIGKILL' | 'asked' | 'gone';

function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

// Polls until `done` holds (true) or `ms` have passed (false); most processes end within milliseconds.
async function waitUntil(done: () => boolean, ms: number, signal: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (let poll = 1; ; poll = Math.min(poll * 2, POLL_MS)) {
    if (done()) return true;
    if (Date.now() >= deadline) return false;
    await sleep(Math.min(poll, Math.max(1, deadline - Date.now())), undefined, { signal }).catch((err: unknown) => {
      throw signal.aborted ? signal.reason : err;
    });
  }
}

/** Stops the instance `state` describes: SIGTERM, `graceMs`, SIGKILL. */
export async function stopInstance(state: Pick<ProcessState, 'pid' | 'startTicks' | 'bootId'>, graceMs: number, signal: AbortSignal): Promise<StopOutcome> {
  const gone = () => !isSameProcess(state, readProcStat(state.pid), bootId());
  if (gone()) return 'gone';
  await waitUntil(() => commandStarted(state.pid), START_WAIT_MS, signal);
  if (!signalGroup(state.pid, 'SIGTERM')) return 'gone';
  let outcome: StopOutcome = 'SIGTERM';
  if (!(await waitUntil(gone, graceMs, signal))) {
    outcome = 'SIGKILL';
    signalGroup(state.pid, 'SIGKILL');
    if (!(await waitUntil(gone, KILL_WAIT_MS, signal))) throw new Error(`process group ${state.pid} survived SIGKILL for ${KILL_WAIT_MS} ms`);
  }
  signalGroup(state.pid, 'SIGKILL');
  return outcome;
}

/**
 * Kills what a run left behind once its shim is gone: a command that ended may leave children running
 * (`sh -c 'worker & exit 1'`), which would share the next run's limits, outlive the instance's removal,
 * and, their watchdog gone with the shim, run unfenced beside a copy failed over to another node.
 * Everything in the run's cgroup (cgroup.kill, Linux 5.14, else each pid of cgroup.procs: this catches
 * children that left the process group too); without a cgroup, the members of its process group (not a
 * process that has the dead shim's pid now: it leads a group of its own), unless that pid is another's.
 */
export async function killLeftovers(state: Pick<ProcessState, 'pid' | 'cgroup' | 'startTicks' | 'bootId'>): Promise<void> {
  const kill = (pid: number) => {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // gone already
    }
  };
  // Every cgroup v2 directory has cgroup.events; without it this is no cgroup (gone, or a test's stand-in).
  if (!state.cgroup || !fs.existsSync(path.join(state.cgroup, 'cgroup.events'))) {
    if (groupPidReused(state)) return;
    return groupMembers(state.pid).filter((p) => p !== state.pid).forEach(kill);
  }
  try {
    await fs.promises.writeFile(path.join(state.cgroup, 'cgroup.kill'), '1', { flag: 'r+' });
    return;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const procs = await fs.promises.readFile(path.join(state.cgroup, 'cgroup.procs'), 'utf8').catch(() => '');
  procs.split('\n').filter(Boolean).map(Number).forEach(kill);
}

/**
 * Whether the shim's pid now names another process (or the run was in another boot): then its group has
 * no member left, as the kernel does not hand out a pid that still names a process group, and the group
 * of that number is someone else's (another instance's shim, which also leads one).
 */
function groupPidReused(state: Pick<ProcessState, 'pid' | 'startTicks' | 'bootId'>): boolean {
  if (state.bootId !== undefined && state.bootId !== bootId()) return true;
  const now = readProcStat(state.pid);
  return now !== undefined && now.startTicks !== state.startTicks;
}

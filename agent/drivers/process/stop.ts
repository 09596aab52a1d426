/**
 * Stopping an instance: SIGTERM to its whole process group, up to the grace
 * period for the shim (and so the command it waits for) to end, then
 * SIGKILL to the group; finally a SIGKILL sweep of the group for members
 * that outlived the shim. The instance is not the worker's child, so its end
 * is seen by polling /proc (zombies count as gone). Runs in a worker; an
 * abort of the operation stops the waiting at once with the abort's reason,
 * leaving the instance as it is for the next operation to finish.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { isSameProcess, type ProcessState } from './state.js';
import { bootId, readProcStat } from './proc.js';

/** How often the stop checks whether the instance is gone. */
const POLL_MS = 50;
/** How long to wait for the kernel to deliver a SIGKILL before giving up. */
const KILL_WAIT_MS = 5_000;

/** Which signal ended the instance: it obeyed SIGTERM, needed SIGKILL, or was already gone. */
export type StopOutcome = 'SIGTERM' | 'SIGKILL' | 'gone';

function signalGroup(pgid: number, signal: NodeJS.Signals): boolean {
  try {
    process.kill(-pgid, signal);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ESRCH') return false;
    throw err;
  }
}

async function waitGone(state: ProcessState, ms: number, signal: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + ms;
  for (;;) {
    if (!isSameProcess(state, readProcStat(state.pid), bootId())) return true;
    if (Date.now() >= deadline) return false;
    await sleep(Math.min(POLL_MS, Math.max(1, deadline - Date.now())), undefined, { signal }).catch((err: unknown) => {
      throw signal.aborted ? signal.reason : err;
    });
  }
}

/** Stops the instance `state` describes: SIGTERM, `graceMs`, SIGKILL. */
export async function stopInstance(state: ProcessState, graceMs: number, signal: AbortSignal): Promise<StopOutcome> {
  if (!isSameProcess(state, readProcStat(state.pid), bootId())) return 'gone';
  if (!signalGroup(state.pid, 'SIGTERM')) return 'gone';
  let outcome: StopOutcome = 'SIGTERM';
  if (!(await waitGone(state, graceMs, signal))) {
    outcome = 'SIGKILL';
    signalGroup(state.pid, 'SIGKILL');
    if (!(await waitGone(state, KILL_WAIT_MS, signal))) throw new Error(`process group ${state.pid} survived SIGKILL for ${KILL_WAIT_MS} ms`);
  }
  signalGroup(state.pid, 'SIGKILL');
  return outcome;
}

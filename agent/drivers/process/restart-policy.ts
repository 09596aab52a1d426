/**
 * When a process instance that exited by itself is started again: its
 * restartPolicy says whether, an exponential backoff says when (1 s, 2 s,
 * 4 s, ... capped at 5 min, like the kubelet's CrashLoopBackOff), and a run
 * that lasted 10 min resets the backoff. Pure: times are numbers passed in,
 * so the decisions are tested with an injected clock.
 */
import type { RestartPolicy } from '../../../api/instance.js';

/** First backoff delay. */
export const BACKOFF_INITIAL_MS = 1_000;
/** Longest backoff delay. */
export const BACKOFF_MAX_MS = 5 * 60_000;
/** A run at least this long resets the backoff. */
export const BACKOFF_RESET_AFTER_MS = 10 * 60_000;

/** Whether `policy` restarts a process that exited with `exitCode` (undefined: unknown, e.g. killed with its shim). */
export function shouldRestart(policy: RestartPolicy, exitCode: number | undefined): boolean {
  if (policy === 'Always') return true;
  if (policy === 'Never') return false;
  return exitCode !== 0;
}

/** Backoff delay after `count` consecutive quick exits. */
export function backoffDelayMs(count: number): number {
  return Math.min(BACKOFF_INITIAL_MS * 2 ** Math.min(count, 30), BACKOFF_MAX_MS);
}

/** What restartPolicy and backoff need to know about the last run. */
export interface RestartInput {
  policy: RestartPolicy;
  exitCode: number | undefined;
  /** Consecutive quick exits before this one. */
  backoffCount: number;
  startedAt: number;
  exitedAt: number;
  now: number;
}

/** Restart now (with the backoff count to store), wait until a time, or leave the instance exited. */
export type RestartDecision =
  | { kind: 'restart'; backoffCount: number }
  | { kind: 'wait'; untilMs: number }
  | { kind: 'none' };

/** The restart decision for an instance whose last run has ended. */
export function decideRestart(input: RestartInput): RestartDecision {
  if (!shouldRestart(input.policy, input.exitCode)) return { kind: 'none' };
  const count = input.exitedAt - input.startedAt >= BACKOFF_RESET_AFTER_MS ? 0 : input.backoffCount;
  const untilMs = input.exitedAt + backoffDelayMs(count);
  return input.now >= untilMs ? { kind: 'restart', backoffCount: count + 1 } : { kind: 'wait', untilMs };
}

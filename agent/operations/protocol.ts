/**
 * What the runner and a worker say to each other across the process
 * boundary: one JSON request on the worker's stdin, one JSON result line on
 * its stdout, and JSON log lines on its stderr that the runner re-logs with
 * the operation id. Workers of other kinds (tests use some) speak the same.
 * Pure data and parsing.
 */
import type { ErrorReason, WorkItem } from '../../api/workitem.js';
import type { DriverSettings, Observation, Verb } from '../drivers/driver.js';

/** The request a worker reads from stdin. */
export interface WorkerRequest {
  operationId: string;
  verb: Verb;
  item: WorkItem;
  settings: DriverSettings;
}

/** The failure part of a worker result. */
export interface WorkerFailure {
  reason: ErrorReason;
  message: string;
  hint?: string;
}

/** The one line a worker prints on stdout. */
export type WorkerResult = { ok: true; observation?: Observation } | { ok: false; error: WorkerFailure };

/** A log line a worker prints on stderr. */
export interface WorkerLogLine {
  level: 'info' | 'warn' | 'error';
  message: string;
  meta?: Record<string, unknown>;
}

const LEVELS = new Set(['info', 'warn', 'error']);

/** A stderr line as a WorkerLogLine, or undefined when it is not one (a crash trace, a child's output). */
export function parseLogLine(line: string): WorkerLogLine | undefined {
  if (!line.startsWith('{')) return undefined;
  try {
    const value = JSON.parse(line) as Partial<WorkerLogLine>;
    return LEVELS.has(value.level as string) && typeof value.message === 'string' ? (value as WorkerLogLine) : undefined;
  } catch {
    return undefined;
  }
}

/** The worker result in a worker's stdout, or undefined when there is none (the worker crashed or was killed). */
export function parseResult(stdout: string): WorkerResult | undefined {
  const last = stdout.trim().split('\n').pop();
  if (!last) return undefined;
  try {
    const value = JSON.parse(last) as WorkerResult;
    if (value.ok === true || (value.ok === false && typeof value.error?.reason === 'string')) return value;
  } catch {
    // not a result: fall through
  }
  return undefined;
}

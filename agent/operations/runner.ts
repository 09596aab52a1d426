/**
 * The supervised-operation runner, after Ganeti's RPC-timeout design: each
 * driver verb (ensure, remove) runs in a worker process, named by an
 * operation id, bounded by a timeout (reason Timeout), cancellable through
 * an AbortSignal (reason Cancelled), and ended — SIGTERM, then SIGKILL after
 * a grace period — when the agent shuts down. A hung driver can therefore
 * never wedge the agent, and killing an operation kills everything it
 * started.
 *
 * Workers are kept warm and reused, one operation at a time each: an
 * operation costs a request and a result line, not a Node.js start-up (about
 * 90 ms of CPU). A worker that was terminated, or exited, is never reused;
 * at most `maxIdle` wait for work, and each retires after a minute without
 * work or after MAX_OPERATIONS_PER_WORKER operations: its exit sweeps its
 * process group, so anything an operation left behind does not outlive it
 * for long.
 *
 * Concurrency: run() may be called concurrently for different WorkItems; a
 * second operation for a WorkItem that still has one is a programming error
 * (the agent's work queue never processes a key twice at once) and throws.
 * run() never rejects for a failed operation: the failure is in the result.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createLogger } from '../../api/log.js';
import type { ErrorReason, WorkItem, WorkItemError } from '../../api/workitem.js';
import type { DriverAction, DriverSettings, Observation, Verb } from '../drivers/driver.js';
import { OperationError, classify } from './errors.js';
import { newOperationId } from './operation-id.js';
import { parseLogLine, parseResult, type WorkerRequest } from './protocol.js';
import { SupervisedChild, type ChildOutcome, type Termination } from './supervised-child.js';
import { operationTimeoutMs } from './timeouts.js';

/** The worker next to this file: dist/agent/operations/worker.js when compiled, dist/bundle/worker.js when bundled (hack/bundle.ts). */
export const DEFAULT_WORKER = path.join(path.dirname(fileURLToPath(import.meta.url)), 'worker.js');
/** Default time between SIGTERM and SIGKILL when the runner ends a worker. */
export const DEFAULT_KILL_GRACE_MS = 3_000;
/** Idle workers kept warm by default: the agent's reconcile workers, so a burst does not start new ones (each holds about 45 MiB). */
const DEFAULT_MAX_IDLE = 8;
/** An idle worker retires after this long without work, so a quiet agent holds no warm workers. */
const IDLE_RETIRE_MS = 60_000;
/** Operations a worker carries before it retires. */
const MAX_OPERATIONS_PER_WORKER = 200;

/** The log methods the runner uses; a winston Logger fits. */
export interface RunnerLogger {
  info(message: string, meta?: Record<string, unknown>): unknown;
  warn(message: string, meta?: Record<string, unknown>): unknown;
  error(message: string, meta?: Record<string, unknown>): unknown;
}

/** The drivers' settings out of the runner's (plain data for the worker). */
function driverSettings(o: DriverSettings): DriverSettings {
  const { dataDir, nodeName, cgroupRoot, accelerator, migrationAddress, fenceFile } = o;
  return { dataDir, nodeName, ...(cgroupRoot ? { cgroupRoot } : {}), ...(accelerator ? { accelerator } : {}), ...(migrationAddress ? { migrationAddress } : {}), ...(fenceFile ? { fenceFile } : {}) };
}

/** Settings of a runner: the drivers' settings plus supervision knobs. */
export interface RunnerOptions extends DriverSettings {
  logger?: RunnerLogger;
  /** Worker script run with process.execPath; tests substitute their own. */
  workerPath?: string;
  /** SIGTERM → SIGKILL delay on timeout and cancellation. */
  killGraceMs?: number;
  /** Idle workers kept warm for the next operations (default 8); each retires after a minute without work. */
  maxIdle?: number;
}

/** One operation to run. */
export interface RunRequest {
  verb: Verb;
  item: WorkItem;
  /** What observe() said ensure() would do; picks the default timeout and is reported. */
  action?: DriverAction;
  /** Overrides operationTimeoutMs(). */
  timeoutMs?: number;
  /** Abort when the WorkItem changed or was deleted; the reason (a string or Error) becomes the message. */
  signal?: AbortSignal;
}

/** The outcome of one operation, shaped for WorkItemStatus (operationId, action, startedAt, finishedAt, lastError). */
export interface OperationResult {
  operationId: string;
  verb: Verb;
  action?: DriverAction;
  ok: boolean;
  /** ensure(): the driver's observation afterwards. */
  observation?: Observation;
  /** On failure: WorkItemStatus.lastError. */
  error?: WorkItemError;
  startedAt: string;
  finishedAt: string;
}

/** An operation in flight, for the agent's /status. */
export interface LiveOperation {
  operationId: string;
  key: string;
  verb: Verb;
  action?: DriverAction;
  pid: number;
  startedAt: string;
  deadline: string;
}

/** Counters for the agent's /metrics. */
export interface RunnerStats {
  started: number;
  succeeded: number;
  failed: Partial<Record<ErrorReason, number>>;
  live: number;
}

interface Live {
  info: LiveOperation;
  child: SupervisedChild;
}

function abortMessage(signal: AbortSignal): string {
  const reason: unknown = signal.reason;
  if (typeof reason === 'string') return reason;
  if (reason instanceof Error && reason.name !== 'AbortError') return reason.message;
  return 'the WorkItem changed or was deleted';
}

/** Runs driver verbs in supervised worker processes. */
export class OperationRunner {
  private readonly live = new Map<string, Live>();
  private readonly counters: Omit<RunnerStats, 'live'> = { started: 0, succeeded: 0, failed: {} };
  private readonly logger: RunnerLogger;
  private readonly killGraceMs: number;
  private readonly idle = new Map<SupervisedChild, NodeJS.Timeout>();
  private closed = false;

  constructor(private readonly options: RunnerOptions) {
    this.logger = options.logger ?? createLogger('agent-operations');
    this.killGraceMs = options.killGraceMs ?? DEFAULT_KILL_GRACE_MS;
  }

  /** Runs one verb for one WorkItem in a worker; resolves with its result, never rejects for operation failures. */
  async run(req: RunRequest): Promise<OperationResult> {
    const key = `${req.item.metadata.namespace ?? ''}/${req.item.metadata.name ?? ''}`;
    const existing = this.live.get(key);
    if (existing) throw new Error(`operation ${existing.info.operationId} is still running for WorkItem ${key}`);
    const started = new Date();
    const refuse = this.closed ? 'the agent is shutting down' : req.signal?.aborted ? abortMessage(req.signal) : undefined;
    if (refuse) return this.finish(req, newOperationId(process.pid, 0, started), started, { ok: false, error: new OperationError('Cancelled', refuse).toWorkItemError() });
    let child: SupervisedChild;
    try {
      child = this.worker();
    } catch (err) {
      return this.finish(req, newOperationId(process.pid, 0, started), started, { ok: false, error: classify(err, { doing: 'starting an operation worker', node: this.options.nodeName }).toWorkItemError() });
    }
    const operationId = newOperationId(process.pid, child.pid, started);
    const timeoutMs = req.timeoutMs ?? operationTimeoutMs(req.item, req.verb, req.action);
    const info: LiveOperation = { operationId, key, verb: req.verb, ...(req.action ? { action: req.action } : {}), pid: child.pid, startedAt: started.toISOString(), deadline: new Date(started.getTime() + timeoutMs).toISOString() };
    this.live.set(key, { info, child });
    this.counters.started++;
    this.logger.info('operation started', { ...info, timeoutMs });
    const request: WorkerRequest = { operationId, verb: req.verb, item: req.item, settings: driverSettings(this.options) };
    const outcome = child.request(JSON.stringify(request), (line) => this.relay(line, operationId, key));
    const what = `operation ${operationId} (${req.verb}${req.action ? ` ${req.action}` : ''} of WorkItem ${key})`;
    const timer = setTimeout(() => child.terminate({ reason: 'Timeout', message: `${what} exceeded its ${timeoutMs / 1000} s timeout and was killed` }, this.killGraceMs), timeoutMs);
    const onAbort = () => child.terminate({ reason: 'Cancelled', message: `${what} was cancelled: ${abortMessage(req.signal!)}` }, this.killGraceMs);
    req.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      return this.finish(req, operationId, started, this.interpret(await outcome, what));
    } finally {
      clearTimeout(timer);
      req.signal?.removeEventListener('abort', onAbort);
      this.live.delete(key);
      this.release(child);
    }
  }

  /** A warm worker, or a new one. */
  private worker(): SupervisedChild {
    for (const [w, retire] of this.idle) {
      this.idle.delete(w);
      clearTimeout(retire);
      if (w.reusable) return w;
    }
    return new SupervisedChild(process.execPath, [this.options.workerPath ?? DEFAULT_WORKER]);
  }

  /** Keeps a worker that can take more work warm (up to maxIdle); lets the others go. */
  private release(child: SupervisedChild): void {
    const keep = !this.closed && child.reusable && child.served < MAX_OPERATIONS_PER_WORKER && this.idle.size < (this.options.maxIdle ?? DEFAULT_MAX_IDLE);
    if (!keep) return child.end();
    const retire = setTimeout(() => this.idle.delete(child) && child.end(), IDLE_RETIRE_MS);
    retire.unref();
    this.idle.set(child, retire);
  }

  /** Operations in flight. */
  operations(): LiveOperation[] {
    return [...this.live.values()].map((l) => ({ ...l.info }));
  }

  /** Counters since the runner was created. */
  stats(): RunnerStats {
    return { ...this.counters, failed: { ...this.counters.failed }, live: this.live.size };
  }

  /** Refuses new operations, SIGTERMs every worker group, SIGKILLs them after `graceMs`, and resolves when all are gone. */
  async shutdown(graceMs = this.killGraceMs): Promise<void> {
    this.closed = true;
    const termination: Termination = { reason: 'Cancelled', message: 'the agent is shutting down' };
    const pending = [...this.live.values()].map((l) => {
      l.child.terminate({ ...termination, message: `operation ${l.info.operationId} was ended: ${termination.message}` }, graceMs);
      return l.child.done;
    });
    for (const [w, retire] of this.idle) {
      clearTimeout(retire);
      w.end();
      pending.push(w.done);
    }
    this.idle.clear();
    await Promise.all(pending);
  }

  private interpret(outcome: ChildOutcome, what: string): { ok: boolean; observation?: Observation; error?: WorkItemError } {
    if (outcome.terminated) {
      const hint = outcome.terminated.reason === 'Timeout' ? `check the agent log on node ${this.options.nodeName} for why it was slow, or raise spec.timeoutSeconds of the WorkItem` : undefined;
      return { ok: false, error: new OperationError(outcome.terminated.reason, outcome.terminated.message, hint).toWorkItemError() };
    }
    const result = parseResult(outcome.stdout);
    if (result?.ok) return { ok: true, ...(result.observation ? { observation: result.observation } : {}) };
    if (result) return { ok: false, error: new OperationError(result.error.reason, result.error.message, result.error.hint).toWorkItemError() };
    const how = outcome.signal ? `signal ${outcome.signal}` : `status ${outcome.exitCode}`;
    const detail = outcome.stderrTail.split('\n').filter((l) => l.trim() && !/^\s+at |^Node\.js v/.test(l)).slice(-3).join(' | ');
    return { ok: false, error: new OperationError('Unknown', `the worker of ${what} ended with ${how} without a result${detail ? `: ${detail}` : ''}`, `see the agent log on node ${this.options.nodeName}`).toWorkItemError() };
  }

  private finish(req: RunRequest, operationId: string, started: Date, outcome: { ok: boolean; observation?: Observation; error?: WorkItemError }): OperationResult {
    const finishedAt = new Date().toISOString();
    const error = outcome.error && { ...outcome.error, operationId, time: finishedAt };
    if (outcome.ok) this.counters.succeeded++;
    else if (error) this.counters.failed[error.reason] = (this.counters.failed[error.reason] ?? 0) + 1;
    const result: OperationResult = { operationId, verb: req.verb, ...(req.action ? { action: req.action } : {}), ok: outcome.ok, ...(outcome.observation ? { observation: outcome.observation } : {}), ...(error ? { error } : {}), startedAt: started.toISOString(), finishedAt };
    const meta = { operationId, verb: req.verb, action: req.action, durationMs: Date.now() - started.getTime(), ...(error ? { reason: error.reason, error: error.message } : {}) };
    if (outcome.ok) this.logger.info('operation succeeded', meta);
    else this.logger.warn('operation failed', meta);
    return result;
  }

  private relay(line: string, operationId: string, key: string): boolean {
    const parsed = parseLogLine(line);
    if (!parsed) return false;
    this.logger[parsed.level](parsed.message, { ...parsed.meta, operationId, workItem: key });
    return true;
  }
}

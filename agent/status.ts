/**
 * The WorkItem status the agent writes, as pure functions: phase Queued →
 * InProgress → Done or Failed, attempts, the operation's id and times,
 * lastError with reason, message and hint, the driver's observation, and a
 * Ready condition — all with observedGeneration.
 */
import { formatTime, setCondition } from '../api/conditions.js';
import type { WorkItem, WorkItemError, WorkItemPhase, WorkItemStatus } from '../api/workitem.js';
import type { Observation } from './drivers/driver.js';
import type { OperationResult } from './operations/runner.js';

/** What changed since the last status. */
export interface StatusUpdate {
  phase: WorkItemPhase;
  message: string;
  observation?: Observation;
  result?: OperationResult;
  error?: WorkItemError;
  /** Count this as one more attempt. */
  attempt?: boolean;
  nextAttemptAt?: number;
}

/** The WorkItem's next status. */
export function workItemStatus(item: WorkItem, u: StatusUpdate, now: number): WorkItemStatus {
  const prev = item.status ?? {};
  const generation = item.metadata.generation;
  const sameGeneration = prev.observedGeneration === generation;
  const attempts = u.phase === 'Done' ? 0 : (sameGeneration ? (prev.attempts ?? 0) : 0) + (u.attempt ? 1 : 0);
  const obs = u.observation ?? u.result?.observation;
  const time = new Date(now);
  let conditions = prev.conditions;
  for (const c of obs?.conditions ?? []) conditions = setCondition(conditions, { ...c, observedGeneration: generation }, time);
  const ready = u.phase === 'Done' && (obs?.instance?.ready ?? true);
  conditions = setCondition(conditions, { type: 'Ready', status: ready ? 'True' : 'False', reason: u.error?.reason ?? (ready ? 'Done' : u.phase), message: u.error?.message ?? u.message, observedGeneration: generation }, time);
  const status: WorkItemStatus = {
    ...prev,
    observedGeneration: generation,
    phase: u.phase,
    message: u.message,
    attempts,
    ...(obs?.instance ? { instance: obs.instance } : {}),
    ...(obs?.volumeReplica ? { volumeReplica: obs.volumeReplica } : {}),
    ...(obs?.migration ? { migration: obs.migration } : {}),
    ...(u.result ? { operationId: u.result.operationId, action: u.result.action, startedAt: u.result.startedAt, finishedAt: u.result.finishedAt } : {}),
    conditions,
  };
  if (u.error) status.lastError = u.error;
  else if (u.phase === 'Done') delete status.lastError;
  if (u.nextAttemptAt !== undefined) status.nextAttemptAt = formatTime(new Date(u.nextAttemptAt));
  else delete status.nextAttemptAt;
  return status;
}

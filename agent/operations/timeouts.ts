/**
 * How long an operation may run before the runner kills it (reason Timeout).
 * WorkItem spec.timeoutSeconds wins; otherwise a default per action, plus
 * the instance's termination grace period for actions that stop a process,
 * so a slow but obedient shutdown is never mistaken for a hung operation.
 * Pure.
 */
import type { WorkItem } from '../../api/workitem.js';
import type { DriverAction, Verb } from '../drivers/driver.js';
import { graceMs } from '../drivers/driver.js';
import { MAX_TIMER_MS } from '../../runtime/clock.js';

/** Default timeout of each action in seconds, before any grace period. */
export const DEFAULT_TIMEOUT_SECONDS: Readonly<Record<DriverAction, number>> = {
  create: 600,
  resize: 600,
  delete: 120,
  start: 30,
  restart: 30,
  stop: 30,
  recordExit: 30,
  listen: 60,
  // A storage mirror of a large volume runs inside migrate; spec.instance.migration.timeoutSeconds bounds it (below).
  migrate: 300,
  finishMigration: 60,
  abortMigration: 60,
  resume: 30,
};

/** The action a verb stands for when observe() named none: remove deletes, ensure is a start or create. */
function defaultAction(item: WorkItem, verb: Verb): DriverAction {
  if (verb === 'remove') return 'delete';
  return item.spec.type === 'VolumeReplica' ? 'create' : 'start';
}

/** The timeout in ms for running `verb` (about to do `action`) on `item`. */
export function operationTimeoutMs(item: WorkItem, verb: Verb, action?: DriverAction): number {
  return Math.min(MAX_TIMER_MS, chosenTimeoutMs(item, verb, action));
}

function chosenTimeoutMs(item: WorkItem, verb: Verb, action?: DriverAction): number {
  if (item.spec.timeoutSeconds !== undefined && item.spec.timeoutSeconds > 0) return item.spec.timeoutSeconds * 1000;
  const chosen = action ?? defaultAction(item, verb);
  const migration = item.spec.instance?.migration;
  if (chosen === 'migrate' && migration?.timeoutSeconds) return (migration.timeoutSeconds + 30) * 1000;
  const stops = verb === 'remove' || chosen === 'stop' || chosen === 'restart';
  const grace = item.spec.type === 'InstanceRuntime' && stops ? graceMs(item) : 0;
  return DEFAULT_TIMEOUT_SECONDS[chosen] * 1000 + grace;
}

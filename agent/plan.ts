/**
 * The agent's decisions for one WorkItem, as a pure function (like the
 * controller's reconcilers/<kind>/plan.ts): from the WorkItem, what the
 * driver observes on this node and the fence (the node's term and this
 * instance's claim, docs/fencing.md) to the one next step. The executor
 * (reconciler.ts) carries the step out and plans again.
 *
 * The rules that keep two copies from ever running:
 * - nothing starts or resumes a guest without the node's term and the
 *   instance's claim made in that term;
 * - without the term (renewals failed for the safe window) a local copy is
 *   stopped; a claim held by another node stops it too;
 * - nothing else stops an instance whose spec says Running: a stale cache
 *   or an API error never does.
 */
import type { DriverAction, Observation } from './drivers/driver.js';
import type { WorkItem } from '../api/workitem.js';

/**
 * Actions of a driver's ensure() that let a guest run: they need the term and the claim. Recording an exit is
 * one: the same ensure plans again and may restart at once (a changed spec or restart token).
 */
const RUNS_GUEST: ReadonlySet<DriverAction> = new Set<DriverAction>(['start', 'restart', 'recordExit', 'resume', 'migrate', 'abortMigration']);

/** The fence as the executor sees it. */
export interface FenceView {
  /** The node's current term; undefined when the node may not run instances now. */
  term?: string;
  /** The instance's claim was made in this term. */
  claimed: boolean;
  /** Another node holds the claim (seen by the last claim attempt). */
  heldBy?: string;
}

/** Everything the plan looks at. */
export interface AgentObserved {
  /** The WorkItem to make true; undefined when it is gone (deleted while away, or released by the controller). */
  item: WorkItem | undefined;
  /** What the driver sees for it (undefined when gone, or not looked at: see `step`). */
  obs?: Observation;
  fence: FenceView;
}

/** The next thing the executor does. */
export type AgentStep =
  /** The WorkItem is gone: undo it locally. */
  | { type: 'forget' }
  /** Being deleted: remove, give the claim up (or hand it to the node a migration completed to), drop the finalizer. */
  | { type: 'finalize' }
  /** Claim the instance in the current term (a write), then plan again. */
  | { type: 'claim' }
  /** Stop the local copy, which must not run here now. */
  | { type: 'stopLocal'; reason: 'Fenced' | 'LeaseHeld' }
  /** Nothing runs here and nothing may start: report why and look again soon. */
  | { type: 'wait'; reason: 'Fenced' | 'LeaseHeld' | 'AwaitingHandOver' }
  /** A migration source whose transfer completed: hand the claim to the target (finishing qemu first when disks are mirrored). */
  | { type: 'handOver'; to: string }
  /** Let the driver converge (ensure when not converged) and report. */
  | { type: 'converge' };

/** Whether a local copy of the instance exists (running, starting, stopping, or a paused migration target). */
export function hasLocalCopy(obs: Observation | undefined): boolean {
  const state = obs?.instance?.state;
  return state === 'Running' || state === 'Starting' || state === 'Stopping';
}

/** Whether the WorkItem wants an instance running here. */
export function wantsRunning(item: WorkItem): boolean {
  return item.spec.type === 'InstanceRuntime' && (item.spec.instance?.runState ?? 'Running') === 'Running';
}

/** The next step for one WorkItem. */
export function planWorkItem(o: AgentObserved): AgentStep {
  const { item, obs, fence } = o;
  if (!item) return { type: 'forget' };
  if (item.metadata.deletionTimestamp) return { type: 'finalize' };
  if (!wantsRunning(item)) return { type: 'converge' };
  const m = item.spec.instance?.migration;
  const action = obs?.converged ? undefined : obs?.action;
  if (m?.role === 'Source' && (action === 'finishMigration' || obs?.migration?.phase === 'Completed')) return { type: 'handOver', to: m.peerNodeName };
  // A target waits for the source to hand the claim over, also once the controller made its WorkItem ordinary.
  const target = m?.role === 'Target' || action === 'resume';
  if (fence.heldBy) return guardAgainstHolder(obs, target);
  if (fence.term === undefined) return hasLocalCopy(obs) ? { type: 'stopLocal', reason: 'Fenced' } : { type: 'wait', reason: 'Fenced' };
  if (fence.claimed) return { type: 'converge' };
  if (action && RUNS_GUEST.has(action)) return { type: 'claim' };
  // A copy running here was started in this term (a gap in the term stops every copy), so it was
  // claimed in this term; claim it again anyway (one write) so that a claim held elsewhere is noticed.
  return hasLocalCopy(obs) && !target ? { type: 'claim' } : { type: 'converge' };
}

/**
 * Another node holds the claim. A migration target waits for the source to hand it over; anything
 * else must not run here: its local copy is stopped (say, one left from before a partition).
 */
function guardAgainstHolder(obs: Observation | undefined, target: boolean): AgentStep {
  if (target) return { type: 'wait', reason: 'AwaitingHandOver' };
  return hasLocalCopy(obs) ? { type: 'stopLocal', reason: 'LeaseHeld' } : { type: 'wait', reason: 'LeaseHeld' };
}

/**
 * Decisions of the Instance reconciler, as one pure function from the
 * Instance and what the cache shows (its WorkItems, nodes, fencing lease,
 * a scheduler) to actions and the status to write.
 *
 * Invariant: never two running copies. An instance moves (pin changed,
 * node draining, node lost) by first removing the old WorkItem and waiting
 * until it is gone; only then is a new one created. The one exception is
 * the live migration of a running qemu VM (migration.ts): two WorkItems,
 * of which the claim (the instance's fencing Lease) lets only one run the
 * guest. A WorkItem on a lost node can only be released (its agent cannot
 * confirm) once that node's lease was revoked — its agent stopped the
 * workload itself before the lease expired — and with it the node's claim
 * is deleted, so the next node can claim the instance (docs/fencing.md).
 */
import type { InstanceStatus } from '../../../api/instance.js';
import { formatTime, getCondition, setCondition } from '../../../api/conditions.js';
import { CONTROLLER_FINALIZER } from '../../../api/names.js';
import type { WorkItem } from '../../../api/workitem.js';
import type { NodeView } from '../../node-health.js';
import { pinnedNode } from '../../scheduler/index.js';
import { asUpdated, earliest, mergeWorkItem, type Action, type Plan } from '../actions.js';
import { planLiveMigration, settleRefusedColdMove } from './migration.js';
import { SPEC_HASH_ANNOTATION, desiredInstanceWorkItem, withSpec } from './workitem-spec.js';
import type { InstanceObserved } from './observed.js';
import { instanceStatus, type Placement } from './status.js';

/** The Instance reconciler's decisions. */
export function planInstance(o: InstanceObserved): Plan<InstanceStatus> {
  if (o.instance.metadata.deletionTimestamp) return planDeletion(o);
  const actions: Action[] = [];
  if (!o.instance.metadata.finalizers?.includes(CONTROLLER_FINALIZER)) actions.push({ type: 'addFinalizer' });
  const active = o.workItems.filter((w) => !w.metadata.deletionTimestamp);
  const terminating = o.workItems.filter((w) => w.metadata.deletionTimestamp);
  const live = planLiveMigration(o, active);
  if (live?.kind === 'inFlight') return { ...live.plan, actions: [...actions, ...live.plan.actions] };
  if (live) actions.push(...live.actions);
  // A migration that just ended leaves its status behind for the rest of the plan (a Failed one no longer pins).
  const observed = live ? { ...o, instance: { ...o.instance, status: live.status } } : o;
  const current = live ? live.current : active[0];
  const extra = active.filter((w) => w !== current);
  for (const w of extra) actions.push({ type: 'deleteWorkItem', name: w.metadata.name!, uid: w.metadata.uid });
  // Right after a migration ends, a pin is acted on only in the next pass, which may migrate live again (a changed migrateTo).
  if (current) {
    // WorkItems still being deleted beside the current one (a live migration's source, an extra copy) on a node lost
    // meanwhile: nothing else releases them, and they count toward that node's usage until it returns. Looked at
    // once no migration ended in this pass (a settled one releases its own source).
    const releaseInMs = live ? undefined : releaseLost(observed, terminating, actions);
    const plan = planPlaced(observed, current, actions, !live);
    return releaseInMs ? { ...plan, requeueAfterMs: earliest(plan.requeueAfterMs, releaseInMs) } : plan;
  }
  const leaving = [...terminating, ...extra];
  if (leaving.length > 0) return planWaitingForOld(observed, leaving, actions);
  return planUnplaced(observed, actions);
}

function planDeletion(o: InstanceObserved): Plan<InstanceStatus> {
  const actions: Action[] = [];
  let requeueAfterMs: number | undefined;
  for (const w of o.workItems) {
    const node = o.node(w.spec.nodeName);
    const releaseInMs = node.lost ? releaseIfLost(o, w, actions) : undefined;
    const released = releaseInMs === 0;
    if (releaseInMs) requeueAfterMs = earliest(requeueAfterMs, releaseInMs);
    // Even on a "lost" node: one whose Node object was deleted by hand may still run a live agent, which
    // the deletion asks to stop the instance (it renews the fencing lease, so no release would ever come).
    if (!released && !w.metadata.deletionTimestamp) actions.push({ type: 'deleteWorkItem', name: w.metadata.name!, uid: w.metadata.uid });
    // Nothing wakes us when an unreachable node turns lost (that is only time passing): come back then to release.
    if (node.unreachable && !node.lost) requeueAfterMs = earliest(requeueAfterMs, node.lostInMs + 100);
  }
  if (o.workItems.length === 0 && o.instance.metadata.finalizers?.includes(CONTROLLER_FINALIZER)) {
    // The lease first, the finalizer once it is gone (its deletion wakes us): together, a failed lease delete
    // beside a finalizer removed left the lease behind for good, as nothing reconciles an Instance that is gone.
    if (o.fencing.leaseName && o.fencing.resourceVersion) actions.push({ type: 'deleteLease', name: o.fencing.leaseName });
    else actions.push({ type: 'removeFinalizer' });
  }
  const placement: Placement = { kind: 'stopping', workItem: o.workItems[0] };
  return { actions, status: instanceStatus(o, placement), requeueAfterMs };
}

/**
 * A WorkItem whose node is lost is released once the fencing lease has
 * expired; returns ms to wait otherwise, or undefined when the node is not lost.
 */
function releaseIfLost(o: InstanceObserved, w: WorkItem, actions: Action[]): number | undefined {
  const node = o.node(w.spec.nodeName);
  if (!node.lost) return node.unreachable ? node.lostInMs : undefined;
  if (mayRunByClaim(o, w.spec.nodeName)) return o.fencing.remainingMs + 100;
  release(o, w, actions);
  return 0;
}

/**
 * Whether the claim may let nodeName run the instance: it is held in a live term by that node, or by a node
 * not named. A claim another node holds means nodeName's copy has stopped (it runs only with the claim).
 */
function mayRunByClaim(o: InstanceObserved, nodeName: string): boolean {
  return o.fencing.held && (o.fencing.holder ?? nodeName) === nodeName;
}

/** Releases the lost among WorkItems still being deleted; returns when to look again (see releaseIfLost). */
function releaseLost(o: InstanceObserved, leaving: readonly WorkItem[], actions: Action[]): number | undefined {
  let requeueAfterMs: number | undefined;
  for (const w of leaving) requeueAfterMs = earliest(requeueAfterMs, releaseIfLost(o, w, actions));
  return requeueAfterMs;
}

/** Releases the WorkItem of a lost node whose lease was revoked, and deletes that node's claim on the instance. */
function release(o: InstanceObserved, w: WorkItem, actions: Action[]): void {
  actions.push({ type: 'releaseWorkItem', name: w.metadata.name!, uid: w.metadata.uid });
  const { leaseName, resourceVersion, holder } = o.fencing;
  if (leaseName && resourceVersion && holder === w.spec.nodeName) actions.push({ type: 'deleteClaim', name: leaseName, resourceVersion });
}

/** Automatic failover applies; a pinned instance (spec.placement.nodeName) never fails over, as the Instance CRD says: it may run nowhere else. */
function failoverAllowed(o: InstanceObserved): boolean {
  if (o.instance.spec.placement?.nodeName) return false;
  return (o.instance.spec.failoverPolicy ?? 'Automatic') === 'Automatic' && o.cluster?.spec?.failover?.enabled !== false;
}

function planPlaced(o: InstanceObserved, current: WorkItem, actions: Action[], honourPin = true): Plan<InstanceStatus> {
  const nodeName = current.spec.nodeName;
  const node = o.node(nodeName);
  const pin = honourPin ? pinnedNode(o.instance)?.nodeName : undefined;
  if (pin && pin !== nodeName) {
    actions.push({ type: 'deleteWorkItem', name: current.metadata.name!, uid: current.metadata.uid });
    actions.push({ type: 'event', eventType: 'Normal', reason: 'Moving', message: `moving from node ${nodeName} to pinned node ${pin}: stopping it on ${nodeName} first` });
    return { actions, status: instanceStatus(o, { kind: 'moving', workItem: current, reason: 'Moving', message: `stopping on ${nodeName} to start on ${pin}` }) };
  }
  if (node.unreachable && failoverAllowed(o)) return planFailover(o, current, node, actions);
  if (node.draining) {
    actions.push({ type: 'deleteWorkItem', name: current.metadata.name!, uid: current.metadata.uid });
    actions.push({ type: 'event', eventType: 'Normal', reason: 'Evicting', message: `node ${nodeName} is draining: stopping the instance there to start it on another node` });
    return { actions, status: instanceStatus(o, { kind: 'moving', workItem: current, reason: 'Draining', message: `node ${nodeName} is draining` }) };
  }
  const { workItem: desired, refused } = resizedWithinCapacity(o, current, desiredInstanceWorkItem(o.instance, o.cluster, o.volumes, nodeName));
  const update = current.metadata.annotations?.[SPEC_HASH_ANNOTATION] !== desired.metadata.annotations?.[SPEC_HASH_ANNOTATION] ? mergeWorkItem(current, desired) : undefined;
  if (update) actions.push({ type: 'updateWorkItem', workItem: update });
  // Once lost (failover not allowed), only a change of the Node can change anything, and that wakes us: no requeue, which would spin at 0 ms.
  const requeueAfterMs = node.unreachable && !node.lost ? node.lostInMs + 100 : undefined;
  // Status as of the update: Ready=True for the new generation from the old WorkItem's report would pass `kubectl wait` at once.
  const status = withResizeCondition(o, instanceStatus(o, { kind: 'placed', workItem: update ? asUpdated(update, current) : current }), refused, actions);
  const quietMs = awaitingFirstReport(o, current);
  if (quietMs > 0 && actions.length === 0) return { actions, status, requeueAfterMs: quietMs, deferStatus: true };
  return { actions, status, requeueAfterMs };
}

/**
 * A change of cpus or memory is carried out in place only when the node
 * has room for the difference; otherwise the WorkItem keeps its current
 * size and the refusal is reported (the instance keeps running as it is).
 */
function resizedWithinCapacity(o: InstanceObserved, current: WorkItem, desired: WorkItem): { workItem: WorkItem; refused?: string } {
  const want = desired.spec.instance!;
  const have = current.spec.instance;
  if (!have || (want.cpus === have.cpus && want.memory === have.memory)) return { workItem: desired };
  const refused = o.resizeRefusal?.(current.spec.nodeName, have, want);
  if (!refused) return { workItem: desired };
  return { workItem: withSpec(desired, { ...desired.spec, instance: { ...want, cpus: have.cpus, memory: have.memory } }), refused };
}

/** SpecAccepted=False (reason InsufficientCapacity, plus a Warning Event once) while a resize is refused; True again after. */
function withResizeCondition(o: InstanceObserved, status: InstanceStatus, refused: string | undefined, actions: Action[]): InstanceStatus {
  const prev = getCondition(o.instance.status?.conditions, 'SpecAccepted');
  if (!refused && !prev) return status;
  const generation = o.instance.metadata.generation;
  const cond = refused
    ? { type: 'SpecAccepted', status: 'False' as const, reason: 'InsufficientCapacity', message: refused, observedGeneration: generation }
    : { type: 'SpecAccepted', status: 'True' as const, reason: 'Accepted', message: 'spec is carried out', observedGeneration: generation };
  if (refused && prev?.message !== refused) actions.push({ type: 'event', eventType: 'Warning', reason: 'InsufficientCapacity', message: refused });
  return { ...status, conditions: setCondition(status.conditions, cond, new Date(o.now)) };
}

/** How long a placement may go without writing "Scheduled" after its WorkItem was created. */
export const FIRST_REPORT_GRACE_MS = 2000;

/**
 * ms left in which a new WorkItem's agent has not reported yet and the
 * "Scheduled" status need not be written: usually the agent reports within
 * that time and one write says Running instead of two. 0 when it is due.
 */
function awaitingFirstReport(o: InstanceObserved, w: WorkItem): number {
  if (w.status?.phase || o.instance.status?.phase === 'Scheduled' || !w.metadata.creationTimestamp) return 0;
  return Math.max(0, Date.parse(w.metadata.creationTimestamp) + FIRST_REPORT_GRACE_MS - o.now);
}

function planFailover(o: InstanceObserved, current: WorkItem, node: NodeView, actions: Action[]): Plan<InstanceStatus> {
  const nodeName = current.spec.nodeName;
  if (!node.lost) {
    return { actions, status: instanceStatus(o, { kind: 'placed', workItem: current }), requeueAfterMs: node.lostInMs + 100 };
  }
  if (o.fencing.held) {
    const message = `node ${nodeName} is lost, but node ${o.fencing.holder}, whose lease is live, holds the claim ${o.fencing.leaseName}; waiting up to ${Math.ceil(o.fencing.remainingMs / 1000)}s for it to stop the instance or be revoked`;
    return { actions, status: instanceStatus(o, { kind: 'moving', workItem: current, reason: 'AwaitingFencing', message }), requeueAfterMs: o.fencing.remainingMs + 100 };
  }
  release(o, current, actions);
  actions.push({
    type: 'event',
    eventType: 'Warning',
    reason: 'FailingOver',
    message: `node ${nodeName} is lost and its lease was revoked (its agent stopped the instance before the lease expired): starting the instance on another node`,
  });
  const status = instanceStatus(o, { kind: 'moving', workItem: current, reason: 'FailingOver', message: `failing over from lost node ${nodeName}` });
  return { actions, status: { ...status, lastFailover: { fromNode: nodeName, time: formatTime(o.now) } } };
}

function planWaitingForOld(o: InstanceObserved, terminating: WorkItem[], actions: Action[]): Plan<InstanceStatus> {
  const requeueAfterMs = releaseLost(o, terminating, actions);
  const old = terminating[0]!;
  const message = `waiting for node ${old.spec.nodeName} to stop the instance before starting it elsewhere`;
  return { actions, status: instanceStatus(o, { kind: 'moving', workItem: old, reason: 'Moving', message }), requeueAfterMs };
}

/** When to look again at a stale claim whose delete did not wake us (it failed, or the watch is slow). */
const STALE_CLAIM_RETRY_MS = 5000;

function planUnplaced(o: InstanceObserved, actions: Action[]): Plan<InstanceStatus> {
  // A claim left by a node whose term ended (its lease revoked) and whose WorkItem is gone: a failover whose claim
  // delete failed after the release landed. Nothing else deletes it. Deleted alone, first (its deletion wakes us):
  // with a WorkItem created beside it, a delete that failed again would leave the next node waiting on it for good.
  const { holder, held, leaseName, resourceVersion } = o.fencing;
  if (holder && !held && leaseName && resourceVersion) {
    actions.push({ type: 'deleteClaim', name: leaseName, resourceVersion });
    return { actions, status: o.instance.status ?? {}, deferStatus: true, requeueAfterMs: STALE_CLAIM_RETRY_MS };
  }
  const decision = o.schedule();
  if ('unschedulable' in decision) {
    const status = instanceStatus(o, { kind: 'unschedulable', message: decision.message });
    const refusedMove = settleRefusedColdMove(o, status, decision.message);
    if (refusedMove) return { actions: [...actions, ...refusedMove.actions], status: refusedMove.status };
    const changed = o.instance.status?.message !== decision.message;
    if (changed) actions.push({ type: 'event', eventType: 'Warning', reason: 'FailedScheduling', message: decision.message });
    return { actions, status };
  }
  const workItem = desiredInstanceWorkItem(o.instance, o.cluster, o.volumes, decision.nodeName);
  actions.push({ type: 'createWorkItem', workItem });
  const event = schedulingEvent(o.instance.status, decision.nodeName);
  if (event) actions.push(event);
  return { actions, status: instanceStatus(o, { kind: 'scheduled', nodeName: decision.nodeName, workItemName: workItem.metadata.name! }), deferStatus: true };
}

/**
 * The Normal "Scheduled" Event of a placement that follows an earlier one or a
 * FailedScheduling: it marks a turn in the instance's history. A first
 * placement is recorded only in the Scheduled condition, since an Event per
 * Instance would be a fifth etcd write for every instance (docs/throughput.md).
 */
function schedulingEvent(status: InstanceStatus | undefined, nodeName: string): Action | undefined {
  const previous = getCondition(status?.conditions, 'Scheduled');
  if (!status?.nodeName && !previous) return undefined;
  const was = status?.nodeName && status.nodeName !== nodeName ? ` (was on node ${status.nodeName})` : '';
  return { type: 'event', eventType: 'Normal', reason: 'Scheduled', message: `placed on node ${nodeName}${was}` };
}

/**
 * Node lifecycle, pure: Ready while the node Lease is fresh, Unreachable
 * (Ready=Unknown, reason NodeLeaseExpired, a Warning Event) once it has not
 * been renewed for its duration, Ready again when renewals resume. Before
 * a node is marked Unreachable its lease is revoked (holder cleared, by
 * compare-and-swap on the version watched expire): that ends the node's
 * fencing term for good, so its instances may be claimed elsewhere
 * (docs/fencing.md); a renewal that raced the revocation makes it fail,
 * and the node stays Ready. A drain request (spec.drain: true) reports Draining
 * until no instance is placed on the node, then Drained. Also writes what
 * the scheduler has placed on the node (status.allocated); a write for that
 * alone comes at most once per ALLOCATION_WRITE_INTERVAL_MS: while thousands
 * of instances land, each would otherwise cost its node a write.
 */
import { formatTime, getCondition, setCondition } from '../../../api/conditions.js';
import type { Condition } from '../../../api/types.js';
import type { Node, NodeAllocated, NodePhase, NodeStatus } from '../../../api/node.js';
import { nodeLeaseName } from '../../../api/names.js';
import { LEASE_EXPIRED_REASON, leaseFreshness, type LeaseView } from '../../node-health.js';
import type { EventType } from '../../../runtime/events.js';
import { earliest } from '../actions.js';
import { sameJson } from '../stable-json.js';

/** Least time between two writes of a node's changed status.allocated (kubelet reports node status every 10 s). */
export const ALLOCATION_WRITE_INTERVAL_MS = 5000;

/** Everything the plan looks at. */
export interface NodeObserved {
  node: Node;
  lease: LeaseView | undefined;
  /** Without a lease: when this controller first saw it missing (deleted, or not created yet). */
  leaseMissingSince?: number;
  /** Instances whose WorkItem is on this node (for drain progress). */
  instancesOnNode: number;
  allocated: NodeAllocated;
  /** When this controller last wrote a changed status.allocated; undefined: not since it started. */
  allocatedWrittenAt?: number;
  /** The Cluster's nodeLeaseDurationSeconds: how long a Ready node may go without any heartbeat lease. */
  leaseDurationSeconds: number;
  now: number;
}

/** The desired status, events to record and when to look again. */
export interface NodePlan {
  status: NodeStatus;
  /** Revoke the node lease first (at the version observed; a missing lease is created holderless); write status only if that succeeded. */
  revokeLease?: boolean;
  events: Array<{ eventType: EventType; reason: string; message: string }>;
  requeueAfterMs?: number;
}

/** The Node reconciler's decisions. */
export function planNode(o: NodeObserved): NodePlan {
  const name = o.node.metadata.name!;
  const prev = o.node.status ?? {};
  const { fresh, remainingMs } = leaseFreshness(o.lease, name, o.now);
  const events: NodePlan['events'] = [];
  const ready = getCondition(prev.conditions, 'Ready');
  // A controller that just started sees every lease as fresh for one duration; for a node already found
  // Unreachable that is no sign of life: it stays Unreachable until this controller sees a renewal.
  const unconfirmed = fresh && o.lease?.renewalObserved === false && ready?.status !== 'True' && ready?.reason === LEASE_EXPIRED_REASON;
  const alive = fresh && !unconfirmed;
  let conditions = prev.conditions;
  const leaseRef = `${o.node.metadata.namespace}/${nodeLeaseName(name)}`;
  const missingMs = leaseMissingMs(o, ready);
  const expired = (!fresh && !!o.lease) || unconfirmed || missingMs === 0 || (!o.lease && ready?.reason === LEASE_EXPIRED_REASON);
  if (expired) {
    const what = o.lease ? `has not renewed its heartbeat lease ${leaseRef} for ${o.lease.durationSeconds}s` : `has no heartbeat lease ${leaseRef} (deleted?) for ${o.leaseDurationSeconds}s`;
    const message = `the agent ${what}: it is down or cannot reach the apiserver. Check the agent on the machine and its logs; instances fail over after the cluster's grace period`;
    conditions = setCondition(conditions, { type: 'Ready', status: 'Unknown', reason: LEASE_EXPIRED_REASON, message }, new Date(o.now));
    if (ready?.reason !== LEASE_EXPIRED_REASON) events.push({ eventType: 'Warning', reason: 'NodeUnreachable', message });
  } else if (alive && ready?.status !== 'True') {
    conditions = setCondition(conditions, { type: 'Ready', status: 'True', reason: 'NodeLeaseRenewed', message: `the agent renews its heartbeat lease ${leaseRef}` }, new Date(o.now));
    if (ready?.reason === LEASE_EXPIRED_REASON) events.push({ eventType: 'Normal', reason: 'NodeReachable', message: `heartbeats from node ${name} resumed` });
  }
  const phase = phaseOf(o, alive, expired);
  // Held by the node (or missing): not revoked yet. A lease already holderless was revoked before. One this
  // controller has not yet watched go unrenewed (unconfirmed) is not revoked: the node may have taken it
  // back and renew it, and a new leader would end a live node's term on first sight (docs/fencing.md).
  const revokeLease = expired && !unconfirmed && (!o.lease || o.lease.holder === name);
  const status: NodeStatus = { ...prev, phase, conditions, allocated: o.allocated, drain: drainStatus(o, phase), observedGeneration: o.node.metadata.generation };
  const heldMs = allocationHeldMs(o, status);
  return {
    ...(revokeLease ? { revokeLease } : {}),
    status: heldMs > 0 ? { ...status, allocated: prev.allocated } : status,
    events,
    requeueAfterMs: earliest(fresh ? remainingMs + 100 : missingMs ? missingMs + 100 : undefined, heldMs > 0 ? heldMs : undefined),
  };
}

/**
 * ms for which a changed allocation waits, when it is all that changed and
 * was written less than the interval ago; 0 when `status` is to be written
 * as it is (a write that happens anyway carries the allocation along).
 */
function allocationHeldMs(o: NodeObserved, status: NodeStatus): number {
  const written = o.node.status?.allocated;
  if (!written || o.allocatedWrittenAt === undefined || sameJson(written, o.allocated)) return 0;
  if (!sameJson({ ...status, allocated: written }, o.node.status)) return 0;
  return Math.max(0, o.allocatedWrittenAt + ALLOCATION_WRITE_INTERVAL_MS - o.now);
}

/**
 * For a node its agent reported Ready that has no heartbeat lease at all
 * (never created, or deleted): ms until that has lasted a lease duration
 * since it became Ready and since the lease was seen missing — then it
 * counts as expired (0). A lease deleted under a live node is so given the
 * time its agent needs to create it again: counted from Ready alone, an
 * old node's would expire at once and fail over instances still running
 * there in its term. Undefined when the rule does not apply.
 */
function leaseMissingMs(o: NodeObserved, ready: Condition | undefined): number | undefined {
  if (o.lease || ready?.status !== 'True') return undefined;
  const since = Math.max(Date.parse(ready.lastTransitionTime), o.leaseMissingSince ?? -Infinity);
  return Math.max(0, since + o.leaseDurationSeconds * 1000 - o.now);
}

function phaseOf(o: NodeObserved, fresh: boolean, expired: boolean): NodePhase {
  if (expired) return 'Unreachable';
  if (!fresh) return 'NotReady';
  if (o.node.spec?.drain) return o.instancesOnNode > 0 ? 'Draining' : 'Drained';
  return 'Ready';
}

function drainStatus(o: NodeObserved, phase: NodePhase): NodeStatus['drain'] {
  if (!o.node.spec?.drain) return undefined;
  const prev = o.node.status?.drain;
  const startedAt = prev?.startedAt ?? formatTime(o.now);
  const remaining = o.instancesOnNode;
  const finishedAt = remaining === 0 ? (prev?.finishedAt ?? formatTime(o.now)) : undefined;
  const message = phase === 'Unreachable' ? 'node is unreachable; its instances fail over' : remaining === 0 ? 'no instances left on the node' : `moving ${remaining} instance(s) to other nodes`;
  return { startedAt, ...(finishedAt ? { finishedAt } : {}), instancesRemaining: remaining, message };
}

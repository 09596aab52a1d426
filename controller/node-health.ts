/**
 * How the controller judges a node from its heartbeat Lease, as pure
 * functions. Expiry is measured from when the controller itself last saw
 * the lease change (see LeaseObservations), never from the agent's
 * renewTime, so clock skew cannot fail a node over early.
 */
import type { Cluster } from '../api/cluster.js';
import { getCondition } from '../api/conditions.js';
import type { Node } from '../api/node.js';

/** Default failure-detection timings (the Cluster CRD's defaults). */
export const FAILURE_DEFAULTS = { heartbeatIntervalSeconds: 2, nodeLeaseDurationSeconds: 10, failoverGracePeriodSeconds: 0 };

/** Reason the controller writes on a node's Ready condition when its lease expires. */
export const LEASE_EXPIRED_REASON = 'NodeLeaseExpired';

/** A lease as this controller observed it. */
export interface LeaseView {
  holder?: string;
  durationSeconds: number;
  /** Controller-clock time the lease record last changed. */
  observedAtMs: number;
  /** false while this controller has only seen the record once (it just started), never a renewal; unset counts as observed. */
  renewalObserved?: boolean;
}

/** Whether a lease is held by identity and not yet expired at now; with the ms left. */
export function leaseFreshness(lease: LeaseView | undefined, identity: string | undefined, now: number): { fresh: boolean; remainingMs: number } {
  if (!lease || !lease.holder || (identity !== undefined && lease.holder !== identity)) return { fresh: false, remainingMs: 0 };
  const remainingMs = lease.observedAtMs + lease.durationSeconds * 1000 - now;
  return { fresh: remainingMs > 0, remainingMs: Math.max(0, remainingMs) };
}

/** Failover grace period of a cluster in ms. */
/** How long a node's lease lasts in its Cluster (spec.failureDetection), or by default. */
export function nodeLeaseSeconds(cluster: Cluster | undefined): number {
  return cluster?.spec?.failureDetection?.nodeLeaseDurationSeconds ?? FAILURE_DEFAULTS.nodeLeaseDurationSeconds;
}

export function failoverGraceMs(cluster: Cluster | undefined): number {
  return (cluster?.spec?.failureDetection?.failoverGracePeriodSeconds ?? FAILURE_DEFAULTS.failoverGracePeriodSeconds) * 1000;
}

/** What the instance and volume reconcilers need to know about a node. */
export interface NodeView {
  exists: boolean;
  /** The controller has marked it Unreachable (lease expired). */
  unreachable: boolean;
  /** Unreachable for longer than the cluster's failover grace period (or gone). */
  lost: boolean;
  /** ms until an unreachable node counts as lost. */
  lostInMs: number;
  draining: boolean;
}

/** Classifies a node (undefined = no such Node object) for failover decisions. */
export function nodeView(node: Node | undefined, cluster: Cluster | undefined, now: number): NodeView {
  if (!node) return { exists: false, unreachable: true, lost: true, lostInMs: 0, draining: false };
  const ready = getCondition(node.status?.conditions, 'Ready');
  const unreachable = node.status?.phase === 'Unreachable' || (ready?.status !== 'True' && ready?.reason === LEASE_EXPIRED_REASON);
  const since = ready && unreachable ? Date.parse(ready.lastTransitionTime) : now;
  const lostInMs = unreachable ? Math.max(0, since + failoverGraceMs(cluster) - now) : Infinity;
  return { exists: true, unreachable, lost: unreachable && lostInMs === 0, lostInMs, draining: node.spec?.drain === true };
}

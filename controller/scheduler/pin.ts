/**
 * Which node, if any, an Instance must go to. spec.migrateTo is a one-shot
 * request (see the Instance CRD): while it has not been carried out it wins
 * over spec.placement.nodeName, because moving there is what the user asked
 * for last; once status.migration records a Completed or Failed migration
 * to that very node it is ignored, so a later failover is not dragged back
 * to it. spec.placement.nodeName is a lasting pin.
 */
import type { Instance } from '../../api/instance.js';

/** The node an Instance is pinned to and the spec field that pins it (for hints). */
export interface Pin {
  nodeName: string;
  field: 'spec.migrateTo' | 'spec.placement.nodeName';
}

/** Whether status.migration records the request to move to `target` as done (Completed or Failed): it is not carried out again. */
export function migrationCarriedOut(instance: Instance, target: string): boolean {
  const m = instance.status?.migration;
  return m?.targetNode === target && (m.phase === 'Completed' || m.phase === 'Failed');
}

/** The node an Instance must be placed on: a pending spec.migrateTo, else spec.placement.nodeName. */
export function pinnedNode(instance: Instance): Pin | undefined {
  const migrateTo = instance.spec.migrateTo;
  if (migrateTo && !migrationCarriedOut(instance, migrateTo)) return { nodeName: migrateTo, field: 'spec.migrateTo' };
  const pinned = instance.spec.placement?.nodeName;
  return pinned ? { nodeName: pinned, field: 'spec.placement.nodeName' } : undefined;
}

/**
 * The actions reconcile plans return and executors carry out. Plans decide;
 * executors only write. Shared by the Instance and Volume reconcilers.
 */
import type { WorkItem } from '../../api/workitem.js';
import type { EventType } from '../../runtime/events.js';
import { sameJson } from './stable-json.js';

/** One write an executor performs. */
export type Action =
  | { type: 'addFinalizer' }
  | { type: 'removeFinalizer' }
  | { type: 'createWorkItem'; workItem: WorkItem }
  | { type: 'updateWorkItem'; workItem: WorkItem }
  | { type: 'deleteWorkItem'; name: string; uid?: string }
  /** Removes the agent's finalizer from a WorkItem whose node is lost (its agent cannot), then deletes it. */
  | { type: 'releaseWorkItem'; name: string; uid?: string }
  /**
   * Deletes the claim (fencing Lease) of an instance whose holder's node
   * lease was revoked (precondition: the version observed, so a claim its
   * holder made again in a new term is left alone), so another node may
   * claim it (docs/fencing.md).
   */
  | { type: 'deleteClaim'; name: string; resourceVersion: string }
  /**
   * Deletes the fencing Lease of an Instance whose WorkItems are all gone:
   * agents only release a lease (a node may not delete one), so the
   * controller removes it with its Instance.
   */
  | { type: 'deleteLease'; name: string }
  | { type: 'event'; eventType: EventType; reason: string; message: string };

/** What a plan returns: writes, the desired status, and when to look again. */
export interface Plan<Status> {
  actions: Action[];
  status: Status;
  requeueAfterMs?: number;
  /**
   * Skip the status write this time: the plan created a WorkItem whose ADD
   * event reconciles the owner again within milliseconds, with fresher news
   * (at scale, often already Running). Saves one write per placement.
   */
  deferStatus?: boolean;
}

/** The smaller of two optional delays. */
export function earliest(a: number | undefined, b: number | undefined): number | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return Math.min(a, b);
}

/** The stored WorkItem with the desired spec, labels and annotations (keeping its resourceVersion and finalizers). */
export function mergeWorkItem(current: WorkItem, desired: WorkItem): WorkItem {
  return {
    ...current,
    metadata: {
      ...current.metadata,
      labels: { ...current.metadata.labels, ...desired.metadata.labels },
      annotations: { ...current.metadata.annotations, ...desired.metadata.annotations },
    },
    spec: desired.spec,
  };
}

/**
 * `update` of `stored` as the apiserver will store it: a spec change moves its generation on, so that until its
 * agent reports on the new one, its status (the old generation's) does not read as carried out. A change of
 * metadata alone (a spec-hash annotation written by another controller version) keeps it.
 */
export function asUpdated(update: WorkItem, stored: WorkItem | undefined): WorkItem {
  if (stored && sameJson(update.spec, stored.spec)) return update;
  return { ...update, metadata: { ...update.metadata, generation: (update.metadata.generation ?? 0) + 1 } };
}

/**
 * What the Instance and Volume reconcilers share around their plans: skip a
 * version this process already replaced, delete the WorkItems of an owner
 * that is gone, record new placements as assumed before the first await
 * (and drop them if the writes fail), apply the plan, and turn its
 * requeue wish into a Result.
 */
import type { Instance } from '../../api/instance.js';
import type { Volume } from '../../api/volume.js';
import type { WorkItem } from '../../api/workitem.js';
import type { Placements } from '../placements.js';
import type { Result } from '../../runtime/controller.js';
import { earliest, type Plan } from './actions.js';
import { execute, type ExecutorDeps } from './executor.js';

/** Dependencies of an owner reconcile. */
export interface OwnerReconcileDeps extends ExecutorDeps {
  placements: Placements;
}

/** Reconciles the owner with key namespace/name through its plan function. */
export async function reconcileOwner<O extends Instance | Volume>(
  deps: OwnerReconcileDeps,
  kind: O['kind'] & ('Instance' | 'Volume'),
  key: string,
  owner: O | undefined,
  plan: (owner: O, workItems: readonly WorkItem[]) => Plan<O['status']>,
): Promise<Result | void> {
  const [namespace, name] = key.split('/') as [string, string];
  if (owner && deps.stale.isStale(key, owner.metadata.resourceVersion)) return;
  const workItems = deps.placements.workItemsOf(kind, namespace, name);
  if (!owner) {
    deps.stale.forget(key);
    for (const w of workItems.filter((w) => !w.metadata.deletionTimestamp)) await deps.client.delete('WorkItem', namespace, w.metadata.name!, { uid: w.metadata.uid });
    return;
  }
  const p = plan(owner, workItems);
  const unseenMs = deps.placements.unseenCreatesExpireInMs(workItems);
  const written = p.actions.flatMap((a) => (a.type === 'createWorkItem' || a.type === 'updateWorkItem' ? [a.workItem] : []));
  for (const w of written) deps.placements.assume(w);
  // Only a refused write is forgotten: a WorkItem written in an attempt that failed otherwise is placed all the same.
  await execute(deps, kind, owner, p.actions, p.deferStatus ? undefined : p.status, (w) => deps.placements.forget(w));
  const requeueAfterMs = earliest(p.requeueAfterMs, unseenMs === undefined ? undefined : unseenMs + 100);
  return requeueAfterMs !== undefined ? { requeueAfterMs } : undefined;
}

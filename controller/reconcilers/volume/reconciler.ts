/**
 * The Volume reconciler's I/O: reads the Volume and its replicas' WorkItems
 * from the cache (plus assumed ones), records new placements as assumed
 * before the first await, and applies planVolume's actions.
 */
import type { Volume } from '../../../api/volume.js';
import type { ControllerCache } from '../../cache.js';
import { nodeView } from '../../node-health.js';
import type { Placements } from '../../placements.js';
import type { Clock } from '../../runtime/clock.js';
import type { Result } from '../../runtime/controller.js';
import { scheduleVolumeReplicas } from '../../scheduler/index.js';
import { execute, type ExecutorDeps } from '../executor.js';
import { planVolume, type VolumeObserved } from './plan.js';

/** What the Volume reconciler reads and writes through. */
export interface VolumeReconcilerDeps extends ExecutorDeps {
  cache: ControllerCache;
  placements: Placements;
  clock: Clock;
}

/** Reconciles the Volume with key namespace/name. */
export async function reconcileVolume(deps: VolumeReconcilerDeps, key: string): Promise<Result | void> {
  const [namespace, name] = key.split('/') as [string, string];
  const volume = deps.cache.volumes.get(key);
  if (volume && deps.stale.isStale(key, volume.metadata.resourceVersion)) return;
  const workItems = deps.placements.workItemsOf('Volume', namespace, name);
  if (!volume) {
    for (const w of workItems.filter((w) => !w.metadata.deletionTimestamp)) await deps.client.delete('WorkItem', namespace, w.metadata.name!, { uid: w.metadata.uid });
    return;
  }
  const plan = planVolume(observe(deps, volume, workItems));
  const created = plan.actions.flatMap((a) => (a.type === 'createWorkItem' ? [a.workItem] : []));
  for (const w of created) deps.placements.assume(w);
  try {
    await execute(deps, 'Volume', volume, plan.actions, plan.deferStatus ? undefined : plan.status);
  } catch (err) {
    for (const w of created) deps.placements.forget(w);
    throw err;
  }
  return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : undefined;
}

function observe(deps: VolumeReconcilerDeps, volume: Volume, workItems: VolumeObserved['workItems']): VolumeObserved {
  const namespace = volume.metadata.namespace!;
  const now = deps.clock.now();
  const cluster = deps.cache.cluster(namespace);
  return {
    volume,
    cluster,
    workItems,
    node: (n) => nodeView(deps.cache.nodes.get(`${namespace}/${n}`), cluster, now),
    schedule: () => {
      const snapshot = deps.placements.snapshot(namespace);
      const self = snapshot.volumes.find((v) => v.metadata.name === volume.metadata.name) ?? volume;
      const result = scheduleVolumeReplicas({ ...volume, status: self.status }, snapshot);
      return 'unschedulable' in result ? { nodeNames: result.nodeNames, message: result.message } : { nodeNames: result.nodeNames };
    },
    now,
  };
}

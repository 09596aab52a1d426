/**
 * The Instance reconciler's I/O: reads the Instance and what planInstance
 * needs from the cache, records scheduling decisions as assumed before
 * the first await, and applies the plan. An Instance that no longer exists
 * has its leftover WorkItems deleted (an owner removed without its
 * finalizer must not leave workloads running).
 */
import type { Instance } from '../../../api/instance.js';
import { instanceLeaseName } from '../../../api/names.js';
import type { Volume } from '../../../api/volume.js';
import type { ControllerCache } from '../../cache.js';
import type { LeaseObservations } from '../../lease-observations.js';
import { leaseFreshness, nodeView } from '../../node-health.js';
import type { Placements } from '../../placements.js';
import type { Clock } from '../../runtime/clock.js';
import type { Result } from '../../runtime/controller.js';
import { scheduleInstance } from '../../scheduler/index.js';
import { execute, type ExecutorDeps } from '../executor.js';
import { planInstance, type InstanceObserved } from './plan.js';

/** What the Instance reconciler reads and writes through. */
export interface InstanceReconcilerDeps extends ExecutorDeps {
  cache: ControllerCache;
  placements: Placements;
  leases: LeaseObservations;
  clock: Clock;
}

/** Reconciles the Instance with key namespace/name. */
export async function reconcileInstance(deps: InstanceReconcilerDeps, key: string): Promise<Result | void> {
  const [namespace, name] = key.split('/') as [string, string];
  const instance = deps.cache.instances.get(key);
  if (instance && deps.stale.isStale(key, instance.metadata.resourceVersion)) return;
  const workItems = deps.placements.workItemsOf('Instance', namespace, name);
  if (!instance) {
    for (const w of workItems.filter((w) => !w.metadata.deletionTimestamp)) await deps.client.delete('WorkItem', namespace, w.metadata.name!, { uid: w.metadata.uid });
    return;
  }
  const observed = observe(deps, instance, workItems);
  const plan = planInstance(observed);
  const created = plan.actions.flatMap((a) => (a.type === 'createWorkItem' ? [a.workItem] : []));
  for (const w of created) deps.placements.assume(w);
  try {
    await execute(deps, 'Instance', instance, plan.actions, plan.deferStatus ? undefined : plan.status);
  } catch (err) {
    for (const w of created) deps.placements.forget(w);
    throw err;
  }
  return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : undefined;
}

function observe(deps: InstanceReconcilerDeps, instance: Instance, workItems: InstanceObserved['workItems']): InstanceObserved {
  const namespace = instance.metadata.namespace!;
  const now = deps.clock.now();
  const cluster = deps.cache.cluster(namespace);
  const lease = deps.leases.view(deps.cache.lease(namespace, instanceLeaseName(instance.metadata.name!)), now);
  const fencing = leaseFreshness(lease, undefined, now);
  const volumes = new Map<string, Volume>();
  for (const a of instance.spec.volumes ?? []) {
    const v = deps.cache.volumes.get(`${namespace}/${a.volumeName}`);
    if (v) volumes.set(a.volumeName, v);
  }
  return {
    instance,
    cluster,
    workItems,
    volumes,
    node: (n) => nodeView(deps.cache.nodes.get(`${namespace}/${n}`), cluster, now),
    fencing: { held: fencing.fresh, remainingMs: fencing.remainingMs },
    schedule: () => {
      const result = scheduleInstance(instance, deps.placements.snapshot(namespace));
      return 'nodeName' in result ? { nodeName: result.nodeName } : { unschedulable: true, message: result.message };
    },
    now,
  };
}

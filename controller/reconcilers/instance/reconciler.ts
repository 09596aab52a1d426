/**
 * The Instance reconciler's I/O: reads the Instance and what planInstance
 * needs from the cache, records scheduling decisions as assumed before
 * the first await, and applies the plan. An Instance that no longer exists
 * has its leftover WorkItems deleted (an owner removed without its
 * finalizer must not leave workloads running).
 */
import type { Instance } from '../../../api/instance.js';
import { instanceLeaseName, nodeLeaseName } from '../../../api/names.js';
import type { Volume } from '../../../api/volume.js';
import type { ControllerCache } from '../../cache.js';
import type { LeaseObservations } from '../../lease-observations.js';
import { leaseFreshness, nodeView } from '../../node-health.js';
import type { Clock } from '../../../runtime/clock.js';
import type { Result } from '../../../runtime/controller.js';
import { nodeCapacity, scheduleInstance } from '../../scheduler/index.js';
import { instanceFitContext, instanceFitFailure } from '../../scheduler/instance-fit.js';
import { nodeViews } from '../../scheduler/node-view.js';
import { objectKey } from '../../scheduler/snapshot.js';
import { formatQuantity, parseQuantity } from '../../../api/quantity.js';
import { reconcileOwner, type OwnerReconcileDeps } from '../owner-reconcile.js';
import type { InstanceObserved } from './observed.js';
import { planInstance } from './plan.js';

/** What the Instance reconciler reads and writes through. */
export interface InstanceReconcilerDeps extends OwnerReconcileDeps {
  cache: ControllerCache;
  leases: LeaseObservations;
  clock: Clock;
}

/** Reconciles the Instance with key namespace/name. */
export function reconcileInstance(deps: InstanceReconcilerDeps, key: string): Promise<Result | void> {
  return reconcileOwner(deps, 'Instance', key, deps.cache.instances.get(key), (instance, workItems) => planInstance(observe(deps, instance, workItems)));
}

function observe(deps: InstanceReconcilerDeps, instance: Instance, workItems: InstanceObserved['workItems']): InstanceObserved {
  const namespace = instance.metadata.namespace!;
  const now = deps.clock.now();
  const cluster = deps.cache.cluster(namespace);
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
    fencing: claimView(deps, namespace, instanceLeaseName(instance.metadata.name!), now),
    resizeRefusal: (nodeName, from, to) => resizeRefusal(deps, namespace, nodeName, from, to),
    targetRefusal: (nodeName) => migrationTargetRefusal(deps, instance, nodeName),
    schedule: () => {
      const result = scheduleInstance(instance, deps.placements.snapshot(namespace));
      return 'nodeName' in result ? { nodeName: result.nodeName } : { unschedulable: true, message: result.message };
    },
    now,
  };
}

/**
 * The instance's claim as the plan sees it: held while its holder's node lease is held by that node
 * (a missing node lease is not revoked yet: the Node reconciler revokes it by creating it holderless).
 * Claim and node lease come from the one Lease informer, so they are read at one point of etcd's
 * history: a claim its holder made again in a new term is never seen with that term's lease revoked.
 */
function claimView(deps: InstanceReconcilerDeps, namespace: string, leaseName: string, now: number): InstanceObserved['fencing'] {
  const claim = deps.cache.lease(namespace, leaseName);
  const holder = claim?.spec?.holderIdentity || undefined;
  const nodeLease = holder ? deps.cache.lease(namespace, nodeLeaseName(holder)) : undefined;
  const held = !!holder && (!nodeLease || nodeLease.spec?.holderIdentity === holder);
  const remainingMs = held ? Math.max(1000, leaseFreshness(deps.leases.view(nodeLease, now), holder, now).remainingMs) : 0;
  return { held, remainingMs, holder, leaseName, resourceVersion: claim?.metadata.resourceVersion };
}

/** Why a node cannot hold an instance grown from `from` to `to`, judged against the running usage tally. */
function resizeRefusal(deps: InstanceReconcilerDeps, namespace: string, nodeName: string, from: Resize, to: Resize): string | undefined {
  const node = deps.cache.nodes.get(`${namespace}/${nodeName}`);
  if (!node) return undefined;
  const capacity = nodeCapacity(node, deps.cache.cluster(namespace));
  const used = deps.placements.usage(namespace).get(nodeName);
  const cpus = (used?.cpus ?? 0) - from.cpus + to.cpus;
  const memory = (used?.memoryBytes ?? 0) - parseQuantity(from.memory) + parseQuantity(to.memory);
  const short = [cpus > capacity.cpus ? `${cpus} cpus of ${capacity.cpus}` : '', memory > capacity.memoryBytes ? `${formatQuantity(memory)} of ${formatQuantity(capacity.memoryBytes)} memory` : ''].filter(Boolean);
  if (short.length === 0) return undefined;
  return `resizing to ${to.cpus} cpus / ${to.memory} would need ${short.join(' and ')} on node ${nodeName}; it keeps running at ${from.cpus} cpus / ${from.memory}. To fix: lower spec.cpus or spec.memory, or move it to a roomier node (spec.placement.nodeName or drain node ${nodeName})`;
}

type Resize = { cpus: number; memory: string };

/**
 * The scheduler's verdict on one node as a migration target, against the running tally (which counts the
 * instance on its source, not on the target): eligibility, selector, anti-affinity, replicas, limits, room.
 */
function migrationTargetRefusal(deps: InstanceReconcilerDeps, instance: Instance, nodeName: string): string | undefined {
  const snapshot = deps.placements.snapshot(instance.metadata.namespace!);
  const others = { ...snapshot, instances: snapshot.instances.filter((i) => objectKey(i) !== objectKey(instance)) };
  const view = nodeViews(others).find((v) => v.name === nodeName);
  if (!view) return 'it is not registered';
  return instanceFitFailure(view, instanceFitContext(instance, others, {}));
}

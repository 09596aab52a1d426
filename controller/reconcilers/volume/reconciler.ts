/**
 * The Volume reconciler's I/O: reads the Volume and its replicas' WorkItems
 * from the cache (plus assumed ones), records new placements as assumed
 * before the first await, and applies planVolume's actions.
 */
import type { Volume } from '../../../api/volume.js';
import { glusterVolfile, type WorkItem } from '../../../api/workitem.js';
import type { ControllerCache } from '../../cache.js';
import type { FirstSeen } from '../../first-seen.js';
import { nodeView } from '../../node-health.js';
import type { Clock } from '../../../runtime/clock.js';
import type { Result } from '../../../runtime/controller.js';
import { scheduleVolumeReplicas } from '../../scheduler/index.js';
import { reconcileOwner, type OwnerReconcileDeps } from '../owner-reconcile.js';
import type { VolumeMount } from './copy-gate.js';
import { planVolume, type VolumeObserved } from './plan.js';

/** What the Volume reconciler reads and writes through. */
export interface VolumeReconcilerDeps extends OwnerReconcileDeps {
  cache: ControllerCache;
  clock: Clock;
  /** When agents' timestamps were first seen (their clocks may be off). */
  firstSeen: FirstSeen;
}

/** Reconciles the Volume with key namespace/name. */
export function reconcileVolume(deps: VolumeReconcilerDeps, key: string): Promise<Result | void> {
  const volume = deps.cache.volumes.get(key);
  if (!volume) deps.firstSeen.forget(`${key}/`);
  return reconcileOwner(deps, 'Volume', key, volume, (v, workItems) => planVolume(observe(deps, v, workItems)));
}

function observe(deps: VolumeReconcilerDeps, volume: Volume, workItems: VolumeObserved['workItems']): VolumeObserved {
  const namespace = volume.metadata.namespace!;
  const now = deps.clock.now();
  const cluster = deps.cache.cluster(namespace);
  const volumeSlots = `${namespace}/${volume.metadata.name}/${volume.metadata.uid}`;
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
    brickHome: brickHomes(deps, namespace),
    nodeAddress: (n) => deps.cache.nodes.get(`${namespace}/${n}`)?.status?.addresses?.find((a) => a.type === 'InternalIP' && !a.address.includes(':'))?.address,
    now,
    // Keyed by namespace/name (forgotten with the Volume) and uid (a Volume made anew under that name starts afresh).
    seenAt: (slot, stamp) => deps.firstSeen.at(`${volumeSlots}/${slot}`, stamp, now, Date.parse(stamp)),
    unchangedSince: (slot, value) => deps.firstSeen.at(`${volumeSlots}/${slot}`, value, now, now),
    mounts: volumeMounts(deps.cache.inNamespace(deps.cache.workItems, namespace), volume.metadata.name!),
  };
}

/** The instance WorkItems that mount gluster volume `name` (those being deleted too: their instance may still write). */
function volumeMounts(workItems: readonly WorkItem[], name: string): VolumeMount[] {
  return workItems.flatMap((w) => {
    const volfile = glusterVolfile(w, name);
    return volfile ? [{ nodeName: w.spec.nodeName, volfile, applied: w.status?.observedGeneration === w.metadata.generation }] : [];
  });
}

/**
 * Where bricks go: the node's data dir, and a port no other brick of the cluster has (unique in the
 * cluster, not only on the node: nodes that share a machine, as in a demo, share its ports), counting
 * the ports handed out in this reconcile and in others not yet seen back through the watch (assumed
 * WorkItems: two Volumes reconciled at once took the same ports, and the second brick never bound).
 */
function brickHomes(deps: VolumeReconcilerDeps, namespace: string): VolumeObserved['brickHome'] {
  let used: Set<number | undefined> | undefined;
  return (nodeName, existing) => {
    const dataDir = deps.cache.nodes.get(`${namespace}/${nodeName}`)?.status?.dataDir;
    if (!dataDir) return undefined;
    const placed = existing?.spec.volumeReplica?.brick?.port;
    if (placed) return { dataDir, port: placed };
    used ??= new Set(deps.placements.workItemsIn(namespace).map((w: WorkItem) => w.spec.volumeReplica?.brick?.port));
    let port = BRICK_PORT_BASE;
    while (used.has(port)) port++;
    used.add(port);
    return { dataDir, port };
  };
}

/**
 * Below Linux's ephemeral range (32768–60999), where an outgoing connection of any program (a
 * long-lived watch, say) may hold the port a brick is to bind and keep it from starting; glusterd's
 * own 49152 lies inside it. 24009 is where GlusterFS numbered bricks before 3.4 (24007 is glusterd's).
 */
const BRICK_PORT_BASE = 24009;

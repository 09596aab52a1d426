/**
 * Where things are, as the controller must assume it when scheduling:
 * the WorkItems in the cache, plus placements this process has just
 * written but not yet seen come back through the watch ("assumed", as
 * kube-scheduler's cache does). Without the overlay two workers reading a
 * stale cache could fill one node twice over.
 *
 * It also keeps a running tally of what the WorkItems place on each node
 * (cpus and memory of instances, storage of replicas), updated on every
 * WorkItem event and assumption, so a scheduling decision costs O(nodes),
 * not O(instances), and Node.status.allocated is read, not recomputed.
 *
 * Concurrency model: scheduling decisions are computed synchronously and
 * assumed before the first await, so no other worker can decide on a
 * tally that lacks them. An assumption is dropped once the cache holds
 * the WorkItem it stands for, or when its write failed, or after
 * ASSUMED_TTL_MS (as kube-scheduler expires an assumed Pod): a WorkItem
 * created and deleted while the watch was down is never seen by the
 * relist that follows, and would otherwise stay placed for good.
 */
import type { Instance } from '../api/instance.js';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL } from '../api/names.js';
import { parseQuantity } from '../api/quantity.js';
import type { Volume, VolumeReplicaStatus } from '../api/volume.js';
import type { WorkItem } from '../api/workitem.js';
import type { ControllerCache } from './cache.js';
import { asUpdated } from './reconcilers/actions.js';
import { emptyUsage, type ClusterSnapshot, type NodeUsage } from './scheduler/index.js';

const keyOf = (w: WorkItem) => `${w.metadata.namespace}/${w.metadata.name}`;

/** What one WorkItem places on its node. */
interface Contribution {
  namespace: string;
  nodeName: string;
  usage: NodeUsage;
}

/** A WorkItem occupies its node until it is gone (a deleting one still runs there until its agent lets go). */
function contribution(w: WorkItem): Contribution {
  const usage = emptyUsage();
  if (w.spec.type === 'InstanceRuntime' && w.spec.instance) {
    usage.cpus = w.spec.instance.cpus;
    usage.memoryBytes = parseQuantity(w.spec.instance.memory);
    usage.instances = 1;
  } else if (w.spec.volumeReplica) {
    usage.storageBytes = Math.max(parseQuantity(w.spec.volumeReplica.size), w.status?.volumeReplica?.sizeBytes ?? 0);
    usage.volumeReplicas = 1;
  }
  return { namespace: w.metadata.namespace!, nodeName: w.spec.nodeName, usage };
}

function addUsage(into: NodeUsage, u: NodeUsage, sign: 1 | -1): void {
  into.cpus += sign * u.cpus;
  into.memoryBytes += sign * u.memoryBytes;
  into.storageBytes += sign * u.storageBytes;
  into.instances += sign * u.instances;
  into.volumeReplicas += sign * u.volumeReplicas;
}

/** How long an assumption may wait for its WorkItem to show up in the cache. */
export const ASSUMED_TTL_MS = 60_000;

/** Assumed placements plus the cache: the scheduler's view of a cluster. */
export class Placements {
  private readonly assumed = new Map<string, { w: WorkItem; at: number }>();
  private readonly counted = new Map<string, Contribution>();
  private readonly tally = new Map<string, Map<string, NodeUsage>>();

  constructor(
    private readonly cache: ControllerCache,
    private readonly now: () => number = Date.now,
  ) {
    cache.workItems.addHandlers({
      add: (w) => this.observed(w),
      update: (_old, w) => this.observed(w),
      delete: (w) => {
        this.assumed.delete(keyOf(w));
        this.uncount(keyOf(w));
      },
    });
  }

  /**
   * Records a WorkItem about to be created, or written with a new spec (a resize, a grown replica), before
   * the write: two workers resizing instances on one node must each see the other's growth in the tally.
   */
  assume(workItem: WorkItem): void {
    const w = workItem.metadata.resourceVersion === undefined ? workItem : asUpdated(workItem, this.cache.workItems.get(keyOf(workItem)));
    this.assumed.set(keyOf(w), { w, at: this.now() });
    this.count(w);
  }

  /** Drops an assumption whose write was refused. */
  forget(workItem: WorkItem): void {
    const key = keyOf(workItem);
    if (!this.assumed.delete(key)) return;
    const cached = this.cache.workItems.get(key);
    if (cached) this.count(cached);
    else this.uncount(key);
  }

  /** WorkItems of one owner: cached ones (an assumed update in place of the version it was read from), plus assumed creates. */
  workItemsOf(kind: 'Instance' | 'Volume', namespace: string, name: string): readonly WorkItem[] {
    const mine = (w: WorkItem) => w.metadata.namespace === namespace && w.metadata.labels?.[OWNER_KIND_LABEL] === kind && w.metadata.labels?.[OWNER_NAME_LABEL] === name;
    return this.withAssumed(this.cache.workItemsOf(kind, namespace, name), mine);
  }

  /**
   * ms until the first of an owner's assumed creates (among `workItems`, what workItemsOf gave) that the
   * cache has not shown yet expires; undefined when there is none. A create whose answer and read-back
   * both failed stays assumed: its owner must be looked at again when that ends, as nothing else wakes
   * it (it would wait for the resync, 10 minutes).
   */
  unseenCreatesExpireInMs(workItems: readonly WorkItem[]): number | undefined {
    let first: number | undefined;
    for (const w of workItems) {
      const key = keyOf(w);
      const at = this.assumed.get(key)?.at;
      if (at !== undefined && !this.cache.workItems.get(key)) first = Math.min(first ?? Infinity, at + ASSUMED_TTL_MS - this.now());
    }
    return first === undefined ? undefined : Math.max(0, first);
  }

  /** WorkItems of one namespace, as workItemsOf. */
  workItemsIn(namespace: string): readonly WorkItem[] {
    return this.withAssumed(this.cache.inNamespace(this.cache.workItems, namespace), (w) => w.metadata.namespace === namespace);
  }

  /**
   * `cached` as this process wrote it: an assumed update stands in for the cached version it was read
   * from until the watch brings the next one (a plan seeing the old spec would resize it again, and count
   * the growth twice); assumed creates not cached yet are added. Expired assumptions are dropped first.
   * When no assumption touches it (most reads; every reconcile reads its owner's WorkItems), `cached` itself.
   */
  private withAssumed(cached: readonly WorkItem[], mine: (w: WorkItem) => boolean): readonly WorkItem[] {
    const expired = this.now() - ASSUMED_TTL_MS;
    const creates: WorkItem[] = [];
    for (const { w, at } of this.assumed.values()) {
      if (!mine(w)) continue;
      if (at <= expired) this.forget(w);
      else if (!this.cache.workItems.get(keyOf(w))) creates.push(w);
    }
    let updated: WorkItem[] | undefined;
    cached.forEach((c, i) => {
      const a = this.assumed.get(keyOf(c))?.w;
      if (a && a.metadata.resourceVersion === c.metadata.resourceVersion) (updated ??= [...cached])[i] = a;
    });
    const out = updated ?? cached;
    return creates.length === 0 ? out : [...out, ...creates];
  }

  /** What is placed on each node of a namespace. */
  usage(namespace: string): ReadonlyMap<string, NodeUsage> {
    return this.tally.get(namespace) ?? new Map();
  }

  /** The cluster as the scheduler must see it: nodes, the running tally, and the few objects it still reads. */
  snapshot(namespace: string): ClusterSnapshot {
    const usage = this.usage(namespace);
    let placedInstances = 0;
    for (const u of usage.values()) placedInstances += u.instances;
    const grouped = this.cache.groupedInstances(namespace);
    return {
      cluster: this.cache.cluster(namespace),
      nodes: this.cache.inNamespace(this.cache.nodes, namespace),
      instances: grouped.map((i) => this.withInstancePlacement(i)),
      volumes: this.cache.inNamespace(this.cache.volumes, namespace).map((v) => this.withReplicaPlacements(v)),
      usage,
      placedInstances,
    };
  }

  // Any newer version ends an assumption: an update is written at the version it was read at, so the next
  // version is either that write, or another that makes it fail with a conflict.
  private observed(w: WorkItem): void {
    this.assumed.delete(keyOf(w));
    this.count(w);
  }

  private count(w: WorkItem): void {
    const key = keyOf(w);
    this.uncount(key);
    const c = contribution(w);
    this.counted.set(key, c);
    let nodes = this.tally.get(c.namespace);
    if (!nodes) this.tally.set(c.namespace, (nodes = new Map()));
    let u = nodes.get(c.nodeName);
    if (!u) nodes.set(c.nodeName, (u = emptyUsage()));
    addUsage(u, c.usage, 1);
  }

  private uncount(key: string): void {
    const c = this.counted.get(key);
    if (!c) return;
    this.counted.delete(key);
    const u = this.tally.get(c.namespace)?.get(c.nodeName);
    if (u) addUsage(u, c.usage, -1);
  }

  private withInstancePlacement(instance: Instance): Instance {
    const nodeName = this.workItemsOf('Instance', instance.metadata.namespace!, instance.metadata.name!)[0]?.spec.nodeName;
    if (nodeName === instance.status?.nodeName) return instance;
    return { ...instance, status: { ...instance.status, nodeName } };
  }

  private withReplicaPlacements(volume: Volume): Volume {
    const items = this.workItemsOf('Volume', volume.metadata.namespace!, volume.metadata.name!);
    const replicas: VolumeReplicaStatus[] = items.map((w) => ({
      index: w.spec.volumeReplica?.index ?? 0,
      nodeName: w.spec.nodeName,
      size: w.spec.volumeReplica?.size,
      state: w.metadata.deletionTimestamp ? 'Deleting' : w.status?.phase === 'Done' ? 'Ready' : 'Creating',
      path: w.status?.volumeReplica?.path,
    }));
    return { ...volume, status: { ...volume.status, replicas } };
  }
}

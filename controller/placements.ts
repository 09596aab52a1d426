/**
 * Where things are, as the controller must assume it when scheduling:
 * the WorkItems in the cache, plus placements this process has just
 * written but not yet seen come back through the watch ("assumed", as
 * kube-scheduler's cache does). Without the overlay two workers reading a
 * stale cache could fill one node twice over.
 *
 * Concurrency model: scheduling decisions are computed synchronously and
 * assumed before the first await, so no other worker can decide on a
 * snapshot that lacks them. An assumption is dropped once the cache holds
 * the WorkItem it stands for, or when its write failed.
 */
import type { Instance } from '../api/instance.js';
import type { Volume, VolumeReplicaStatus } from '../api/volume.js';
import type { WorkItem } from '../api/workitem.js';
import type { ControllerCache } from './cache.js';
import type { ClusterSnapshot } from './scheduler/index.js';

/** A WorkItem written but perhaps not yet in the cache. */
interface Assumed {
  namespace: string;
  workItem: WorkItem;
}

/** Assumed placements plus the cache: the scheduler's view of a cluster. */
export class Placements {
  private readonly assumed = new Map<string, Assumed>();

  constructor(private readonly cache: ControllerCache) {}

  /** Records a WorkItem about to be created. */
  assume(workItem: WorkItem): void {
    this.assumed.set(`${workItem.metadata.namespace}/${workItem.metadata.name}`, { namespace: workItem.metadata.namespace!, workItem });
  }

  /** Drops an assumption (its create failed, or the cache now has it). */
  forget(workItem: WorkItem): void {
    this.assumed.delete(`${workItem.metadata.namespace}/${workItem.metadata.name}`);
  }

  /** WorkItems of a namespace: cached ones plus assumed ones not yet cached. */
  workItems(namespace: string): WorkItem[] {
    const cached = this.cache.inNamespace(this.cache.workItems, namespace);
    const out = [...cached];
    for (const [key, a] of this.assumed) {
      if (a.namespace !== namespace) continue;
      if (this.cache.workItems.get(key)) this.assumed.delete(key);
      else out.push(a.workItem);
    }
    return out;
  }

  /** The cluster as the scheduler must see it, with status placements taken from WorkItems. */
  snapshot(namespace: string): ClusterSnapshot {
    const byOwner = groupByOwner(this.workItems(namespace).filter((w) => !w.metadata.deletionTimestamp || w.metadata.finalizers?.length));
    return {
      cluster: this.cache.cluster(namespace),
      nodes: this.cache.inNamespace(this.cache.nodes, namespace),
      instances: this.cache.inNamespace(this.cache.instances, namespace).map((i) => withInstancePlacement(i, byOwner.get(`Instance/${i.metadata.name}`))),
      volumes: this.cache.inNamespace(this.cache.volumes, namespace).map((v) => withReplicaPlacements(v, byOwner.get(`Volume/${v.metadata.name}`))),
    };
  }
}

function groupByOwner(items: WorkItem[]): Map<string, WorkItem[]> {
  const map = new Map<string, WorkItem[]>();
  for (const w of items) {
    const key = `${w.spec.owner.kind}/${w.spec.owner.name}`;
    const list = map.get(key);
    if (list) list.push(w);
    else map.set(key, [w]);
  }
  return map;
}

function withInstancePlacement(instance: Instance, items: WorkItem[] | undefined): Instance {
  const nodeName = items?.[0]?.spec.nodeName;
  if (nodeName === instance.status?.nodeName) return instance;
  return { ...instance, status: { ...instance.status, nodeName } };
}

function withReplicaPlacements(volume: Volume, items: WorkItem[] | undefined): Volume {
  const replicas: VolumeReplicaStatus[] = (items ?? []).map((w) => ({
    index: w.spec.volumeReplica?.index ?? 0,
    nodeName: w.spec.nodeName,
    size: w.spec.volumeReplica?.size,
    state: w.metadata.deletionTimestamp ? 'Deleting' : w.status?.phase === 'Done' ? 'Ready' : 'Creating',
    path: w.status?.volumeReplica?.path,
  }));
  return { ...volume, status: { ...volume.status, replicas } };
}

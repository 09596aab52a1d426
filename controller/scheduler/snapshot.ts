/**
 * The scheduler's input: one cluster's objects as the caller read them from
 * its informer caches. Every scheduling function is pure and derives all it
 * knows from a snapshot, so the caller can overlay decisions it has written
 * but not yet seen come back (assumed placements) just by passing objects
 * whose status already names the new node. Nothing here is mutated.
 */
import type { Cluster, Overcommit } from '../../api/cluster.js';
import type { Instance } from '../../api/instance.js';
import type { Node } from '../../api/node.js';
import type { ObjectMeta } from '../../api/types.js';
import type { Volume } from '../../api/volume.js';

/** Resources placed on one node and how many objects hold them. */
export interface NodeUsage {
  cpus: number;
  memoryBytes: number;
  storageBytes: number;
  instances: number;
  volumeReplicas: number;
}

/** One cluster's objects, the whole input of a scheduling decision. */
export interface ClusterSnapshot {
  /** Source of policy (overcommit ratios, instance limits); absent means the defaults. */
  cluster?: Cluster;
  nodes: readonly Node[];
  /** Every Instance of the cluster; the placed ones consume resources on their nodes. */
  instances: readonly Instance[];
  /** Every Volume of the cluster; their replicas consume storage on their nodes. */
  volumes: readonly Volume[];
  /**
   * What is placed on each node, when the caller keeps it as a running
   * tally (the controller does, from WorkItems, so a decision costs O(nodes)
   * rather than O(instances)). When set, `instances` need only hold the
   * instances that matter beyond their resources (anti-affinity groups),
   * and must not include the one being scheduled.
   */
  usage?: ReadonlyMap<string, NodeUsage>;
  /** With `usage`: how many instances are placed in the cluster (for policy.maxInstances). */
  placedInstances?: number;
}

/** Options shared by the scheduling functions. */
export interface ScheduleOptions {
  /** Nodes to avoid, e.g. the node a failover or drain moves away from. */
  excludeNodes?: readonly string[];
}

/** The identity of an object within a snapshot: namespace/name. */
export function objectKey(obj: { metadata: ObjectMeta }): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}

/** The cluster's name (its namespace) for messages, falling back to the scheduled object's namespace. */
export function clusterName(snapshot: ClusterSnapshot, meta: ObjectMeta): string {
  return snapshot.cluster?.metadata.name ?? meta.namespace ?? '(unknown)';
}

/** The cluster's overcommit ratios, 1 where unset. */
export function overcommitRatios(cluster: Cluster | undefined): Required<Overcommit> {
  const o = cluster?.spec?.policy?.overcommit;
  return { cpu: o?.cpu ?? 1, memory: o?.memory ?? 1, storage: o?.storage ?? 1 };
}

/** The cluster's instance limits; 0 means unlimited, as in the CRD. */
export function instanceLimits(cluster: Cluster | undefined): { maxInstances: number; maxInstancesPerNode: number } {
  const p = cluster?.spec?.policy;
  return { maxInstances: p?.maxInstances ?? 0, maxInstancesPerNode: p?.maxInstancesPerNode ?? 0 };
}

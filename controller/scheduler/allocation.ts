/**
 * What the objects of a snapshot have placed on each node. The scheduler
 * subtracts it from capacity, and the controller writes it into
 * Node.status.allocated. It is recomputed from the objects every time
 * rather than kept as a running tally, so assumed placements overlaid by
 * the caller, deletions and replica state changes are always reflected.
 */
import type { NodeAllocated } from '../../api/node.js';
import { formatQuantity } from '../../api/quantity.js';
import { instanceNodes, occupiesStorage } from './placements.js';
import { instanceRequest, replicaStorageBytes } from './requests.js';
import type { ClusterSnapshot, NodeUsage } from './snapshot.js';

/** Nothing placed. */
export function emptyUsage(): NodeUsage {
  return { cpus: 0, memoryBytes: 0, storageBytes: 0, instances: 0, volumeReplicas: 0 };
}

/**
 * Usage per node name: every node of the snapshot (zero when empty) and
 * every other node name a placement refers to. An Instance counts on each
 * node it occupies (both ends of a migration in flight) whatever its phase
 * or runState, until its status stops naming the node; a replica counts
 * while it occupies storage (any state but Lost).
 */
export function nodeAllocation(snapshot: ClusterSnapshot): Map<string, NodeUsage> {
  const usage = new Map<string, NodeUsage>(snapshot.nodes.map((n) => [n.metadata.name ?? '', emptyUsage()]));
  const at = (nodeName: string): NodeUsage => {
    let u = usage.get(nodeName);
    if (!u) usage.set(nodeName, (u = emptyUsage()));
    return u;
  };
  for (const instance of snapshot.instances) {
    const nodes = instanceNodes(instance);
    if (nodes.length === 0) continue;
    const request = instanceRequest(instance);
    for (const nodeName of nodes) {
      const u = at(nodeName);
      u.cpus += request.cpus;
      u.memoryBytes += request.memoryBytes;
      u.instances += 1;
    }
  }
  for (const volume of snapshot.volumes) {
    for (const replica of (volume.status?.replicas ?? []).filter(occupiesStorage)) {
      const u = at(replica.nodeName!);
      u.storageBytes += replicaStorageBytes(volume, replica);
      u.volumeReplicas += 1;
    }
  }
  return usage;
}

/** A node's usage in the shape of Node.status.allocated (quantities as strings). */
export function toNodeAllocated(usage: NodeUsage): NodeAllocated {
  return {
    cpus: usage.cpus,
    memory: formatQuantity(usage.memoryBytes),
    storage: formatQuantity(usage.storageBytes),
    instances: usage.instances,
    volumeReplicas: usage.volumeReplicas,
  };
}

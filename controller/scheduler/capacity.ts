/**
 * What a node offers the scheduler: its allocatable resources (falling back
 * to its capacity per resource, for agents that report no allocatable part)
 * times the cluster's overcommit ratios, rounded down to whole cpus and
 * bytes. A resource the node does not report counts as zero, so nothing
 * that needs it fits there.
 */
import type { Cluster } from '../../api/cluster.js';
import type { Node } from '../../api/node.js';
import type { Quantity } from '../../api/types.js';
import { bytesOf } from './quantities.js';
import { objectKey, overcommitRatios } from './snapshot.js';

/** Schedulable cpus, memory and storage of a node, overcommit applied. */
export interface NodeCapacity {
  cpus: number;
  memoryBytes: number;
  storageBytes: number;
}

// Absorbs float error in products such as 100 × 0.29 = 28.999999999999996;
// ratios have few decimals, so no exact product lies this close below a
// whole unit and rounding never grants more than the exact product.
const EPSILON = 1e-9;

function scaled(value: number, ratio: number): number {
  return Math.floor(value * ratio + EPSILON);
}

// Cached objects are never changed in place (an update brings a new object), so a capacity computed
// for one node and cluster object stays right; every decision looks at every node, so this saves parsing.
const computed = new WeakMap<Node, { cluster: Cluster | undefined; capacity: NodeCapacity }>();

/** A node's schedulable resources: allocatable (else capacity) × the cluster's overcommit ratios. */
export function nodeCapacity(node: Node, cluster: Cluster | undefined): NodeCapacity {
  const known = computed.get(node);
  if (known && known.cluster === cluster) return known.capacity;
  const capacity = computeCapacity(node, cluster);
  computed.set(node, { cluster, capacity });
  return capacity;
}

function computeCapacity(node: Node, cluster: Cluster | undefined): NodeCapacity {
  const ratios = overcommitRatios(cluster);
  const { allocatable, capacity } = node.status ?? {};
  const bytes = (field: 'memory' | 'storage'): number => {
    const fromAllocatable = allocatable?.[field] !== undefined;
    const q: Quantity | undefined = fromAllocatable ? allocatable?.[field] : capacity?.[field];
    return q === undefined ? 0 : bytesOf(q, `Node ${objectKey(node)} status.${fromAllocatable ? 'allocatable' : 'capacity'}.${field}`);
  };
  return {
    cpus: scaled(allocatable?.cpus ?? capacity?.cpus ?? 0, ratios.cpu),
    memoryBytes: scaled(bytes('memory'), ratios.memory),
    storageBytes: scaled(bytes('storage'), ratios.storage),
  };
}

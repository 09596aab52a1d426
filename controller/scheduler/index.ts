/**
 * The scheduler's public API: pure functions from a ClusterSnapshot to
 * placement decisions, plus the per-node allocation the controller
 * publishes in Node.status.allocated. No I/O and no state, so reconcilers
 * may call them from any worker at any time.
 */
export { emptyUsage, nodeAllocation, toNodeAllocated } from './allocation.js';
export { nodeCapacity, type NodeCapacity } from './capacity.js';
export { isSchedulable, matchesNodeSelector, nodeEligibility, type NodeEligibility } from './eligibility.js';
export { scheduleInstance, type InstancePlacement } from './instance-placement.js';
export { pinnedNode, type Pin } from './pin.js';
export { instanceNodes, isLiveReplica, liveReplicaNodes, occupiesStorage } from './placements.js';
export { InvalidQuantityError } from './quantities.js';
export { REASON } from './reasons.js';
export { DEFAULT_INSTANCE_CPUS, DEFAULT_INSTANCE_MEMORY, instanceRequest, type InstanceRequest } from './requests.js';
export type { ClusterSnapshot, NodeUsage, ScheduleOptions } from './snapshot.js';
export { type Unschedulable } from './unschedulable-message.js';
export { scheduleVolumeReplicas, type ReplicaPlacement } from './volume-placement.js';

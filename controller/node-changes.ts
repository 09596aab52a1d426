/**
 * Which Node updates matter to the Instance and Volume loops. The
 * controller itself rewrites a node's status.allocated (a few seconds apart
 * while instances land) and its heartbeatTime, for display: placements
 * count usage from the cached Instances and Volumes, and node health reads
 * the phase and conditions. Each such write used to requeue every instance
 * on the node and every unplaced one: at 5,000 instances on 200 nodes, most
 * reconciles of a burst were these. Pure.
 */
import type { Node } from '../api/node.js';

/** Whether the update changed more of the Node than its allocation, heartbeat time and bookkeeping. */
export function changedForPlacement(old: Node, now: Node): boolean {
  return placementView(old) !== placementView(now);
}

function placementView(n: Node): string {
  const { allocated: _allocated, heartbeatTime: _heartbeat, ...status } = n.status ?? {};
  const { resourceVersion: _rv, managedFields: _mf, ...metadata } = n.metadata as Node['metadata'] & { managedFields?: unknown };
  return JSON.stringify({ spec: n.spec, metadata, status });
}

/**
 * Each node as both placements see it: the object, what is placed on it
 * and what it offers. Built once per decision so every check and the
 * scoring read the same numbers.
 */
import type { Node } from '../../api/node.js';
import { emptyUsage, nodeAllocation } from './allocation.js';
import { nodeCapacity, type NodeCapacity } from './capacity.js';
import { nodeEligibility, type NodeEligibility } from './eligibility.js';
import type { ClusterSnapshot, NodeUsage } from './snapshot.js';

/** One node with its usage, its schedulable capacity and whether it takes new placements. */
export interface NodeView {
  name: string;
  node: Node;
  /** The snapshot's own tally: read, never changed. */
  usage: Readonly<NodeUsage>;
  capacity: NodeCapacity;
  eligibility: NodeEligibility;
}

const NOTHING_PLACED: Readonly<NodeUsage> = Object.freeze(emptyUsage());

// Cached objects are replaced, never changed in place, and every decision looks at every node.
const eligibilities = new WeakMap<Node, NodeEligibility>();

function eligibilityOf(node: Node): NodeEligibility {
  let e = eligibilities.get(node);
  if (!e) eligibilities.set(node, (e = nodeEligibility(node)));
  return e;
}

// The views of a running tally's nodes, by the nodes' list: the controller's cache hands out the same list until a
// node changes, and each decision would otherwise build a view of every node (at 10,000 instances on 500 nodes, the
// controller's largest single cost). A view holds its node's tally entry, which the tally updates in place.
const tallied = new WeakMap<readonly Node[], { cluster: ClusterSnapshot['cluster']; usage: ReadonlyMap<string, NodeUsage>; views: readonly NodeView[] }>();

/** The snapshot's nodes with their usage and capacity, in input order. */
export function nodeViews(snapshot: ClusterSnapshot): readonly NodeView[] {
  const { nodes, cluster } = snapshot;
  const usage = snapshot.usage ?? nodeAllocation(snapshot);
  const known = snapshot.usage && tallied.get(nodes);
  // A node's first placement adds its tally entry: a view made before then must not go on saying it holds nothing.
  if (known && known.cluster === cluster && known.usage === usage && known.views.every((v) => v.usage === usageOf(usage, v.name))) return known.views;
  const views = nodes.map((node) => {
    const name = node.metadata.name ?? '';
    return { name, node, usage: usageOf(usage, name), capacity: nodeCapacity(node, cluster), eligibility: eligibilityOf(node) };
  });
  if (snapshot.usage) tallied.set(nodes, { cluster, usage, views });
  return views;
}

function usageOf(usage: ReadonlyMap<string, NodeUsage>, name: string): Readonly<NodeUsage> {
  return usage.get(name) ?? NOTHING_PLACED;
}

/** used/capacity, 0 for a zero capacity (only fitting nodes are scored, where used is then 0 too). */
export function usedFraction(used: number, capacity: number): number {
  return capacity > 0 ? used / capacity : 0;
}

/** Orders node names by UTF-16 code units, independent of the locale, for deterministic tie-breaks. */
export function compareNames(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

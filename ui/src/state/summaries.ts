/**
 * What the overview shows, derived from the live collections: instances
 * and volumes counted by phase, each node's cpu and memory allocation
 * against what it can give, and convergence (objects whose latest spec the
 * controller has acted on and that reached their goal). The rules follow
 * `cairn status` (cli/status/model.ts) so both tell the same story. Pure.
 */
import type { Instance } from '../../../api/instance';
import type { Node } from '../../../api/node';
import { parseQuantity } from '../../../api/quantity';
import type { Volume } from '../../../api/volume';
import { isTrue } from './conditions';

/** An amount used out of an amount available (`total` undefined when unknown). */
export interface Usage {
  used: number;
  total?: number;
}

export interface NodeCapacity {
  cpu: Usage;
  /** In bytes. */
  memory: Usage;
  instances: number;
}

/** What the instances placed on a node ask for. */
export interface PlacedLoad {
  instances: number;
  cpus: number;
  memoryBytes: number;
}

/** Objects counted by status.phase (`Pending` when the controller has not written one yet). */
export function countByPhase(items: Iterable<{ status?: { phase?: string } }>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const item of items) {
    const phase = item.status?.phase ?? 'Pending';
    counts[phase] = (counts[phase] ?? 0) + 1;
  }
  return counts;
}

/** Bytes of a quantity, or undefined when it is missing or malformed. */
export function quantityBytes(q: string | undefined): number | undefined {
  if (!q) return undefined;
  try {
    return parseQuantity(q);
  } catch {
    return undefined;
  }
}

/** The load of the instances placed on each node, keyed `namespace/node`. */
export function loadPerNode(instances: Iterable<Instance>): Map<string, PlacedLoad> {
  const loads = new Map<string, PlacedLoad>();
  for (const i of instances) {
    if (!i.status?.nodeName) continue;
    const key = `${i.metadata.namespace ?? ''}/${i.status.nodeName}`;
    const load = loads.get(key) ?? { instances: 0, cpus: 0, memoryBytes: 0 };
    load.instances += 1;
    load.cpus += i.spec.cpus ?? 1;
    load.memoryBytes += quantityBytes(i.spec.memory) ?? 0;
    loads.set(key, load);
  }
  return loads;
}

/**
 * A node's allocation against its allocatable resources (its capacity when
 * it reports no allocatable). Until the controller has counted the node's
 * allocation (a few seconds after a change), the instances placed there tell it.
 */
export function nodeCapacity(node: Node, placed: PlacedLoad | undefined): NodeCapacity {
  const allocated = node.status?.allocated;
  const available = node.status?.allocatable ?? node.status?.capacity;
  return {
    cpu: { used: allocated?.cpus ?? placed?.cpus ?? 0, total: available?.cpus },
    memory: { used: allocated ? (quantityBytes(allocated.memory) ?? 0) : (placed?.memoryBytes ?? 0), total: quantityBytes(available?.memory) },
    instances: allocated?.instances ?? placed?.instances ?? 0,
  };
}

/** Percentage of `usage` (0–100, rounded; above 100 when overcommitted), undefined when the total is unknown. */
export function usagePercent(usage: Usage): number | undefined {
  if (usage.total === undefined) return undefined;
  if (usage.total === 0) return usage.used > 0 ? 100 : 0;
  return Math.round((usage.used / usage.total) * 100);
}

interface Generational {
  metadata: { generation?: number; deletionTimestamp?: string };
  status?: { observedGeneration?: number };
}

/** Whether the controller has acted on the object's latest spec (and it is not being deleted). */
export function isCurrent(o: Generational): boolean {
  return !o.metadata.deletionTimestamp && o.status?.observedGeneration !== undefined && o.status.observedGeneration === o.metadata.generation;
}

/** An instance has converged when current and Ready, or Stopped (asked to stop, or its run completed). */
export function instanceConverged(i: Instance): boolean {
  if (!isCurrent(i)) return false;
  return i.status?.phase === 'Stopped' || (i.spec.runState !== 'Stopped' && isTrue(i, 'Ready'));
}

/** A node has converged when current, Ready and not in the middle of a drain. */
export function nodeConverged(n: Node): boolean {
  return isCurrent(n) && isTrue(n, 'Ready') && ['Ready', 'Drained'].includes(n.status?.phase ?? '');
}

/** A volume has converged when current and Ready, or — asked to stop — Stopped with every brick stopped. */
export function volumeConverged(v: Volume): boolean {
  if (!isCurrent(v)) return false;
  if (v.spec.state === 'Stopped') return v.status?.phase === 'Stopped' && (v.status.readyReplicas ?? 0) === (v.spec.replicas ?? 1);
  return isTrue(v, 'Ready');
}

export interface Pending {
  kind: 'Node' | 'Instance' | 'Volume';
  namespace?: string;
  name: string;
  phase: string;
}

export interface Convergence {
  converged: number;
  total: number;
  /** The objects still on their way. */
  pending: Pending[];
}

/** How many nodes, instances and volumes have converged, and which have not. */
export function convergence(nodes: Iterable<Node>, instances: Iterable<Instance>, volumes: Iterable<Volume>): Convergence {
  const pending: Pending[] = [];
  let total = 0;
  const check = <T extends { metadata: { name?: string; namespace?: string }; status?: { phase?: string } }>(kind: Pending['kind'], items: Iterable<T>, converged: (o: T) => boolean) => {
    for (const o of items) {
      total++;
      if (!converged(o)) pending.push({ kind, namespace: o.metadata.namespace, name: o.metadata.name ?? '', phase: o.status?.phase ?? 'Pending' });
    }
  };
  check('Node', nodes, nodeConverged);
  check('Instance', instances, instanceConverged);
  check('Volume', volumes, volumeConverged);
  return { converged: total - pending.length, total, pending };
}

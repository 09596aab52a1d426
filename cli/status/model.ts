/**
 * The cluster at a glance, computed from one read of the objects: nodes
 * with their allocation, instances and volumes by phase, how many objects
 * have converged, and what is failing. Also the one-line state of an object
 * that the plain-text watch logs when it changes. Pure.
 */
import type { Instance } from '../../api/instance.js';
import type { Node } from '../../api/node.js';
import { formatQuantity, parseQuantity } from '../../api/quantity.js';
import type { Condition } from '../../api/types.js';
import type { Volume } from '../../api/volume.js';
import type { WorkItem } from '../../api/workitem.js';
import { collectFailures, isFailureCondition, type Failure } from './failures.js';
import type { StatusKey, StatusObject, StatusObjects } from './snapshot.js';

/** An amount used out of an amount available; `total` undefined when unknown. */
export interface Usage {
  used: number;
  total?: number;
  /** How to print them, e.g. `512Mi` / `4Gi`. */
  usedText: string;
  totalText?: string;
}

/** One node's line. */
export interface NodeSummary {
  namespace?: string;
  name: string;
  phase: string;
  cordoned: boolean;
  cpu: Usage;
  memory: Usage;
  instances: number;
}

/** A Cluster's name and phase. */
export interface ClusterSummary {
  name: string;
  phase: string;
}

/** An object that has not converged yet, with its state. */
export interface Unconverged {
  kind: string;
  namespace?: string;
  name: string;
  state: string;
}

/** What `status` shows. */
export interface StatusSummary {
  clusters: ClusterSummary[];
  nodes: NodeSummary[];
  instances: { total: number; byPhase: Record<string, number> };
  volumes: { total: number; byPhase: Record<string, number> };
  convergence: { converged: number; total: number; pending: Unconverged[] };
  failures: Failure[];
}

interface Generational {
  metadata: { generation?: number; deletionTimestamp?: string };
  status?: { observedGeneration?: number; conditions?: Condition[] };
}

function ready(o: Generational): boolean {
  return o.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
}

function current(o: Generational): boolean {
  return !o.metadata.deletionTimestamp && o.status?.observedGeneration !== undefined && o.status.observedGeneration === o.metadata.generation;
}

/**
 * Whether an object has converged: the controller has seen its latest spec
 * and it is Ready — for an instance asked to stop, or one whose run completed
 * (exit 0 under restartPolicy Never/OnFailure), Stopped; for a node, Ready and
 * not in the middle of a drain; for a volume asked to stop, Stopped with
 * every brick stopped.
 */
export function isConverged(key: 'nodes' | 'instances' | 'volumes', obj: Node | Instance | Volume): boolean {
  if (!current(obj)) return false;
  if (key === 'instances') {
    const i = obj as Instance;
    return i.status?.phase === 'Stopped' || (i.spec.runState !== 'Stopped' && ready(i));
  }
  if (key === 'nodes') return ready(obj) && ['Ready', 'Drained'].includes((obj as Node).status?.phase ?? '');
  const v = obj as Volume;
  // A volume stopped as asked: every brick stopped (a stopped brick's replica counts Ready).
  if (v.spec.state === 'Stopped') return v.status?.phase === 'Stopped' && (v.status.readyReplicas ?? 0) === (v.spec.replicas ?? 1);
  return ready(obj);
}

function countBy(items: Array<{ status?: { phase?: string } }>): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const i of items) {
    const phase = i.status?.phase ?? 'Pending';
    counts[phase] = (counts[phase] ?? 0) + 1;
  }
  return counts;
}

function quantityUsage(used: string | undefined, total: string | undefined): Usage {
  const bytes = (q: string | undefined) => (q ? safeBytes(q) : undefined);
  return { used: bytes(used) ?? 0, total: bytes(total), usedText: used ?? '0', totalText: total };
}

function safeBytes(q: string): number | undefined {
  try {
    return parseQuantity(q);
  } catch {
    return undefined;
  }
}

/** What the instances placed on a node ask for. */
interface PlacedLoad {
  instances: number;
  cpus: number;
  memoryBytes: number;
}

// Until the controller has counted a node's allocation (it does so a few seconds after a change), the
// instances placed there tell it.
function nodeSummary(n: Node, placed: PlacedLoad | undefined): NodeSummary {
  const allocated = n.status?.allocated ?? (placed && { instances: placed.instances, cpus: placed.cpus, memory: formatQuantity(placed.memoryBytes) });
  const allocatable = n.status?.allocatable ?? n.status?.capacity;
  const cpus = allocated?.cpus ?? 0;
  return {
    namespace: n.metadata.namespace,
    name: n.metadata.name ?? '',
    phase: n.status?.phase ?? 'NotReady',
    cordoned: !!n.spec?.unschedulable || !!n.spec?.drain,
    cpu: { used: cpus, total: allocatable?.cpus, usedText: String(cpus), totalText: allocatable?.cpus?.toString() },
    memory: quantityUsage(allocated?.memory, allocatable?.memory),
    instances: allocated?.instances ?? 0,
  };
}

function loadPerNode(instances: Instance[]): Map<string, PlacedLoad> {
  const loads = new Map<string, PlacedLoad>();
  for (const i of instances) {
    if (!i.status?.nodeName) continue;
    const key = `${i.metadata.namespace}/${i.status.nodeName}`;
    const load = loads.get(key) ?? { instances: 0, cpus: 0, memoryBytes: 0 };
    load.instances += 1;
    load.cpus += i.spec.cpus ?? 1;
    load.memoryBytes += i.spec.memory ? (safeBytes(i.spec.memory) ?? 0) : 0;
    loads.set(key, load);
  }
  return loads;
}

function convergence(objects: StatusObjects): StatusSummary['convergence'] {
  const kinds = [
    ['nodes', 'node', objects.nodes],
    ['instances', 'instance', objects.instances],
    ['volumes', 'volume', objects.volumes],
  ] as const;
  let total = 0;
  const pending: Unconverged[] = [];
  for (const [key, kind, items] of kinds) {
    for (const obj of items) {
      total++;
      if (!isConverged(key, obj)) pending.push({ kind, namespace: obj.metadata.namespace, name: obj.metadata.name ?? '', state: stateOf(key, obj) });
    }
  }
  return { converged: total - pending.length, total, pending };
}

/** The summary `status` shows. */
export function summarize(objects: StatusObjects): StatusSummary {
  const perNode = loadPerNode(objects.instances);
  return {
    clusters: objects.clusters.map((c) => ({ name: c.metadata.name ?? '', phase: c.status?.phase ?? 'Pending' })),
    nodes: objects.nodes.map((n) => nodeSummary(n, perNode.get(`${n.metadata.namespace}/${n.metadata.name}`))),
    instances: { total: objects.instances.length, byPhase: countBy(objects.instances) },
    volumes: { total: objects.volumes.length, byPhase: countBy(objects.volumes) },
    convergence: convergence(objects),
    failures: collectFailures(objects),
  };
}

/** Whether everything has converged and nothing fails: what --until-converged waits for. */
export function isSettled(s: StatusSummary): boolean {
  return s.convergence.converged === s.convergence.total && s.failures.length === 0;
}

/**
 * An object's state in a few words, e.g. `Running`, `Pending (Unschedulable)`,
 * `Ready,SchedulingDisabled`, `Failed (NoSpace)`: what a change line shows.
 */
export function stateOf(key: StatusKey, obj: StatusObject): string {
  if (key === 'workItems') {
    const w = obj as WorkItem;
    const phase = w.status?.phase ?? 'Queued';
    return w.status?.lastError && phase === 'Failed' ? `${phase} (${w.status.lastError.reason})` : phase;
  }
  const phase = (obj.status as { phase?: string } | undefined)?.phase ?? 'Pending';
  if (key === 'volumes') {
    const heal = healProgress(obj as Volume);
    if (heal) return `${phase} (${heal})`;
  }
  if (key === 'nodes' && ((obj as Node).spec?.unschedulable || (obj as Node).spec?.drain)) return `${phase},SchedulingDisabled`;
  const failing = obj.status?.conditions?.find(isFailureCondition);
  return failing && failing.reason !== phase ? `${phase} (${failing.reason})` : phase;
}

/** A change worth a line in the plain-text watch. */
export interface StateChange {
  kind: string;
  namespace?: string;
  name: string;
  /** Undefined for a new object. */
  from?: string;
  /** Undefined for a deleted object. */
  to?: string;
}

const KIND_WORDS: Record<StatusKey, string> = { clusters: 'cluster', nodes: 'node', instances: 'instance', volumes: 'volume', workItems: 'workitem' };

/**
 * The change between two versions of an object, or undefined when its state
 * did not change. WorkItems are the controller's internals: only their
 * failures (and recoveries) are worth a line.
 */
export function stateChange(key: StatusKey, before: StatusObject | undefined, after: StatusObject | undefined): StateChange | undefined {
  const obj = (after ?? before)!;
  const from = before && stateOf(key, before);
  const to = after && stateOf(key, after);
  if (from === to) return undefined;
  if (key === 'workItems' && !from?.startsWith('Failed') && !to?.startsWith('Failed')) return undefined;
  return { kind: KIND_WORDS[key], namespace: obj.metadata.namespace, name: obj.metadata.name ?? '', from, to };
}

/** `healing, 12 entries left` while a gluster Volume heals (reason HealPending): the count falls as the heal goes on. */
function healProgress(v: Volume): string | undefined {
  if (v.status?.conditions?.find((c) => c.type === 'Degraded' && c.status === 'True')?.reason !== 'HealPending') return undefined;
  const left = (v.status.replicas ?? []).reduce((n, r) => n + (r.brick?.pendingHeals ?? 0), 0);
  return `healing, ${left} ${left === 1 ? 'entry' : 'entries'} left`;
}

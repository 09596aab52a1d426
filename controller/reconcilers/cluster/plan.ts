/**
 * Cluster status and deletion, pure. Status: counts of nodes, instances and
 * volumes by state, capacity and allocation totals, a phase and a Ready
 * condition. Deletion (finalizer cairn.dev/cluster-cleanup): every
 * Instance and Volume of the cluster's namespace is deleted first (their
 * own finalizers take their WorkItems down), then Nodes; then what else
 * the namespace holds (Secrets, ConfigMaps, Roles, RoleBindings, and the
 * Tokens bound to the cluster: contents.ts) and its Leases; the finalizer
 * is dropped when nothing is left but Events (which expire).
 */
import type { Cluster, ClusterCounts, ClusterPhase, ClusterStatus } from '../../../api/cluster.js';
import { setCondition } from '../../../api/conditions.js';
import type { Instance } from '../../../api/instance.js';
import { CLUSTER_FINALIZER } from '../../../api/names.js';
import type { Node } from '../../../api/node.js';
import { formatQuantity, parseQuantity } from '../../../api/quantity.js';
import type { Resources } from '../../../api/types.js';
import type { Volume } from '../../../api/volume.js';
import type { WorkItem } from '../../../api/workitem.js';
import type { ClusterContent } from './contents.js';

/** Everything the plan looks at. */
export interface ClusterObserved {
  cluster: Cluster;
  nodes: readonly Node[];
  instances: readonly Instance[];
  volumes: readonly Volume[];
  workItems: readonly WorkItem[];
  /** Names of the Leases (heartbeat, fencing) in the cluster's namespace. */
  leases?: string[];
  /** While deleting, once its Nodes are gone: what else the namespace holds, and the Tokens bound to it (undefined: not listed). */
  contents?: ClusterContent[];
  now: number;
}

/** One write of the Cluster reconciler. */
export type ClusterAction =
  | { type: 'addFinalizer' }
  | { type: 'removeFinalizer' }
  | { type: 'delete'; kind: 'Instance' | 'Volume' | 'Node' | 'Lease'; name: string }
  | { type: 'deleteContent'; content: ClusterContent };

/** Actions and the status to write. */
export interface ClusterPlan {
  actions: ClusterAction[];
  status: ClusterStatus;
}

/** The Cluster reconciler's decisions. */
export function planCluster(o: ClusterObserved): ClusterPlan {
  const actions: ClusterAction[] = [];
  const deleting = !!o.cluster.metadata.deletionTimestamp;
  const hasFinalizer = o.cluster.metadata.finalizers?.includes(CLUSTER_FINALIZER) ?? false;
  if (deleting) actions.push(...deletionActions(o, hasFinalizer));
  else if (!hasFinalizer) actions.push({ type: 'addFinalizer' });
  return { actions, status: clusterStatus(o, deleting) };
}

function deletionActions(o: ClusterObserved, hasFinalizer: boolean): ClusterAction[] {
  const live = <T extends { metadata: { deletionTimestamp?: string; name?: string } }>(list: readonly T[]) => list.filter((x) => !x.metadata.deletionTimestamp);
  const workloads = [...o.instances, ...o.volumes];
  const actions: ClusterAction[] = [
    ...live(o.instances).map((i) => ({ type: 'delete' as const, kind: 'Instance' as const, name: i.metadata.name! })),
    ...live(o.volumes).map((v) => ({ type: 'delete' as const, kind: 'Volume' as const, name: v.metadata.name! })),
  ];
  if (workloads.length > 0 || o.workItems.length > 0) return actions;
  actions.push(...live(o.nodes).map((n) => ({ type: 'delete' as const, kind: 'Node' as const, name: n.metadata.name! })));
  if (o.nodes.length > 0 || !hasFinalizer || !o.contents) return actions;
  actions.push(...o.contents.map((content) => ({ type: 'deleteContent' as const, content })));
  // Last, the leases of its nodes and instances (an agent still running may recreate its heartbeat until the Cluster is gone).
  actions.push(...(o.leases ?? []).map((name) => ({ type: 'delete' as const, kind: 'Lease' as const, name })));
  actions.push({ type: 'removeFinalizer' });
  return actions;
}

function count<T>(list: readonly T[], pred: (x: T) => boolean): number {
  return list.filter(pred).length;
}

function counts(o: ClusterObserved): ClusterCounts {
  const { nodes, instances, volumes } = o;
  return {
    nodes: nodes.length,
    nodesReady: count(nodes, (n) => n.status?.phase === 'Ready'),
    nodesUnreachable: count(nodes, (n) => n.status?.phase === 'Unreachable'),
    nodesUnschedulable: count(nodes, (n) => !!n.spec?.unschedulable || !!n.spec?.drain),
    instances: instances.length,
    instancesRunning: count(instances, (i) => i.status?.phase === 'Running'),
    instancesPending: count(instances, (i) => !i.status?.phase || ['Pending', 'Scheduled', 'Starting'].includes(i.status.phase)),
    instancesFailed: count(instances, (i) => i.status?.phase === 'Failed'),
    volumes: volumes.length,
    volumesReady: count(volumes, (v) => v.status?.phase === 'Ready'),
    volumesDegraded: count(volumes, (v) => v.status?.phase === 'Degraded'),
    volumesFailed: count(volumes, (v) => v.status?.phase === 'Failed'),
  };
}

function sum(resources: Array<Resources | undefined>): Resources {
  let cpus = 0;
  let memory = 0;
  let storage = 0;
  for (const r of resources) {
    cpus += r?.cpus ?? 0;
    memory += r?.memory ? parseQuantity(r.memory) : 0;
    storage += r?.storage ? parseQuantity(r.storage) : 0;
  }
  return { cpus, memory: formatQuantity(memory), storage: formatQuantity(storage) };
}

function phaseAndReadiness(c: ClusterCounts, deleting: boolean): { phase: ClusterPhase; ready: boolean; reason: string; message: string } {
  if (deleting) return { phase: 'Deleting', ready: false, reason: 'Deleting', message: `deleting ${c.instances} instance(s), ${c.volumes} volume(s) and ${c.nodes} node(s)` };
  if (!c.nodesReady) return { phase: 'Pending', ready: false, reason: 'NoReadyNodes', message: 'no Ready nodes: start `cairn agent --cluster <name>` on at least one machine' };
  const problems = [
    c.nodesUnreachable ? `${c.nodesUnreachable} node(s) unreachable` : '',
    c.instancesFailed ? `${c.instancesFailed} instance(s) failed` : '',
    c.volumesDegraded ? `${c.volumesDegraded} volume(s) degraded` : '',
    c.volumesFailed ? `${c.volumesFailed} volume(s) failed` : '',
  ].filter(Boolean);
  if (problems.length) return { phase: 'Degraded', ready: true, reason: 'Degraded', message: `${problems.join(', ')}; run \`cairn failures\` for details` };
  return { phase: 'Ready', ready: true, reason: 'Ready', message: `${c.nodesReady}/${c.nodes} nodes ready, ${c.instancesRunning}/${c.instances} instances running` };
}

function clusterStatus(o: ClusterObserved, deleting: boolean): ClusterStatus {
  const c = counts(o);
  const r = phaseAndReadiness(c, deleting);
  const generation = o.cluster.metadata.generation;
  const conditions = setCondition(
    o.cluster.status?.conditions,
    { type: 'Ready', status: r.ready ? 'True' : 'False', reason: r.reason, message: r.message, observedGeneration: generation },
    new Date(o.now),
  );
  return {
    observedGeneration: generation,
    phase: r.phase,
    message: r.message,
    counts: c,
    capacity: sum(o.nodes.map((n) => n.status?.allocatable ?? n.status?.capacity)),
    allocated: sum(o.nodes.map((n) => n.status?.allocated)),
    conditions,
  };
}

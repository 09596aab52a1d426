/** Builders of the objects the scheduler tests feed in (not a test file itself). */
import type { Cluster, ClusterPolicy } from '../../../../api/cluster.js';
import type { Instance, InstanceSpec, InstanceStatus } from '../../../../api/instance.js';
import type { Node, NodePhase } from '../../../../api/node.js';
import type { Resources } from '../../../../api/types.js';
import type { ReplicaState, Volume, VolumeSpec, VolumeReplicaStatus } from '../../../../api/volume.js';
import type { ClusterSnapshot } from '../../../../controller/scheduler/index.js';

/** Namespace (= cluster name) of every object built here. */
export const NS = 'c1';

/** What a test says about a node; everything else defaults to a Ready node with 4 cpus, 8Gi memory, 100Gi storage. */
export interface NodeOptions {
  cpus?: number;
  memory?: string;
  storage?: string;
  labels?: Record<string, string>;
  phase?: NodePhase;
  ready?: 'True' | 'False' | 'Unknown' | 'absent';
  unschedulable?: boolean;
  drain?: boolean;
  deleting?: boolean;
  /** Replaces status.allocatable; capacity keeps the defaults. */
  allocatable?: Resources;
}

/** A Node named `name`. */
export function node(name: string, o: NodeOptions = {}): Node {
  const ready = o.ready ?? 'True';
  return {
    kind: 'Node',
    metadata: { name, namespace: NS, labels: o.labels, ...(o.deleting ? { deletionTimestamp: '2024-01-01T00:00:00Z' } : {}) },
    spec: { unschedulable: o.unschedulable, drain: o.drain },
    status: {
      phase: o.phase ?? 'Ready',
      capacity: { cpus: o.cpus ?? 4, memory: o.memory ?? '8Gi', storage: o.storage ?? '100Gi' },
      allocatable: o.allocatable,
      conditions: ready === 'absent' ? [] : [{ type: 'Ready', status: ready, lastTransitionTime: '2024-01-01T00:00:00Z', reason: 'Test', message: '' }],
    },
  };
}

/** An Instance named `name`, optionally placed on `nodeName`. */
export function instance(name: string, spec: InstanceSpec = {}, status: InstanceStatus = {}): Instance {
  return { kind: 'Instance', metadata: { name, namespace: NS }, spec, status };
}

/** A copy of an Instance placed on a node, as the caller overlays an assumed placement. */
export function placedOn(inst: Instance, nodeName: string): Instance {
  return { ...inst, status: { ...inst.status, nodeName } };
}

/** A Volume named `name` with replicas on the given nodes (state Ready unless given). */
export function volume(name: string, spec: Partial<VolumeSpec> = {}, replicas: ReadonlyArray<string | [string, ReplicaState]> = []): Volume {
  const status: VolumeReplicaStatus[] = replicas.map((r, index) => {
    const [nodeName, state] = typeof r === 'string' ? [r, 'Ready' as const] : r;
    return { index, nodeName, state };
  });
  return { kind: 'Volume', metadata: { name, namespace: NS }, spec: { size: '10Gi', driver: 'file', ...spec }, status: { replicas: status } };
}

/** A Cluster named NS with the given policy. */
export function cluster(policy: ClusterPolicy = {}): Cluster {
  return { kind: 'Cluster', metadata: { name: NS }, spec: { policy } };
}

/** A snapshot; unspecified lists are empty. */
export function snapshot(parts: Partial<ClusterSnapshot>): ClusterSnapshot {
  return { nodes: [], instances: [], volumes: [], ...parts };
}

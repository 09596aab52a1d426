/** Objects as the controller and agents leave them, for the status and failures unit tests. */
import type { Cluster } from '../../../api/cluster.js';
import type { Instance } from '../../../api/instance.js';
import type { Node, NodePhase } from '../../../api/node.js';
import type { Condition } from '../../../api/types.js';
import type { Volume } from '../../../api/volume.js';
import type { WorkItem, WorkItemError } from '../../../api/workitem.js';
import type { StatusObjects } from '../../../cli/status/snapshot.js';

const T = '2024-05-01T12:00:00Z';

/** A condition with a fixed transition time. */
export function cond(type: string, status: Condition['status'], reason: string, message = ''): Condition {
  return { type, status, reason, message, lastTransitionTime: T };
}

/** A Ready node with 4 cpus and 4Gi, `cpus` of them allocated. */
export function node(name: string, o: { phase?: NodePhase; cpus?: number; cordoned?: boolean; ready?: Condition; generation?: number } = {}): Node {
  return {
    kind: 'Node',
    metadata: { name, namespace: 'demo', generation: o.generation ?? 1 },
    spec: o.cordoned ? { unschedulable: true } : {},
    status: {
      observedGeneration: 1,
      phase: o.phase ?? 'Ready',
      allocatable: { cpus: 4, memory: '4Gi' },
      allocated: { cpus: o.cpus ?? 0, memory: `${(o.cpus ?? 0) * 512}Mi`, instances: o.cpus ?? 0 },
      conditions: [o.ready ?? cond('Ready', 'True', 'NodeLeaseRenewed')],
    },
  };
}

/** An instance in `phase` with the given conditions (Ready=True Running by default). */
export function instance(name: string, o: { phase?: string; conditions?: Condition[]; generation?: number; nodeName?: string; runState?: 'Running' | 'Stopped' } = {}): Instance {
  return {
    kind: 'Instance',
    metadata: { name, namespace: 'demo', generation: o.generation ?? 1 },
    spec: { runState: o.runState ?? 'Running', process: { command: ['sleep', '600'] } },
    status: {
      observedGeneration: 1,
      phase: (o.phase ?? 'Running') as never,
      nodeName: o.nodeName,
      conditions: o.conditions ?? [cond('Scheduled', 'True', 'Scheduled'), cond('Ready', 'True', 'Running')],
    },
  };
}

/** The instance the scheduler cannot place. */
export function unschedulableInstance(name: string, message = '0/2 nodes are available: 2 insufficient cpu.'): Instance {
  return instance(name, { phase: 'Pending', conditions: [cond('Scheduled', 'False', 'Unschedulable', message), cond('Ready', 'False', 'Unschedulable', message)] });
}

/** A volume in `phase` with the given conditions (Ready by default). */
export function volume(name: string, o: { phase?: string; conditions?: Condition[] } = {}): Volume {
  return {
    kind: 'Volume',
    metadata: { name, namespace: 'demo', generation: 1 },
    spec: { size: '1Gi' },
    status: { observedGeneration: 1, phase: (o.phase ?? 'Ready') as never, conditions: o.conditions ?? [cond('Ready', 'True', 'ReplicasReady')] },
  };
}

/** The volume too big for any node. */
export function tooBigVolume(name: string): Volume {
  const message = '0/2 nodes are available: 2 insufficient storage. 1 of 1 replicas is still missing.';
  return volume(name, { phase: 'Pending', conditions: [cond('Ready', 'False', 'Pending', message), cond('Scheduled', 'False', 'Unschedulable', message), cond('SpecAccepted', 'True', 'Accepted')] });
}

/** A WorkItem of instance `owner` on `nodeName` in `phase`. */
export function workItem(name: string, nodeName: string, phase: 'Queued' | 'InProgress' | 'Done' | 'Failed', error?: WorkItemError): WorkItem {
  return {
    kind: 'WorkItem',
    metadata: { name, namespace: 'demo', generation: 1 },
    spec: { nodeName, type: 'InstanceRuntime', owner: { kind: 'Instance', name: name.replace(/-.*/, '') } },
    status: { phase, attempts: 3, ...(error ? { lastError: error } : {}) },
  };
}

/** A Ready Cluster named demo. */
export function cluster(o: { phase?: 'Pending' | 'Ready'; ready?: Condition } = {}): Cluster {
  return { kind: 'Cluster', metadata: { name: 'demo', generation: 1 }, status: { phase: o.phase ?? 'Ready', conditions: [o.ready ?? cond('Ready', 'True', 'Ready')] } };
}

/** StatusObjects with the given parts (the rest empty). */
export function objects(parts: Partial<StatusObjects>): StatusObjects {
  return { clusters: [], nodes: [], instances: [], volumes: [], workItems: [], ...parts };
}

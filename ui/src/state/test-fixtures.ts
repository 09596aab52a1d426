/** Small builders of API objects for the unit tests (not a test file itself). */
import type { Instance, InstancePhase } from '../../../api/instance';
import type { Node, NodePhase } from '../../../api/node';
import type { Condition } from '../../../api/types';
import type { Volume, VolumePhase } from '../../../api/volume';
import type { ErrorReason, WorkItem } from '../../../api/workitem';

export function condition(type: string, status: Condition['status'], reason = 'Test', message = ''): Condition {
  return { type, status, reason, message, lastTransitionTime: '2024-05-01T12:00:00Z' };
}

interface InstanceOptions {
  phase?: InstancePhase;
  node?: string;
  runState?: 'Running' | 'Stopped';
  ready?: boolean;
  generation?: number;
  observed?: number;
  cpus?: number;
  memory?: string;
  driver?: 'process' | 'qemu';
  conditions?: Condition[];
  namespace?: string;
}

export function instance(name: string, o: InstanceOptions = {}): Instance {
  const generation = o.generation ?? 1;
  return {
    metadata: { name, namespace: o.namespace ?? 'demo', generation, resourceVersion: '1' },
    spec: { runState: o.runState ?? 'Running', driver: o.driver ?? 'process', cpus: o.cpus ?? 1, memory: o.memory ?? '128Mi' },
    status: {
      phase: o.phase,
      nodeName: o.node,
      observedGeneration: o.observed ?? generation,
      conditions: o.conditions ?? (o.ready === undefined ? [] : [condition('Ready', o.ready ? 'True' : 'False')]),
    },
  };
}

interface NodeOptions {
  phase?: NodePhase;
  ready?: boolean;
  cpus?: number;
  memory?: string;
  allocated?: { cpus?: number; memory?: string; instances?: number };
  unschedulable?: boolean;
  drain?: boolean;
  namespace?: string;
}

export function node(name: string, o: NodeOptions = {}): Node {
  return {
    metadata: { name, namespace: o.namespace ?? 'demo', generation: 1, resourceVersion: '1' },
    spec: { unschedulable: o.unschedulable ?? false, drain: o.drain ?? false },
    status: {
      phase: o.phase ?? 'Ready',
      observedGeneration: 1,
      allocatable: { cpus: o.cpus ?? 4, memory: o.memory ?? '8Gi' },
      allocated: o.allocated,
      conditions: [condition('Ready', (o.ready ?? true) ? 'True' : 'False')],
    },
  };
}

export function volume(name: string, phase: VolumePhase, ready: boolean, extra: Partial<Volume['status']> = {}): Volume {
  return {
    metadata: { name, namespace: 'demo', generation: 1, resourceVersion: '1' },
    spec: { size: '1Gi', replicas: 3 },
    status: { phase, observedGeneration: 1, conditions: [condition('Ready', ready ? 'True' : 'False')], ...extra },
  };
}

export function workItem(name: string, phase: 'Queued' | 'InProgress' | 'Done' | 'Failed', error?: { reason: ErrorReason; message: string; hint?: string }): WorkItem {
  return {
    metadata: { name, namespace: 'demo' },
    spec: { nodeName: 'node-b', type: 'InstanceRuntime', owner: { kind: 'Instance', name: name.split('.')[0] ?? name } },
    status: { phase, attempts: 3, lastError: error },
  };
}

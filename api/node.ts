/** The Node kind: one machine, registered by its agent. Field for field its CRD in crds/. */
import type { Accelerator } from './cluster.js';
import type { CairnObjectBase, Condition, Resources, Time } from './types.js';

/** Desired state of a Node: cordon and drain. */
export interface NodeSpec {
  unschedulable?: boolean;
  /** Declarative drain request; implies unschedulable while true. */
  drain?: boolean;
}

/** Phase of a Node. */
export type NodePhase = 'Ready' | 'NotReady' | 'Unreachable' | 'Draining' | 'Drained';

/** What the scheduler has placed on a node. */
export interface NodeAllocated extends Resources {
  instances?: number;
  volumeReplicas?: number;
}

/** One address of a node. */
export interface NodeAddress {
  type: 'Hostname' | 'InternalIP' | 'ExternalIP';
  address: string;
}

/** Name of an agent driver. */
export type DriverName = 'process' | 'qemu' | 'file' | 'gluster';

/** One driver of an agent and whether it works on the node. */
export interface NodeDriver {
  name: DriverName;
  available: boolean;
  version?: string;
  message?: string;
}

/** Facts about a node's machine. */
export interface NodeInfo {
  hostname?: string;
  architecture?: string;
  kernelVersion?: string;
  osImage?: string;
  bootID?: string;
}

/** Progress of a node drain. */
export interface NodeDrainStatus {
  startedAt?: Time;
  finishedAt?: Time;
  instancesRemaining?: number;
  message?: string;
}

/** Observed state of a Node; machine facts from the agent, the rest from the controller. */
export interface NodeStatus {
  observedGeneration?: number;
  phase?: NodePhase;
  message?: string;
  capacity?: Resources;
  allocatable?: Resources;
  allocated?: NodeAllocated;
  addresses?: NodeAddress[];
  agentVersion?: string;
  accelerator?: Accelerator;
  drivers?: NodeDriver[];
  nodeInfo?: NodeInfo;
  dataDir?: string;
  agentStartTime?: Time;
  heartbeatTime?: Time;
  drain?: NodeDrainStatus;
  conditions?: Condition[];
}

/** One machine of a cluster. spec defaults to {}. */
export interface Node extends CairnObjectBase<'Node'> {
  spec?: NodeSpec;
  status?: NodeStatus;
}

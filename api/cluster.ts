/** The Cluster kind: a managed cluster, whose name is the namespace of everything in it. Field for field its CRD in crds/. */
import type { CairnObjectBase, Condition, Resources } from './types.js';

/** Overcommit ratios of schedulable to physical resources (default 1 each). */
export interface Overcommit {
  cpu?: number;
  memory?: number;
  storage?: number;
}

/** Limits and overcommit ratios the scheduler honours. */
export interface ClusterPolicy {
  /** 0 or unset: unlimited. */
  maxInstances?: number;
  /** 0 or unset: unlimited. */
  maxInstancesPerNode?: number;
  overcommit?: Overcommit;
}

/** Failure-detection timings of a cluster. */
export interface FailureDetection {
  /** Default 2. */
  heartbeatIntervalSeconds?: number;
  /** Default 10. */
  nodeLeaseDurationSeconds?: number;
  /** Default 0. */
  failoverGracePeriodSeconds?: number;
}

/** What the controller does with the workloads of lost nodes. */
export interface ClusterFailover {
  /** Default true. */
  enabled?: boolean;
  /** Default true. */
  recreateLostReplicas?: boolean;
}

/** Accelerator choice of a VM; auto probes KVM and falls back to TCG. */
export type AcceleratorChoice = 'auto' | 'kvm' | 'tcg';
/** Accelerator actually in use. */
export type Accelerator = 'kvm' | 'tcg';

/** Cluster-wide defaults for the qemu section of Instances. */
export interface QemuDefaults {
  /** Default auto. */
  accelerator?: AcceleratorChoice;
  /** Default q35. */
  machine?: string;
  cpuModel?: string;
  kernel?: string;
  initrd?: string;
  cmdline?: string;
}

/** Defaults for Instance fields a spec leaves unset. */
export interface DriverDefaults {
  qemu?: QemuDefaults;
}

/** Desired state of a Cluster. */
export interface ClusterSpec {
  policy?: ClusterPolicy;
  failureDetection?: FailureDetection;
  failover?: ClusterFailover;
  driverDefaults?: DriverDefaults;
}

/** Phase of a Cluster. */
export type ClusterPhase = 'Pending' | 'Ready' | 'Degraded' | 'Deleting';

/** Numbers of resources in a cluster by state. */
export interface ClusterCounts {
  nodes?: number;
  nodesReady?: number;
  nodesUnreachable?: number;
  nodesUnschedulable?: number;
  instances?: number;
  instancesRunning?: number;
  instancesPending?: number;
  instancesFailed?: number;
  volumes?: number;
  volumesReady?: number;
  volumesDegraded?: number;
  volumesFailed?: number;
}

/** Observed state of a Cluster, written by the controller. */
export interface ClusterStatus {
  observedGeneration?: number;
  phase?: ClusterPhase;
  message?: string;
  counts?: ClusterCounts;
  capacity?: Resources;
  allocated?: Resources;
  conditions?: Condition[];
}

/** A managed cluster; its name is the namespace of its resources. spec defaults to {}. */
export interface Cluster extends CairnObjectBase<'Cluster'> {
  spec?: ClusterSpec;
  status?: ClusterStatus;
}

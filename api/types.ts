/**
 * TypeScript shapes of Cairn's resources (group cairn.dev, version v1alpha1),
 * field for field the openAPIV3Schema of the CRDs in crds/. Fields that the
 * schema does not require are optional here even when the apiserver fills a
 * default, because objects built in code (and older stored objects) may lack
 * them. Times are RFC 3339 strings and quantities strings like "128Mi", as
 * they travel in JSON. This module imports nothing of ours.
 */

/** API group of Cairn's kinds. */
export const GROUP = 'cairn.dev';
/** Served and stored version of Cairn's kinds. */
export const VERSION = 'v1alpha1';
/** The apiVersion field of every Cairn object. */
export const API_VERSION = `${GROUP}/${VERSION}` as const;

/** Kind names of Cairn's resources. */
export const KINDS = ['Cluster', 'Node', 'Instance', 'Volume', 'WorkItem'] as const;
/** One of Cairn's kind names. */
export type Kind = (typeof KINDS)[number];

/** URL plural of each kind, as in /apis/cairn.dev/v1alpha1/namespaces/{ns}/{plural}. */
export const PLURALS = {
  Cluster: 'clusters',
  Node: 'nodes',
  Instance: 'instances',
  Volume: 'volumes',
  WorkItem: 'workitems',
} as const satisfies Record<Kind, string>;

/** Whether each kind lives in a namespace (the Cluster's name) or is cluster-scoped. */
export const NAMESPACED = {
  Cluster: false,
  Node: true,
  Instance: true,
  Volume: true,
  WorkItem: true,
} as const satisfies Record<Kind, boolean>;

/** An RFC 3339 timestamp such as 2024-05-01T12:00:00Z. */
export type Time = string;
/** A binary quantity matching ^[0-9]+(Ki|Mi|Gi|Ti)?$, e.g. "64Mi" (bytes without a suffix). */
export type Quantity = string;

/** A reference from a dependent object to its owner, as metav1.OwnerReference. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The parts of metav1.ObjectMeta that Cairn reads and writes. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: Time;
  deletionTimestamp?: Time;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}

/** Status of a condition, as metav1.ConditionStatus. */
export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** One aspect of an object's state, in the shape of metav1.Condition. */
export interface Condition {
  /** CamelCase kind of condition, e.g. Ready. */
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  /** Changes only when status flips. */
  lastTransitionTime: Time;
  /** CamelCase machine-readable cause. */
  reason: string;
  /** Human-readable details, including how to fix a problem. */
  message: string;
}

/** Fields every Cairn object has. */
export interface CairnObjectBase<K extends Kind> {
  apiVersion?: typeof API_VERSION;
  kind?: K;
  metadata: ObjectMeta;
}

/** A Cairn object whose schema requires spec. */
export interface CairnObject<K extends Kind, Spec, Status> extends CairnObjectBase<K> {
  spec: Spec;
  status?: Status;
}

/** A list of objects as the apiserver returns it. */
export interface ObjectList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** Cpus, memory and storage of a node or cluster. */
export interface Resources {
  cpus?: number;
  memory?: Quantity;
  storage?: Quantity;
}

// ---------------------------------------------------------------- Cluster

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
  /** Default 10. */
  heartbeatIntervalSeconds?: number;
  /** Default 40. */
  nodeLeaseDurationSeconds?: number;
  /** Default 60. */
  failoverGracePeriodSeconds?: number;
  /** Default 30. */
  fencingLeaseDurationSeconds?: number;
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

// ---------------------------------------------------------------- Node

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
export type DriverName = 'process' | 'qemu' | 'file';

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

// ---------------------------------------------------------------- Instance

/** Desired run state of an Instance. */
export type RunState = 'Running' | 'Stopped';
/** Instance driver. */
export type InstanceDriver = 'process' | 'qemu';
/** What the agent does when a workload exits by itself. */
export type RestartPolicy = 'Always' | 'OnFailure' | 'Never';
/** Whether an instance fails over automatically from a lost node. */
export type FailoverPolicy = 'Automatic' | 'Manual';

/** One environment variable of a process. */
export interface EnvVar {
  name: string;
  value?: string;
}

/** The program a process instance runs. */
export interface ProcessSpec {
  command: string[];
  args?: string[];
  env?: EnvVar[];
  workingDir?: string;
}

/** A disk image a VM boots from. */
export interface BootDisk {
  path: string;
  /** Default raw. */
  format?: 'raw' | 'qcow2';
  /** Default false. */
  readOnly?: boolean;
}

/** Live-migration settings shared by the Instance and its WorkItems. */
export interface MigrationTuning {
  /** Default 300. */
  maxDowntimeMs?: number;
  /** Default 0 (unlimited). */
  bandwidthMiBps?: number;
  /** Default 300. */
  timeoutSeconds?: number;
}

/** How a VM moves between nodes. */
export interface QemuMigrationSpec extends MigrationTuning {
  /** Default Live. */
  mode?: 'Live' | 'Cold';
}

/** The VM parts of a qemu instance common to Instance and WorkItem. */
export interface QemuBaseSpec {
  accelerator?: AcceleratorChoice;
  machine?: string;
  cpuModel?: string;
  kernel?: string;
  initrd?: string;
  cmdline?: string;
  bootDisk?: BootDisk;
  /** Default none. */
  network?: 'none' | 'user';
  readinessMarker?: string;
  /** Default 120. */
  readinessTimeoutSeconds?: number;
  extraArgs?: string[];
}

/** The virtual machine a qemu instance runs. */
export interface QemuSpec extends QemuBaseSpec {
  migration?: QemuMigrationSpec;
}

/** One Volume attached to an Instance. */
export interface VolumeAttachment {
  name: string;
  volumeName: string;
  /** Default false. */
  readOnly?: boolean;
}

/** Constraints on the node an Instance runs on. */
export interface Placement {
  /** Pin; changing it moves the instance. */
  nodeName?: string;
  nodeSelector?: Record<string, string>;
  antiAffinityGroup?: string;
}

/** Desired state of an Instance. */
export interface InstanceSpec {
  /** Default Running. */
  runState?: RunState;
  /** Default process. */
  driver?: InstanceDriver;
  /** Default 1. */
  cpus?: number;
  /** Default 128Mi. */
  memory?: Quantity;
  /** Default Always. */
  restartPolicy?: RestartPolicy;
  /** Default 10. */
  terminationGracePeriodSeconds?: number;
  /** Default Automatic. */
  failoverPolicy?: FailoverPolicy;
  /** Declarative migration request, carried out once per value. */
  migrateTo?: string;
  process?: ProcessSpec;
  qemu?: QemuSpec;
  volumes?: VolumeAttachment[];
  placement?: Placement;
}

/** Phase of an Instance. */
export type InstancePhase =
  | 'Pending'
  | 'Scheduled'
  | 'Starting'
  | 'Running'
  | 'Stopping'
  | 'Stopped'
  | 'Failed'
  | 'Migrating'
  | 'Unknown';

/** How a workload last ended. */
export interface LastTermination {
  exitCode?: number;
  signal?: string;
  reason?: string;
  finishedAt?: Time;
}

/** State of a running VM. */
export interface QemuStatus {
  accelerator?: Accelerator;
  qmpState?: string;
  consoleLogPath?: string;
  qmpSocketPath?: string;
}

/** Phase of an Instance's migration. */
export type MigrationPhase =
  | 'Pending'
  | 'PreparingTarget'
  | 'MirroringStorage'
  | 'Transferring'
  | 'SwitchingOver'
  | 'Completed'
  | 'Failed';

/** Transfer figures of a live migration. */
export interface MigrationProgress {
  bytesTotal?: number;
  bytesTransferred?: number;
  bytesRemaining?: number;
  downtimeMs?: number;
  totalTimeMs?: number;
  startedAt?: Time;
  finishedAt?: Time;
  message?: string;
}

/** Progress or outcome of an Instance's last migration. */
export interface InstanceMigrationStatus extends MigrationProgress {
  mode?: 'Live' | 'Cold';
  sourceNode?: string;
  targetNode?: string;
  phase?: MigrationPhase;
  reason?: string;
}

/** The last failover of an Instance. */
export interface LastFailover {
  fromNode?: string;
  toNode?: string;
  time?: Time;
}

/** Observed state of an Instance, written by the controller. */
export interface InstanceStatus {
  observedGeneration?: number;
  phase?: InstancePhase;
  reason?: string;
  message?: string;
  nodeName?: string;
  workItemName?: string;
  startedAt?: Time;
  restarts?: number;
  pid?: number;
  logPath?: string;
  lastTermination?: LastTermination;
  qemu?: QemuStatus;
  migration?: InstanceMigrationStatus;
  lastFailover?: LastFailover;
  conditions?: Condition[];
}

/** A workload: a supervised process or a virtual machine. */
export type Instance = CairnObject<'Instance', InstanceSpec, InstanceStatus>;

// ---------------------------------------------------------------- Volume

/** How a replica file is allocated. */
export type Allocation = 'preallocated' | 'sparse';
/** What happens to replica files on deletion. */
export type ReclaimPolicy = 'Delete' | 'Retain';

/** Desired state of a Volume. */
export interface VolumeSpec {
  size: Quantity;
  /** Default 1. */
  replicas?: number;
  /** Default file. */
  driver?: 'file';
  /** Default sparse. */
  allocation?: Allocation;
  /** Default Delete. */
  reclaimPolicy?: ReclaimPolicy;
  nodeSelector?: Record<string, string>;
  options?: Record<string, string>;
}

/** Phase of a Volume. */
export type VolumePhase = 'Pending' | 'Creating' | 'Ready' | 'Degraded' | 'Failed' | 'Deleting';
/** State of one Volume replica. */
export type ReplicaState = 'Pending' | 'Creating' | 'Ready' | 'Resizing' | 'Failed' | 'Lost' | 'Deleting';

/** Where one replica lives and how it is. */
export interface VolumeReplicaStatus {
  index: number;
  nodeName?: string;
  path?: string;
  size?: Quantity;
  state?: ReplicaState;
  workItemName?: string;
  message?: string;
}

/** Observed state of a Volume, written by the controller. */
export interface VolumeStatus {
  observedGeneration?: number;
  phase?: VolumePhase;
  message?: string;
  capacity?: Quantity;
  readyReplicas?: number;
  replicas?: VolumeReplicaStatus[];
  conditions?: Condition[];
}

/** Replicated storage. */
export type Volume = CairnObject<'Volume', VolumeSpec, VolumeStatus>;

// ---------------------------------------------------------------- WorkItem

/** What a WorkItem keeps true on its node. */
export type WorkItemType = 'InstanceRuntime' | 'VolumeReplica';

/** The Instance or Volume a WorkItem is a piece of. */
export interface WorkItemOwner {
  kind: 'Instance' | 'Volume';
  name: string;
  uid?: string;
  generation?: number;
}

/** The VM of a WorkItem, Cluster defaults applied. */
export type WorkItemQemuSpec = QemuBaseSpec;

/** A Volume replica attached to an instance on this node. */
export interface WorkItemVolume extends VolumeAttachment {
  replicaIndex?: number;
  path?: string;
}

/** The fencing Lease an agent holds while the workload runs. */
export interface FencingSpec {
  /** Unset: instance-<owner name>. */
  leaseName?: string;
  leaseDurationSeconds?: number;
}

/** Side of a live migration. */
export type MigrationRole = 'Source' | 'Target';

/** One side of a live migration, in a WorkItem's spec. */
export interface WorkItemMigrationSpec extends MigrationTuning {
  id: string;
  role: MigrationRole;
  peerNodeName: string;
  targetAddress?: string;
  targetPort?: number;
  targetNbdPort?: number;
}

/** The slice of an Instance the agent needs. */
export interface WorkItemInstanceSpec {
  driver: InstanceDriver;
  runState: RunState;
  cpus: number;
  memory: Quantity;
  restartPolicy?: RestartPolicy;
  terminationGracePeriodSeconds?: number;
  /** Copied from the cairn.dev/restartedAt annotation; a change restarts the workload. */
  restartToken?: string;
  process?: ProcessSpec;
  qemu?: WorkItemQemuSpec;
  volumes?: WorkItemVolume[];
  fencing?: FencingSpec;
  migration?: WorkItemMigrationSpec;
}

/** The replica a WorkItem keeps on its node. */
export interface WorkItemVolumeReplicaSpec {
  volumeName: string;
  index: number;
  size: Quantity;
  driver?: 'file';
  allocation?: Allocation;
  reclaimPolicy?: ReclaimPolicy;
  options?: Record<string, string>;
}

/** Desired state of one piece of one node. */
export interface WorkItemSpec {
  nodeName: string;
  type: WorkItemType;
  owner: WorkItemOwner;
  timeoutSeconds?: number;
  instance?: WorkItemInstanceSpec;
  volumeReplica?: WorkItemVolumeReplicaSpec;
}

/** Phase of a WorkItem: the task states Queued → InProgress → Done or Failed. */
export type WorkItemPhase = 'Queued' | 'InProgress' | 'Done' | 'Failed';

/** Reasons an agent operation fails. */
export const ERROR_REASONS = [
  'Timeout',
  'NoSpace',
  'PermissionDenied',
  'NotFound',
  'CommandFailed',
  'InvalidSpec',
  'DriverUnavailable',
  'Cancelled',
  'Fenced',
  'LeaseHeld',
  'MigrationFailed',
  'Unknown',
] as const;
/** One reason an agent operation fails. */
export type ErrorReason = (typeof ERROR_REASONS)[number];

/** The last failure of a WorkItem. */
export interface WorkItemError {
  reason: ErrorReason;
  message: string;
  /** How an operator fixes it. */
  hint?: string;
  operationId?: string;
  time?: Time;
}

/** State of a workload as its agent sees it. */
export type InstanceRuntimeState =
  | 'Pending'
  | 'Starting'
  | 'Running'
  | 'Stopping'
  | 'Stopped'
  | 'Exited'
  | 'BackOff'
  | 'Fenced'
  | 'Unknown';

/** A workload as its agent sees it. */
export interface WorkItemInstanceStatus {
  state?: InstanceRuntimeState;
  ready?: boolean;
  pid?: number;
  processStartTime?: string;
  startedAt?: Time;
  restarts?: number;
  lastExitCode?: number;
  lastSignal?: string;
  logPath?: string;
  limitsEnforced?: boolean;
  qemu?: QemuStatus;
}

/** A replica as its agent sees it. */
export interface WorkItemVolumeReplicaStatus {
  path?: string;
  size?: Quantity;
  sizeBytes?: number;
  allocatedBytes?: number;
}

/** Phase of one side of a live migration. */
export type WorkItemMigrationPhase =
  | 'Preparing'
  | 'Listening'
  | 'MirroringStorage'
  | 'Transferring'
  | 'Completed'
  | 'Failed'
  | 'Cancelled';

/** One side's view of a live migration. */
export interface WorkItemMigrationStatus extends MigrationProgress {
  id?: string;
  role?: MigrationRole;
  phase?: WorkItemMigrationPhase;
  address?: string;
  port?: number;
  nbdPort?: number;
}

/** What the agent observed and did for a WorkItem. */
export interface WorkItemStatus {
  observedGeneration?: number;
  phase?: WorkItemPhase;
  message?: string;
  attempts?: number;
  operationId?: string;
  action?: string;
  startedAt?: Time;
  finishedAt?: Time;
  nextAttemptAt?: Time;
  lastError?: WorkItemError;
  instance?: WorkItemInstanceStatus;
  volumeReplica?: WorkItemVolumeReplicaStatus;
  migration?: WorkItemMigrationStatus;
  conditions?: Condition[];
}

/** The desired state of one piece of one node. */
export type WorkItem = CairnObject<'WorkItem', WorkItemSpec, WorkItemStatus>;

/** Map from kind name to its object type. */
export interface KindMap {
  Cluster: Cluster;
  Node: Node;
  Instance: Instance;
  Volume: Volume;
  WorkItem: WorkItem;
}

/** The Instance kind: a supervised process or a virtual machine. Field for field its CRD in crds/. */
import type { Accelerator, QemuDefaults } from './cluster.js';
import type { CairnObject, Condition, Quantity, Time } from './types.js';

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

/** The VM parts of a qemu instance common to Instance and WorkItem (unset ones fall back to the Cluster's qemu defaults). */
export interface QemuBaseSpec extends QemuDefaults {
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
  /** `<target node>-g<generation>` of a Live migration, also on both WorkItems. */
  id?: string;
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

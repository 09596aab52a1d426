/** The WorkItem kind: the desired state of one piece of one node, written by the controller, reconciled by its agent. Field for field its CRD in crds/. */
import type { InstanceDriver, MigrationProgress, MigrationTuning, ProcessSpec, QemuBaseSpec, QemuStatus, RestartPolicy, RunState, VolumeAttachment } from './instance.js';
import type { Allocation, ReclaimPolicy } from './volume.js';
import type { CairnObject, Condition, Quantity, Time } from './types.js';

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
  /** Driver gluster: the volume, reachable from every node, which the agent FUSE-mounts for the instance. */
  gluster?: WorkItemGlusterMount;
}

/** What a node needs to mount a gluster Volume: the client volfile the controller generated from its bricks. */
export interface WorkItemGlusterMount {
  /** The Gluster volume name the volfile uses. */
  volume: string;
  volfile: string;
  /** The Volume's size: a VM's disk image inside the volume is created this large. */
  size: Quantity;
}

/** The instance's claim: the fencing Lease naming the one node that may run it (docs/fencing.md). */
export interface FencingSpec {
  /** Unset: instance-<owner name>. */
  leaseName?: string;
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
  driver?: 'file' | 'gluster';
  /** driver gluster: the brick to run. */
  brick?: WorkItemBrickSpec;
  allocation?: Allocation;
  reclaimPolicy?: ReclaimPolicy;
  options?: Record<string, string>;
}

/** A GlusterFS brick, run by the agent from a volfile the controller generated (controller/reconcilers/volume/volfiles.ts). */
export interface WorkItemBrickSpec {
  /** The Gluster volume name the volfile uses. */
  volume: string;
  /** UUID stamped on the brick root (trusted.glusterfs.volume-id). */
  volumeId: string;
  /** Absolute path of the brick's root directory on the node. */
  path: string;
  /** TCP port the brick listens on. */
  port: number;
  /** The brick's volfile. */
  volfile: string;
  /** The self-heal daemon's volfile (every brick of the volume), once all are placed: the agent runs one next to the brick. */
  shdVolfile?: string;
  /** The FUSE client's volfile, set with shdVolfile: a new brick joins through it (a one-off mount that marks the brick empty, so the others heal everything onto it). */
  clientVolfile?: string;
  /**
   * When the other bricks joined the volume (their joinedAt, in index order). A change restarts the
   * self-heal daemon, so that it crawls at once the root a new brick's join marked as owed to it.
   */
  peerJoins?: string;
  /** The controller's request that the self-heal daemon start again (and crawl) when a heal stopped moving: `<time>#<attempt>`. */
  recrawl?: string;
  /** The Volume is Stopped: the brick and its self-heal daemon stop, the data stays. */
  stopped?: boolean;
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
  /** driver gluster: the brick process. */
  brick?: WorkItemBrickStatus;
}

/** A running (or not) GlusterFS brick as the agent sees it. */
export interface WorkItemBrickStatus {
  state: 'Running' | 'Stopped';
  pid?: number;
  port?: number;
  /** Entries its index lists as needing heal. */
  pendingHeals?: number;
  /** The self-heal daemon next to it. */
  selfHeal?: 'Running' | 'Stopped';
  /** When the brick joined its volume (asked the others to heal everything onto it); unset until then. */
  joinedAt?: Time;
  /** Of the entries pending heal, the first ones (by gfid) with the bricks (replica indexes) this brick blames: the controller finds split-brain where two bricks blame each other. */
  owed?: WorkItemOwedEntry[];
  /** Every brick (replica index) that some inspected entry pending heal blames: they missed writes this brick holds. Unlike owed, not cut short. */
  owedTo?: number[];
  /** Entries pending heal beyond those the agent inspected (at most 2,000 are): any other brick may have missed their writes. */
  uninspected?: number;
}

/** A file this brick holds that other bricks are owed: they missed writes to it. */
export interface WorkItemOwedEntry {
  gfid: string;
  /** Replica indexes of the bricks that missed them. */
  bricks: number[];
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

/** The client volfile an instance WorkItem gives its node's mount of gluster Volume `volumeName`; undefined when it mounts none. */
export function glusterVolfile(w: WorkItem, volumeName: string): string | undefined {
  return w.spec.instance?.volumes?.find((v) => v.volumeName === volumeName)?.gluster?.volfile;
}

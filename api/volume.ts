/** The Volume kind: replicated storage, one replica per node. Field for field its CRD in crds/. */
import type { CairnObject, Condition, Quantity, Time } from './types.js';

/** How a replica file is allocated. */
export type Allocation = 'preallocated' | 'sparse';
/** What happens to replica files on deletion. */
export type ReclaimPolicy = 'Delete' | 'Retain';

/** Desired state of a Volume. */
export interface VolumeSpec {
  size: Quantity;
  /** Default 1. */
  replicas?: number;
  /** Default file. gluster: each replica a GlusterFS brick, replicated by GlusterFS (docs/volumes.md). */
  driver?: 'file' | 'gluster';
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
  /** Driver gluster: the replica's brick. */
  brick?: VolumeBrickStatus;
}

/** Where a brick listens and how it is, as its agent last reported. */
export interface VolumeBrickStatus {
  /** The IPv4 address of its node that clients connect to. */
  address?: string;
  port: number;
  state?: 'Running' | 'Stopped';
  /** Entries this brick's index lists as needing heal on another brick. */
  pendingHeals?: number;
  /** When the brick joined the volume (the others then heal everything onto it). */
  joinedAt?: Time;
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

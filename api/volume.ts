/** The Volume kind: replicated storage, one replica per node. Field for field its CRD in crds/. */
import type { CairnObject, Condition, Quantity, Time } from './types.js';

/** How a replica file is allocated. */
export type Allocation = 'preallocated' | 'sparse';
/** What happens to replica files on deletion. */
export type ReclaimPolicy = 'Delete' | 'Retain';
/** A volume driver: gluster replicates (GlusterFS bricks); file is one unreplicated local file. */
export type VolumeDriver = 'file' | 'gluster';
/** Whether a gluster Volume's bricks run (Started) or are stopped with their data kept (Stopped). */
export type VolumeRunState = 'Started' | 'Stopped';

/** Desired state of a Volume. */
export interface VolumeSpec {
  size: Quantity;
  /** Default 1. */
  replicas?: number;
  /** Default gluster: each replica a GlusterFS brick, replicated by GlusterFS (docs/volumes.md). */
  driver?: VolumeDriver;
  /** Driver gluster, replicas 3: the third brick holds names and metadata only. Set at creation. Default false. */
  arbiter?: boolean;
  /** Driver gluster. Default Started. */
  state?: VolumeRunState;
  /** Default sparse. */
  allocation?: Allocation;
  /** Default Delete. */
  reclaimPolicy?: ReclaimPolicy;
  nodeSelector?: Record<string, string>;
  /** Driver gluster: GlusterFS options (api/gluster-options.ts). */
  options?: Record<string, string>;
}

/** The driver of a Volume: gluster unless it says otherwise. */
export function volumeDriver(volume: Volume): VolumeDriver {
  return volume.spec.driver ?? 'gluster';
}

/** Whether a Volume's replicas are GlusterFS bricks. */
export function isGluster(volume: Volume): boolean {
  return volumeDriver(volume) === 'gluster';
}

/** Whether a gluster Volume is stopped: its bricks do not run, its data stays. */
export function isStopped(volume: Volume): boolean {
  return isGluster(volume) && volume.spec.state === 'Stopped';
}

/**
 * The replica count the controller carries out: spec.replicas, but never fewer than the replicas that
 * were placed (removing one is refused, its data would go; a trailing one never placed may be dropped).
 * Brick and client graphs are built for this count, so a refused reduction cannot split the replicas.
 */
export function acceptedReplicas(volume: Volume): number {
  const placed = (volume.status?.replicas ?? []).filter((r) => r.nodeName);
  return Math.max(volume.spec.replicas ?? 1, placed.reduce((n, r) => Math.max(n, r.index + 1), 0));
}

/** Where a gluster brick listens. */
export interface BrickPlacement {
  /** Address clients reach it on (an IP: a name may resolve to ::1 first). */
  host: string;
  port: number;
  /** Absolute path of the brick's root directory on its node. */
  path: string;
}

/** Where a brick listens; `'unplaced'` for one never placed on a node; undefined for one placed that cannot be named yet. */
export type BrickSlot = BrickPlacement | 'unplaced' | undefined;

/**
 * The bricks a gluster volume's graphs (its mounts, its self-heal daemons) name, in index order, from
 * where `slot` says each listens; undefined while one cannot be named. Once the volume is in service
 * (a brick joined), trailing indices never placed are left out: a raise of spec.replicas beyond the
 * nodes that fit keeps the graphs as they were until the new brick is placed, where it once left every
 * mount and self-heal daemon without a graph. A brick placed but without an address is never left out:
 * a graph without it would neither blame it for what it misses nor let it join. At creation every
 * brick waits. As many as acceptedReplicas: a refused reduction of spec.replicas once left a brick out
 * of every mount, so it got no writes and nothing blamed it for the ones it missed.
 */
export function graphBricks(volume: Volume, slot: (index: number) => BrickSlot): BrickPlacement[] | undefined {
  const slots = Array.from({ length: acceptedReplicas(volume) }, (_, i) => slot(i));
  let count = slots.length;
  while (count > 0 && slots[count - 1] === 'unplaced') count--;
  if (count === 0 || (count < slots.length && !inService(volume))) return undefined;
  const graph = slots.slice(0, count);
  return graph.every((b) => b !== undefined && b !== 'unplaced') ? (graph as BrickPlacement[]) : undefined;
}

/** Whether some brick of the volume has joined it (as its status says): it holds data clients wrote. */
export function inService(volume: Volume): boolean {
  return (volume.status?.replicas ?? []).some((r) => r.brick?.joinedAt);
}

/**
 * Where a mount's graph names a brick it must count down: nothing listens on port 1, so AFR sees the child
 * down, and blames it (by its client name, <volume>-client-<index>) for every write it misses.
 */
export const DOWN_BRICK = { host: '127.0.0.1', port: 1 } as const;

/**
 * Where the instances' mounts find replica `index`'s brick: as statusBrick, but until its brick has joined,
 * a raised replica whose copy is held is left out (VolumeReplicaStatus.copyHeld; raised replicas are the
 * highest indexes, so the graph ends before it), and a replacement is named down
 * (VolumeReplicaStatus.replacement): before its join marks it as owed, a read could be served from it, empty.
 */
export function mountBrick(volume: Volume, index: number): BrickSlot {
  const r = volume.status?.replicas?.find((x) => x.index === index);
  if (r?.brick?.joinedAt) return statusBrick(volume, index);
  if (r?.copyHeld) return 'unplaced';
  return r?.replacement && r.path ? { ...DOWN_BRICK, path: r.path } : statusBrick(volume, index);
}

/** Where a gluster volume's status says replica `index`'s brick listens: a lost one at its last address, `'unplaced'` for one that never had a node. */
export function statusBrick(volume: Volume, index: number): BrickSlot {
  const r = volume.status?.replicas?.find((x) => x.index === index);
  if (r?.brick?.address && r.path) return { host: r.brick.address, port: r.brick.port, path: r.path };
  return r?.nodeName || r?.brick ? undefined : 'unplaced';
}

/** Phase of a Volume. */
export type VolumePhase = 'Pending' | 'Creating' | 'Ready' | 'Degraded' | 'Failed' | 'Stopped' | 'Deleting';
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
  /**
   * Driver gluster: a raised replica the other bricks do not copy onto yet (controller/reconcilers/volume/copy-gate.ts).
   * Until its brick has joined, the instances' mounts leave it out: before its join marks it as owed, a read could be served from it, empty.
   */
  copyHeld?: boolean;
  /**
   * Driver gluster: the brick replaces another while the volume holds data (one that had joined, its node lost,
   * or one that never joined, moved to another node). Until it has joined, the instances' mounts name it down
   * (mountBrick), as the brick it replaces was.
   */
  replacement?: boolean;
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
  /** Files in split-brain this brick holds: it and another brick each blame the other. */
  splitBrain?: number;
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

/**
 * Where objects already sit, read from their status. Two questions about a
 * replica get different answers on purpose: whether it holds the volume's
 * data (locality, and "this node already has one") and whether it occupies
 * disk space (allocation). A Failed or Deleting replica is no longer data
 * anyone can use, yet its file stays on disk until the agent removes it; a
 * Lost replica is gone with its node's disk, so it occupies nothing.
 */
import type { Instance, MigrationPhase } from '../../api/instance.js';
import { graphBricks, isGluster, mountBrick, type BrickPlacement, type ReplicaState, type Volume, type VolumeReplicaStatus } from '../../api/volume.js';

const MIGRATION_IN_FLIGHT: ReadonlySet<MigrationPhase> = new Set(['Pending', 'PreparingTarget', 'MirroringStorage', 'Transferring', 'SwitchingOver']);
const NOT_LIVE: ReadonlySet<ReplicaState> = new Set(['Lost', 'Deleting', 'Failed']);

/**
 * The nodes an Instance occupies: status.nodeName, plus both ends of a
 * migration still in flight (a live migration runs the guest on the
 * source and prepares it on the target at once, so both are reserved).
 */
export function instanceNodes(instance: Instance): string[] {
  const nodes = new Set<string>();
  if (instance.status?.nodeName) nodes.add(instance.status.nodeName);
  const m = instance.status?.migration;
  if (m?.phase && MIGRATION_IN_FLIGHT.has(m.phase)) {
    if (m.sourceNode) nodes.add(m.sourceNode);
    if (m.targetNode) nodes.add(m.targetNode);
  }
  return [...nodes];
}

/** Whether a replica holds usable data on its node (placed, and not Lost, Deleting or Failed). */
export function isLiveReplica(replica: VolumeReplicaStatus): boolean {
  return !!replica.nodeName && !(replica.state !== undefined && NOT_LIVE.has(replica.state));
}

/** Whether a replica occupies storage on its node (placed, and not Lost). */
export function occupiesStorage(replica: VolumeReplicaStatus): boolean {
  return !!replica.nodeName && replica.state !== 'Lost';
}

/** The distinct nodes holding a live replica of a Volume, in replica index order. */
export function liveReplicaNodes(volume: Volume): string[] {
  const live = (volume.status?.replicas ?? []).filter(isLiveReplica).sort((a, b) => a.index - b.index);
  return [...new Set(live.map((r) => r.nodeName!))];
}

/** Where a gluster Volume's bricks listen, as the instances' mounts name them (api/volume.ts graphBricks, mountBrick); undefined while they cannot. */
export function glusterBricks(volume: Volume): BrickPlacement[] | undefined {
  return isGluster(volume) ? graphBricks(volume, (i) => mountBrick(volume, i)) : undefined;
}

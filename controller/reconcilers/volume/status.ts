/**
 * The status the Volume reconciler writes: per-replica node, path, size
 * and state mirrored from the replicas' WorkItems, a phase, and the Ready,
 * Scheduled and SpecAccepted conditions. Pure.
 */
import { setCondition, type ConditionInput } from '../../../api/conditions.js';
import type { ReplicaState, Volume, VolumePhase, VolumeReplicaStatus, VolumeStatus } from '../../../api/volume.js';
import type { WorkItem } from '../../../api/workitem.js';

/** One replica index and what holds it. */
export interface ReplicaSlot {
  index: number;
  workItem?: WorkItem;
  unreachable?: boolean;
  /** The node this replica was lost with. */
  lostOn?: string;
}

/** A spec change that was refused. */
export interface SpecProblem {
  reason: string;
  message: string;
}

function replicaState(slot: ReplicaSlot, size: string): { state: ReplicaState; message?: string } {
  const w = slot.workItem;
  if (slot.lostOn) return { state: 'Lost', message: `node ${slot.lostOn} is lost; recreating the replica elsewhere` };
  if (!w) return { state: 'Pending', message: 'waiting for a node with enough free storage' };
  if (w.metadata.deletionTimestamp) return { state: 'Deleting' };
  const s = w.status;
  if (s?.phase === 'Failed') return { state: 'Failed', message: [s.lastError?.message, s.lastError?.hint].filter(Boolean).join(' Hint: ') };
  const current = s?.observedGeneration === w.metadata.generation;
  // A brick is ready when it runs (its size is not enforced yet: #14); a file when it has the size.
  const brick = s?.volumeReplica?.brick;
  if (s?.phase === 'Done' && current && (brick ? brick.state === 'Running' : s.volumeReplica?.size === size)) return { state: 'Ready' };
  if (s?.volumeReplica?.sizeBytes) return { state: 'Resizing' };
  return { state: 'Creating', ...(slot.unreachable ? { message: `node ${w.spec.nodeName} is unreachable` } : {}) };
}

function replicaStatus(slot: ReplicaSlot, size: string): VolumeReplicaStatus {
  const w = slot.workItem;
  const { state, message } = replicaState(slot, size);
  return {
    index: slot.index,
    nodeName: slot.lostOn ?? w?.spec.nodeName,
    path: w?.status?.volumeReplica?.path,
    size: w?.status?.volumeReplica?.size,
    state,
    workItemName: w?.metadata.name,
    ...(message ? { message } : {}),
  };
}

function phaseOf(volume: Volume, replicas: VolumeReplicaStatus[]): VolumePhase {
  if (volume.metadata.deletionTimestamp) return 'Deleting';
  const count = (s: ReplicaState) => replicas.filter((r) => r.state === s).length;
  const ready = count('Ready');
  if (replicas.length > 0 && ready === replicas.length) return 'Ready';
  if (ready > 0) return 'Degraded';
  if (replicas.length > 0 && count('Failed') === replicas.length) return 'Failed';
  return replicas.some((r) => r.nodeName) ? 'Creating' : 'Pending';
}

/** The Volume's status for its replica slots. */
export function volumeStatus(o: { volume: Volume; now: number }, slots: ReplicaSlot[], size: string, problems: SpecProblem[], unplaced: string | undefined): VolumeStatus {
  const prev = o.volume.status ?? {};
  const generation = o.volume.metadata.generation;
  const replicas = slots.map((s) => replicaStatus(s, size)).sort((a, b) => a.index - b.index);
  const phase = phaseOf(o.volume, replicas);
  const readyReplicas = replicas.filter((r) => r.state === 'Ready').length;
  const failed = replicas.find((r) => r.state === 'Failed');
  const message = unplaced ?? failed?.message ?? `${readyReplicas}/${replicas.length} replicas ready`;
  const cond = (c: Omit<ConditionInput, 'observedGeneration'>) => ({ ...c, observedGeneration: generation });
  const now = new Date(o.now);
  let conditions = setCondition(prev.conditions, cond(phase === 'Ready' ? { type: 'Ready', status: 'True', reason: 'ReplicasReady', message } : { type: 'Ready', status: 'False', reason: failed ? 'ReplicaFailed' : phase, message }), now);
  conditions = setCondition(conditions, cond(unplaced ? { type: 'Scheduled', status: 'False', reason: 'Unschedulable', message: unplaced } : { type: 'Scheduled', status: 'True', reason: 'Scheduled', message: 'every replica has a node' }), now);
  const problem = problems[0];
  conditions = setCondition(conditions, cond(problem ? { type: 'SpecAccepted', status: 'False', reason: problem.reason, message: problems.map((p) => p.message).join('; ') } : { type: 'SpecAccepted', status: 'True', reason: 'Accepted', message: 'spec is carried out' }), now);
  return { ...prev, observedGeneration: generation, phase, message, capacity: size, readyReplicas, replicas, conditions };
}

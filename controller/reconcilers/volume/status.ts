/**
 * The status the Volume reconciler writes: per-replica node, path, size,
 * state (and for driver gluster the brick's address, port, pending heals
 * and split-brain files) mirrored from the replicas' WorkItems, a phase, and the Ready,
 * Degraded, Scheduled and SpecAccepted conditions. Pure.
 */
import { setCondition, type ConditionInput } from '../../../api/conditions.js';
import { inService, isGluster, isStopped, type ReplicaState, type Volume, type VolumeBrickStatus, type VolumePhase, type VolumeReplicaStatus, type VolumeStatus } from '../../../api/volume.js';
import type { WorkItem } from '../../../api/workitem.js';
import { glusterDegradation, quorumRule, splitBrainCounts, type Degradation } from './gluster-health.js';

/** One replica index and what holds it. */
export interface ReplicaSlot {
  index: number;
  workItem?: WorkItem;
  unreachable?: boolean;
  /** The node this replica was lost with. */
  lostOn?: string;
  /** A raised replica onto which the others do not copy yet: why (copy-gate.ts). */
  copyHeld?: string;
  /**
   * On a lost node, kept: no other replica holds all its data ('joinSettling': the one that may hold it joined
   * moments ago; 'writtenAlone': it may hold writes made to it alone, which no report shows).
   */
  onlyCopy?: true | 'joinSettling' | 'writtenAlone';
}

/** A spec change that was refused. */
export interface SpecProblem {
  reason: string;
  message: string;
}

function replicaState(slot: ReplicaSlot, size: string): { state: ReplicaState; message?: string } {
  const w = slot.workItem;
  if (slot.lostOn) return { state: 'Lost', message: `node ${slot.lostOn} is lost; recreating the replica elsewhere` };
  if (slot.onlyCopy === 'joinSettling' && w) {
    return { state: 'Lost', message: `node ${w.spec.nodeName} is lost; the replica is recreated elsewhere once the other bricks have reported that the brick that just joined missed nothing (within ${JOIN_SETTLE_MS / 1000} s)` };
  }
  if (slot.onlyCopy && w) {
    const where = `-n ${w.metadata.namespace ?? ''} ${w.metadata.name ?? ''}`;
    const why = slot.onlyCopy === 'writtenAlone'
      ? 'may hold writes no other brick has (network.ping-timeout is shorter than the node lease, and this brick alone passes the quorum rule)'
      : "holds the only good copy of this replica's data";
    return { state: 'Lost', message: `node ${w.spec.nodeName} is lost and ${why}, so it is kept until the node returns; to give that data up and recreate the replica empty elsewhere, run: kubectl delete workitem ${where}` };
  }
  if (!w) return { state: 'Pending', message: 'waiting for a node with enough free storage' };
  if (w.metadata.deletionTimestamp) return { state: 'Deleting' };
  const s = w.status;
  if (s?.phase === 'Failed') return { state: 'Failed', message: [s.lastError?.message, s.lastError?.hint].filter(Boolean).join(' Hint: ') };
  if (slot.copyHeld) return { state: 'Creating', message: `the other bricks copy the data onto this one once they may: ${slot.copyHeld}` };
  const current = s?.observedGeneration === w.metadata.generation;
  // A replica is ready at its size; a brick also when it runs and has joined.
  const brick = s?.volumeReplica?.brick;
  // A new brick is empty until it has joined: only then do the others owe it the data.
  const joining = !!w.spec.volumeReplica?.brick?.clientVolfile && !brick?.joinedAt;
  // A Stopped volume's brick is ready once stopped, with its data kept.
  const brickAsAsked = w.spec.volumeReplica?.brick?.stopped ? brick?.state === 'Stopped' : brick?.state === 'Running' && !joining;
  if (s?.phase === 'Done' && current && s.volumeReplica?.size === size && (!brick || brickAsAsked)) return { state: 'Ready' };
  if (brick?.state === 'Running' && joining) return { state: 'Creating', message: 'the brick runs and is joining its volume' };
  if (s?.volumeReplica?.sizeBytes) return { state: 'Resizing' };
  return { state: 'Creating', ...(slot.unreachable ? { message: `node ${w.spec.nodeName} is unreachable` } : {}) };
}

/** The brick of a slot: its WorkItem's port and its node's address; a lost one keeps what the status said of it (clients still name it). */
function brickStatus(slot: ReplicaSlot, address: (node: string) => string | undefined, previous: VolumeReplicaStatus | undefined, splitBrain: number): VolumeBrickStatus | undefined {
  const w = slot.workItem;
  const spec = w?.spec.volumeReplica?.brick;
  if (!w || !spec) {
    if (!previous?.brick) return undefined;
    const { pendingHeals: _unknown, ...kept } = previous.brick;
    return { ...kept, state: 'Stopped' };
  }
  const reported = w.status?.volumeReplica?.brick;
  const state = slot.unreachable || !reported ? 'Stopped' : reported.state;
  const addr = address(w.spec.nodeName);
  return {
    ...(addr ? { address: addr } : {}),
    port: spec.port,
    state,
    ...(reported?.pendingHeals !== undefined ? { pendingHeals: reported.pendingHeals } : {}),
    ...(splitBrain > 0 ? { splitBrain } : {}),
    ...(reported?.joinedAt ? { joinedAt: reported.joinedAt } : {}),
  };
}

function replicaStatus(slot: ReplicaSlot, size: string, address: (node: string) => string | undefined, previous: VolumeReplicaStatus | undefined, splitBrain: number, holdsData: boolean): VolumeReplicaStatus {
  const w = slot.workItem;
  const { state, message } = replicaState(slot, size);
  const brick = brickStatus(slot, address, previous, splitBrain);
  return {
    index: slot.index,
    nodeName: slot.lostOn ?? w?.spec.nodeName,
    // A brick's path is known from its spec: with it, mounts name a new brick as soon as the bricks' own graphs do.
    path: w?.status?.volumeReplica?.path ?? w?.spec.volumeReplica?.brick?.path ?? (brick ? previous?.path : undefined),
    size: w?.status?.volumeReplica?.size,
    state,
    workItemName: w?.metadata.name,
    ...(message ? { message } : {}),
    ...(slot.copyHeld ? { copyHeld: true } : {}),
    ...(unjoinedReplacement(slot, brick, previous, holdsData) ? { replacement: true } : {}),
    ...(brick ? { brick } : {}),
  };
}

/**
 * Whether the brick is a replacement that has not joined yet: of a brick that had joined (kept in the status,
 * with its join, while its replica is lost and unplaced), or of one that never joined, placed on another node
 * while the volume holds data (`holdsData`: a brick of it joined); or the status said so already.
 */
function unjoinedReplacement(slot: ReplicaSlot, brick: VolumeBrickStatus | undefined, previous: VolumeReplicaStatus | undefined, holdsData: boolean): boolean {
  if (brick?.joinedAt) return false;
  if (previous?.replacement || previous?.brick?.joinedAt) return true;
  const node = slot.workItem?.spec.nodeName;
  return holdsData && !!previous?.brick && !!node && previous.nodeName !== node;
}

/**
 * How long after a brick joined the Volume may not be called healthy: the other agents report what they
 * owe it when their liveness sweep (every 2 s) sees their heal counts move, so a count of 0 read sooner
 * may predate the join.
 */
export const JOIN_SETTLE_MS = 5_000;

/** When the controller first saw an agent's timestamp in a slot, on its own clock (controller/first-seen.ts). */
export type SeenAt = (slot: string, stamp: string) => number;

/** Ms until the latest brick join has settled, or undefined when none is settling. */
export function joinSettlesInMs(replicas: readonly VolumeReplicaStatus[], now: number, seenAt: SeenAt): number | undefined {
  const latest = Math.max(...replicas.map((r) => (r.brick?.joinedAt ? seenAt(`join/${r.index}`, r.brick.joinedAt) : -Infinity)));
  const left = latest + JOIN_SETTLE_MS - now;
  return left > 0 ? left : undefined;
}

/** Driver gluster: what is wrong with the bricks (quorum, offline, heals), undefined when nothing is or the driver is file. */
function degradation(volume: Volume, replicas: VolumeReplicaStatus[], now: number, seenAt: SeenAt): Degradation | undefined {
  if (!isGluster(volume) || isStopped(volume) || volume.metadata.deletionTimestamp || replicas.length === 0) return undefined;
  // Until a brick has joined, the volume is being created: nothing to lose quorum on yet.
  if (!replicas.some((r) => r.brick?.joinedAt)) return undefined;
  const found = glusterDegradation(replicas.map((r) => ({
    index: r.index,
    nodeName: r.nodeName,
    // A brick waiting to grow (Resizing, running at the old size) serves: an expand once read as QuorumLost.
    up: (r.state === 'Ready' || r.state === 'Resizing') && r.brick?.state === 'Running',
    pendingHeals: r.brick?.pendingHeals ?? 0,
    splitBrain: r.brick?.splitBrain ?? 0,
    ...(r.message ? { message: r.message } : {}),
  })), quorumRule(volume));
  if (found || joinSettlesInMs(replicas, now, seenAt) === undefined) return found;
  return { reason: 'HealPending', message: 'a brick just joined the volume; waiting for the other bricks to report what they heal onto it' };
}

/** Per replica index, its brick's files in split-brain (from what each agent reports its brick owes). */
function splitBrainByIndex(slots: readonly ReplicaSlot[]): Map<number, number> {
  const owed = new Map(slots.flatMap((s) => (s.workItem && !s.unreachable ? [[s.index, s.workItem.status?.volumeReplica?.brick?.owed ?? []] as const] : [])));
  return splitBrainCounts(owed);
}

function phaseOf(volume: Volume, replicas: VolumeReplicaStatus[], degraded: Degradation | undefined): VolumePhase {
  if (volume.metadata.deletionTimestamp) return 'Deleting';
  const count = (s: ReplicaState) => replicas.filter((r) => r.state === s).length;
  const ready = count('Ready');
  if (isStopped(volume)) return 'Stopped';
  if (replicas.length > 0 && ready === replicas.length) return degraded ? 'Degraded' : 'Ready';
  if (ready > 0) return 'Degraded';
  if (replicas.length > 0 && count('Failed') === replicas.length) return 'Failed';
  return replicas.some((r) => r.nodeName) ? 'Creating' : 'Pending';
}

/** The Volume's status for its replica slots. */
export function volumeStatus(o: { volume: Volume; now: number; seenAt: SeenAt; nodeAddress(node: string): string | undefined }, slots: ReplicaSlot[], size: string, problems: SpecProblem[], unplaced: string | undefined): VolumeStatus {
  const prev = o.volume.status ?? {};
  const generation = o.volume.metadata.generation;
  const split = splitBrainByIndex(slots);
  const holdsData = inService(o.volume);
  const replicas = slots.map((s) => replicaStatus(s, size, o.nodeAddress, prev.replicas?.find((r) => r.index === s.index), split.get(s.index) ?? 0, holdsData)).sort((a, b) => a.index - b.index);
  const degraded = degradation(o.volume, replicas, o.now, o.seenAt);
  const phase = phaseOf(o.volume, replicas, degraded);
  const readyReplicas = replicas.filter((r) => r.state === 'Ready').length;
  const failed = replicas.find((r) => r.state === 'Failed');
  const stopped = isStopped(o.volume) && !o.volume.metadata.deletionTimestamp ? stoppedMessage(o.volume, replicas) : undefined;
  const message = unplaced ?? (degraded?.reason === 'QuorumLost' ? degraded.message : undefined) ?? failed?.message ?? stopped ?? degraded?.message ?? `${readyReplicas}/${replicas.length} replicas ready`;
  const cond = (c: Omit<ConditionInput, 'observedGeneration'>) => ({ ...c, observedGeneration: generation });
  const now = new Date(o.now);
  let conditions = setCondition(prev.conditions, cond(phase === 'Ready' ? { type: 'Ready', status: 'True', reason: 'ReplicasReady', message } : { type: 'Ready', status: 'False', reason: degraded?.reason ?? (failed ? 'ReplicaFailed' : phase), message }), now);
  conditions = setCondition(conditions, cond(degradedCondition(phase, degraded, replicas)), now);
  conditions = setCondition(conditions, cond(unplaced ? { type: 'Scheduled', status: 'False', reason: 'Unschedulable', message: unplaced } : { type: 'Scheduled', status: 'True', reason: 'Scheduled', message: 'every replica has a node' }), now);
  const problem = problems[0];
  conditions = setCondition(conditions, cond(problem ? { type: 'SpecAccepted', status: 'False', reason: problem.reason, message: problems.map((p) => p.message).join('; ') } : { type: 'SpecAccepted', status: 'True', reason: 'Accepted', message: 'spec is carried out' }), now);
  return { ...prev, observedGeneration: generation, phase, message, capacity: size, readyReplicas, replicas, conditions };
}

function stoppedMessage(volume: Volume, replicas: VolumeReplicaStatus[]): string {
  const start = `start it with \`cairn volume start ${volume.metadata.name}\` (spec.state Started)`;
  const running = replicas.filter((r) => r.brick?.state === 'Running').length;
  return running === 0 ? `the volume is Stopped: no brick runs, the data is kept, and instances using it wait; ${start}` : `stopping the bricks (${running} still run; spec.state Stopped); ${start}`;
}

/** Degraded: for gluster the bricks' worst finding; for file, replicas lost or failed while another is Ready. */
function degradedCondition(phase: VolumePhase, degraded: Degradation | undefined, replicas: VolumeReplicaStatus[]): Omit<ConditionInput, 'observedGeneration'> {
  if (degraded) return { type: 'Degraded', status: 'True', ...degraded };
  if (phase !== 'Degraded') return { type: 'Degraded', status: 'False', reason: 'AllReplicasHealthy', message: 'no replica is lost, failed or behind' };
  const bad = replicas.filter((r) => r.state !== 'Ready');
  return { type: 'Degraded', status: 'True', reason: bad.some((r) => r.state === 'Lost') ? 'ReplicaLost' : 'ReplicaNotReady', message: bad.map((r) => `replica ${r.index}${r.nodeName ? ` on node ${r.nodeName}` : ''} is ${r.state}${r.message ? `: ${r.message}` : ''}`).join('; ') };
}

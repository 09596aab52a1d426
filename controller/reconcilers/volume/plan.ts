/**
 * Decisions of the Volume reconciler, pure: one WorkItem per replica on N
 * distinct nodes; growing size or replica count is carried out, shrinking
 * either is refused with a condition (data would be lost); replicas on a
 * node lost for longer than the grace period are released and recreated
 * elsewhere when the Cluster allows it and another replica holds all their
 * data; the only copy is kept until its node returns.
 */
import type { Cluster } from '../../../api/cluster.js';
import { effectiveGlusterOptions } from '../../../api/gluster-options.js';
import { CONTROLLER_FINALIZER } from '../../../api/names.js';
import { parseQuantity } from '../../../api/quantity.js';
import { acceptedReplicas, graphBricks, inService, isGluster, isStopped, statusBrick, type BrickPlacement, type BrickSlot, type Volume, type VolumeStatus } from '../../../api/volume.js';
import type { WorkItem } from '../../../api/workitem.js';
import { nodeLeaseSeconds, type NodeView } from '../../node-health.js';
import { earliest, mergeWorkItem, type Action, type Plan } from '../actions.js';
import { SPEC_HASH_ANNOTATION } from '../instance/workitem-spec.js';
import { healRecrawl } from './heal-stall.js';
import { copyGate, type VolumeMount } from './copy-gate.js';
import { hasQuorum, quorumRule } from './gluster-health.js';
import { JOIN_SETTLE_MS, joinSettlesInMs, volumeStatus, type ReplicaSlot, type SeenAt, type SpecProblem } from './status.js';
import { clientVolfile, glusterVolumeName, shdVolfile, specLayout, type GlusterLayout } from './volfiles.js';
import { desiredReplicaWorkItem, isArbiter, RAISED_REPLICA_ANNOTATION, type BrickHome, type LayoutVolfiles } from './workitem-spec.js';

/** How long a brick that grew must have run again before the next one may grow: clients reconnect every 3 s. */
const GROWN_SETTLE_MS = 5_000;

/** Everything the plan looks at. */
export interface VolumeObserved {
  volume: Volume;
  cluster?: Cluster;
  workItems: readonly WorkItem[];
  node(name: string): NodeView;
  /** Nodes for all replicas (existing ones first) and, when short, why. */
  schedule(): { nodeNames: string[]; message?: string };
  /** Driver gluster: where a brick goes on a node (its data dir, and `existing`'s port or a free one); undefined while the node has not reported its data dir. */
  brickHome(nodeName: string, existing?: WorkItem): BrickHome | undefined;
  /** The IPv4 address other nodes reach a node's bricks on; undefined while it reports none. */
  nodeAddress(nodeName: string): string | undefined;
  now: number;
  /** When this controller first saw an agent's timestamp (a brick's joinedAt, a grow's finishedAt): agents' clocks may be off. */
  seenAt: SeenAt;
  /** When this controller first saw `value` in `slot`, for values that are no time (the bricks' pending heal counts). */
  unchangedSince(slot: string, value: string): number;
  /** Driver gluster: the instance WorkItems that mount the volume (copy-gate.ts). */
  mounts: readonly VolumeMount[];
}

/** The Volume reconciler's decisions. */
export function planVolume(o: VolumeObserved): Plan<VolumeStatus> {
  if (o.volume.metadata.deletionTimestamp) return planVolumeDeletion(o);
  const actions: Action[] = [];
  if (!o.volume.metadata.finalizers?.includes(CONTROLLER_FINALIZER)) actions.push({ type: 'addFinalizer' });
  const { size, replicas, problems } = acceptedShape(o.volume);
  const slots: ReplicaSlot[] = [];
  const active = o.workItems.filter((w) => !w.metadata.deletionTimestamp);
  const full = layoutVolfiles(o, active);
  const gated = full && gateCopies(o, full, active);
  // While a copy is held, the raised bricks' entries stand still on purpose: no recrawl restarts the daemons for them.
  const withRecrawl = gated?.held ? gated : layoutWithRecrawl(o, gated?.layout ?? full, active);
  const layout = withRecrawl?.layout;
  let requeueAfterMs: number | undefined = withRecrawl?.inMs;
  for (let index = 0; index < replicas; index++) {
    const [wi, ...extra] = active.filter((w) => w.spec.volumeReplica?.index === index);
    for (const w of extra) actions.push({ type: 'deleteWorkItem', name: w.metadata.name!, uid: w.metadata.uid });
    const slot = planSlot(o, index, wi, size, actions, layout);
    requeueAfterMs = earliest(requeueAfterMs, slot.requeueAfterMs);
    slots.push(slot.slot);
  }
  for (const w of active.filter((w) => (w.spec.volumeReplica?.index ?? 0) >= replicas)) {
    actions.push({ type: 'deleteWorkItem', name: w.metadata.name!, uid: w.metadata.uid });
  }
  const unplaced = placeMissing(o, slots, size, actions);
  const status = volumeStatus(o, slots, size, problems, unplaced);
  const growing = slots.some((s) => s.workItem && s.workItem.spec.volumeReplica?.size !== size) ? growthSettlesInMs(o, size) : undefined;
  return { actions, status, requeueAfterMs: earliest(earliest(requeueAfterMs, joinSettlesInMs(status.replicas ?? [], o.now, o.seenAt)), growing) };
}

/** The size and replica count to carry out: the spec's, unless it shrinks what exists. */
function acceptedShape(volume: Volume): { size: string; replicas: number; problems: SpecProblem[] } {
  const problems: SpecProblem[] = [];
  let size = volume.spec.size;
  const current = volume.status?.capacity;
  if (current && parseQuantity(size) < parseQuantity(current)) {
    problems.push({
      reason: 'ShrinkNotSupported',
      message: `spec.size ${size} is smaller than the current ${current}; volumes cannot shrink without losing data. Set spec.size back to ${current} or more, or create a new, smaller volume and copy the data`,
    });
    size = current;
  }
  // Only replicas that were placed exist (a Pending slot never had a node); dropping trailing never-placed
  // slots loses nothing, dropping any index at or below the highest placed one would delete data.
  const replicas = acceptedReplicas(volume);
  if ((volume.spec.replicas ?? 1) < replicas) {
    const placed = (volume.status?.replicas ?? []).filter((r) => r.nodeName);
    problems.push({
      reason: 'ReplicaReductionNotSupported',
      message: `spec.replicas ${volume.spec.replicas ?? 1} is lower than the ${placed.length} replicas that exist; removing replicas is not supported. Set spec.replicas back to ${replicas}`,
    });
  }
  return { size, replicas, problems };
}

/** The layout's volfiles, and the self-heal daemon's volfile of its first bricks only (copy-gate.ts). */
type FullLayout = LayoutVolfiles & { shdOf(upTo: number): string };

/**
 * Driver gluster: the volfiles naming every brick (the self-heal daemon's and the FUSE client's), once
 * each can be named (api/volume.ts graphBricks): a brick by its WorkItem on a node with an address, a
 * brick without a WorkItem (released with its lost node) or on a node without an address by its last
 * address in the status, which clients also use. Until then no daemon runs: a heal needs every brick
 * named. A brick moved changes them, so every brick's WorkItem is updated and its agent restarts the daemon.
 */
function layoutVolfiles(o: VolumeObserved, active: WorkItem[]): FullLayout | undefined {
  if (!isGluster(o.volume)) return undefined;
  const byIndex = (i: number) => active.find((w) => w.spec.volumeReplica?.index === i);
  const slot = (i: number): BrickSlot => {
    const w = byIndex(i);
    const brick = w?.spec.volumeReplica?.brick;
    const host = w && o.nodeAddress(w.spec.nodeName);
    if (brick && host) return { host, port: brick.port, path: brick.path };
    const last = statusBrick(o.volume, i);
    return w && last === 'unplaced' ? undefined : last;
  };
  const bricks = graphBricks(o.volume, slot);
  if (!bricks) return undefined;
  const shdOf = (upTo: number) => shdVolfile(glusterLayout(o.volume, bricks.slice(0, upTo)));
  return { shd: shdOf(bricks.length), client: clientVolfile(glusterLayout(o.volume, bricks)), joinedAt: bricks.map((_, i) => byIndex(i)?.status?.volumeReplica?.brick?.joinedAt), shdOf };
}

function glusterLayout(volume: Volume, bricks: BrickPlacement[]): GlusterLayout {
  return specLayout(volume.spec, { volume: glusterVolumeName(volume.metadata.namespace!, volume.metadata.name!), volumeId: volume.metadata.uid!, bricks });
}

/**
 * The copy gate (copy-gate.ts) of the raised replicas whose copy is held (RAISED_REPLICA_ANNOTATION): while
 * held, the self-heal daemons get a graph without them (raised indexes are the highest, so the others keep
 * their client names); once open, the layout says which to mark released. A new volume's bricks are not
 * raised: until one joined, a client volfile was given out only once every brick was placed (api/volume.ts
 * graphBricks), so every mount's graph names them all.
 */
function gateCopies(o: VolumeObserved, layout: FullLayout, active: readonly WorkItem[]): { layout: LayoutVolfiles; held: boolean; inMs?: number } | undefined {
  const held = active.filter((w) => w.metadata.annotations?.[RAISED_REPLICA_ANNOTATION] === 'held').map((w) => w.spec.volumeReplica!.index);
  if (held.length === 0) return undefined;
  const gate = copyGate({ mounts: o.mounts, clientVolfile: layout.client, node: o.node, unchangedSince: (v) => o.unchangedSince('mounts', v), now: o.now });
  if (!gate.held) return { layout: { ...layout, copiesReleased: new Set(held) }, held: false };
  return { layout: { ...layout, shd: layout.shdOf(Math.min(...held)), copyHeld: replacementsUnjoined(o.volume) ?? gate.message }, held: true, inMs: gate.inMs };
}

/**
 * Why the copy gate holds while a replacement brick has not joined: the mounts name it down until then
 * (api/volume.ts mountBrick), so their graph cannot be the one the gate waits for.
 */
function replacementsUnjoined(volume: Volume): string | undefined {
  const replacing = (volume.status?.replicas ?? []).filter((r) => r.replacement).map((r) => r.index);
  if (replacing.length === 0) return undefined;
  return `waiting for the replacement brick${replacing.length > 1 ? 's' : ''} of replica ${replacing.join(', ')} to join: until then the instances' mounts name ${replacing.length > 1 ? 'them' : 'it'} down, so they cannot take the graph naming the raised bricks`;
}

/** The layout with the recrawl token its bricks should carry (heal-stall.ts), and when to look at a waiting heal again. */
function layoutWithRecrawl<L extends LayoutVolfiles>(o: VolumeObserved, layout: L | undefined, active: WorkItem[]): { layout: L; inMs?: number } | undefined {
  if (!layout || isStopped(o.volume)) return layout && { layout };
  // In index order: the counts' signature must not change with the cache's order.
  const byIndex = [...active].sort((a, b) => (a.spec.volumeReplica?.index ?? 0) - (b.spec.volumeReplica?.index ?? 0));
  const bricks = byIndex.map((w) => w.status?.volumeReplica?.brick).map((b) => ({ running: b?.state === 'Running', pendingHeals: b?.pendingHeals ?? 0 }));
  const { recrawl, inMs } = healRecrawl({
    bricks,
    splitBrain: (o.volume.status?.replicas ?? []).some((r) => (r.brick?.splitBrain ?? 0) > 0),
    countsSince: o.unchangedSince('heals', bricks.map((b) => b.pendingHeals).join(' ')),
    recrawl: active.find((w) => w.spec.volumeReplica?.brick?.recrawl)?.spec.volumeReplica!.brick!.recrawl,
    healTimeoutMs: Number(effectiveGlusterOptions(o.volume.spec.options)['cluster.heal-timeout']) * 1000,
    now: o.now,
  });
  return { layout: { ...layout, ...(recrawl ? { recrawl } : {}) }, inMs };
}

function planSlot(o: VolumeObserved, index: number, wi: WorkItem | undefined, size: string, actions: Action[], layout?: LayoutVolfiles): { slot: ReplicaSlot; requeueAfterMs?: number } {
  if (!wi) return { slot: { index } };
  const node = o.node(wi.spec.nodeName);
  if (node.lost && o.cluster?.spec?.failover?.recreateLostReplicas !== false) {
    const copy = goodCopyBesides(o, wi);
    if (copy !== 'found') return { slot: { index, workItem: wi, unreachable: true, onlyCopy: copy === 'none' ? true : copy } };
    actions.push({ type: 'releaseWorkItem', name: wi.metadata.name!, uid: wi.metadata.uid });
    actions.push({ type: 'event', eventType: 'Warning', reason: 'ReplicaLost', message: `replica ${index} on lost node ${wi.spec.nodeName} is recreated on another node` });
    return { slot: { index, lostOn: wi.spec.nodeName } };
  }
  const raised = wi.metadata.annotations?.[RAISED_REPLICA_ANNOTATION];
  const released = raised === 'held' && !!layout?.copiesReleased?.has(index);
  const desired = asRaised(desiredReplicaWorkItem(o.volume, index, wi.spec.nodeName, rollingSize(o, wi, size), o.brickHome(wi.spec.nodeName, wi), layout), released ? 'released' : undefined);
  if (released || wi.metadata.annotations?.[SPEC_HASH_ANNOTATION] !== desired.metadata.annotations?.[SPEC_HASH_ANNOTATION]) {
    actions.push({ type: 'updateWorkItem', workItem: mergeWorkItem(wi, desired) });
  }
  const copyHeld = raised === 'held' && !released ? layout?.copyHeld : undefined;
  // A lost node kept (recreateLostReplicas false) waits for the node to come back: its return wakes us, not a timer.
  return { slot: { index, workItem: wi, unreachable: node.unreachable, ...(copyHeld ? { copyHeld } : {}) }, requeueAfterMs: node.unreachable && !node.lost ? node.lostInMs + 100 : undefined };
}

/**
 * Whether a replica other than `lost` holds everything it held, so that `lost` may be released and
 * recreated empty elsewhere: driver gluster (a file replica is a copy of its own), and a brick that
 * has joined, runs (or is stopped with its volume) on a node in touch, and that no brick's report
 * names as having missed writes. Released otherwise, the lost replica was the one copy of the data:
 * replaced by an empty one at once, and deleted by its own agent when its node came back.
 * 'joinSettling' while the only such brick joined too recently for the others' reports to show what
 * it missed (JOIN_SETTLE_MS); the volume's plan looks again once that has passed. 'writtenAlone' when
 * `lost` itself may hold writes no report shows (couldHaveWrittenAlone).
 */
function goodCopyBesides(o: VolumeObserved, lost: WorkItem): 'found' | 'joinSettling' | 'writtenAlone' | 'none' {
  if (!isGluster(o.volume)) return 'none';
  if (couldHaveWrittenAlone(o, lost)) return 'writtenAlone';
  const bricks = activeBricks(o);
  const blamed = missedWrites(bricks);
  const candidates = bricks.flatMap((w) => {
    const index = w.spec.volumeReplica!.index;
    // An arbiter holds names and metadata, not the data: never the good copy of a data brick.
    if (w === lost || index === lost.spec.volumeReplica?.index || blamed(index) || isArbiter(o.volume, index)) return [];
    const brick = reachableBrick(o, w);
    const up = brick?.state === 'Running' || (brick?.state === 'Stopped' && !!w.spec.volumeReplica!.brick?.stopped);
    return up && brick?.joinedAt ? [o.seenAt(`join/${index}`, brick.joinedAt) + JOIN_SETTLE_MS <= o.now] : [];
  });
  if (candidates.includes(true)) return 'found';
  return candidates.length > 0 ? 'joinSettling' : 'none';
}

/**
 * Whether `lost` may hold writes no report shows: a mount cut off with it from the other bricks gives them
 * up after network.ping-timeout, then writes to it alone while the quorum rule lets it alone pass (the
 * first of two bricks under quorum-type auto; any under none or fixed 1), until fencing stops the
 * instance at the end of its node's lease, and its node cannot report those writes. With the ping timeout
 * at least the node lease (the defaults: 42 s and 10 s), the instance is stopped before its mount gives up.
 */
function couldHaveWrittenAlone(o: VolumeObserved, lost: WorkItem): boolean {
  // Stopped, or mounted by no instance: nothing writes to it.
  if (isStopped(o.volume) || o.mounts.length === 0) return false;
  const pingTimeoutSeconds = Number(effectiveGlusterOptions(o.volume.spec.options)['network.ping-timeout']);
  const leaseSeconds = nodeLeaseSeconds(o.cluster);
  if (pingTimeoutSeconds >= leaseSeconds) return false;
  const index = lost.spec.volumeReplica!.index;
  const alone = Array.from({ length: acceptedReplicas(o.volume) }, (_, i) => ({ index: i, up: i === index, pendingHeals: 0 }));
  return hasQuorum(alone, quorumRule(o.volume));
}

/**
 * Whether the bricks' reports name replica `index` as having missed writes: some entry blames it, or a
 * brick other than it left entries uninspected (they may blame anyone).
 */
function missedWrites(bricks: readonly WorkItem[]): (index: number) => boolean {
  const reports = bricks.map((w) => ({ index: w.spec.volumeReplica!.index, brick: w.status?.volumeReplica?.brick }));
  // owedTo covers every owed entry; the entries are read too for agents older than owedTo, which report only them.
  const blamed = new Set(reports.flatMap(({ brick }) => [...(brick?.owedTo ?? []), ...(brick?.owed ?? []).flatMap((entry) => entry.bricks)]));
  const unsure = reports.filter(({ brick }) => (brick?.uninspected ?? 0) > 0).map((r) => r.index);
  return (index) => blamed.has(index) || unsure.some((reporter) => reporter !== index);
}

/** The replica WorkItems not being deleted. */
function activeBricks(o: VolumeObserved): WorkItem[] {
  return o.workItems.filter((w) => !w.metadata.deletionTimestamp && w.spec.volumeReplica);
}

/** What `w`'s agent last reported of its brick, while its node is in touch (undefined otherwise). */
function reachableBrick(o: VolumeObserved, w: WorkItem) {
  const node = o.node(w.spec.nodeName);
  return node.lost || node.unreachable ? undefined : w.status?.volumeReplica?.brick;
}

/**
 * The size a replica's WorkItem gets. Driver gluster grows one brick at a time, lowest index first: a
 * brick may stop for a moment to grow (offline resize), and the next waits until the last has reported
 * the new size for GROWN_SETTLE_MS, long enough for every client to have reconnected to it (they retry
 * every 3 s), so the others keep quorum: with three or more bricks always; with two under quorum-type
 * auto, which needs the first one, an offline grow of the first pauses writes until it is back. Files,
 * and bricks already asked for the size, get it at once.
 */
function rollingSize(o: VolumeObserved, wi: WorkItem, size: string): string {
  const asked = (w: WorkItem) => w.spec.volumeReplica?.size;
  if (!isGluster(o.volume) || asked(wi) === size) return size;
  const bricks = activeBricks(o);
  const next = bricks.filter((w) => asked(w) !== size).sort((a, b) => a.spec.volumeReplica!.index - b.spec.volumeReplica!.index)[0];
  return growthSettlesInMs(o, size) === undefined && next === wi && othersServe(o, bricks, wi) ? size : (asked(wi) ?? size);
}

/**
 * Whether every brick but `growing` runs, on a node in touch, with nothing to heal: an offline grow
 * stops `growing` for as long as its filesystem check takes, and meanwhile the others must keep quorum
 * and hold every write. A brick down, or one still healing the last to grow, makes the roll wait.
 */
function othersServe(o: VolumeObserved, bricks: WorkItem[], growing: WorkItem): boolean {
  return bricks.every((w) => {
    const brick = reachableBrick(o, w);
    return w === growing || (brick?.state === 'Running' && (brick.pendingHeals ?? 0) === 0);
  });
}

/** How long until the brick growing to `size` has settled (undefined: none is growing or settling). */
function growthSettlesInMs(o: VolumeObserved, size: string): number | undefined {
  let wait: number | undefined;
  for (const w of o.workItems) {
    if (w.metadata.deletionTimestamp || w.spec.volumeReplica?.size !== size || !isGluster(o.volume)) continue;
    const s = w.status;
    if (s?.volumeReplica?.size !== size) return GROWN_SETTLE_MS;
    const left = (s.finishedAt ? o.seenAt(`grown/${w.spec.volumeReplica.index}`, s.finishedAt) : NaN) + GROWN_SETTLE_MS - o.now;
    if (left > 0) wait = Math.max(wait ?? 0, left);
  }
  return wait;
}

/** Creates WorkItems for slots without one; returns the scheduler's message when some stay unplaced. */
function placeMissing(o: VolumeObserved, slots: ReplicaSlot[], size: string, actions: Action[]): string | undefined {
  // A replica released from a lost node this round is placed next round: until its WorkItem is gone
  // from the cache the scheduler still counts it as kept on the lost node and would hand that node back.
  const missing = slots.filter((s) => !s.workItem && !s.lostOn);
  if (missing.length === 0) return undefined;
  const decision = o.schedule();
  const used = new Set(slots.flatMap((s) => (s.workItem ? [s.workItem.spec.nodeName] : s.lostOn ? [s.lostOn] : [])));
  const free = decision.nodeNames.filter((n) => !used.has(n));
  for (const slot of missing) {
    const nodeName = free.shift();
    if (!nodeName) break;
    const raised = inService(o.volume) && statusBrick(o.volume, slot.index) === 'unplaced';
    const workItem = asRaised(desiredReplicaWorkItem(o.volume, slot.index, nodeName, size, o.brickHome(nodeName)), raised ? 'held' : undefined);
    actions.push({ type: 'createWorkItem', workItem });
    slot.workItem = workItem;
  }
  if (free.length === 0 && missing.some((s) => !s.workItem) && decision.message) {
    // One Event per new message, not one per reconcile.
    if (o.volume.status?.message !== decision.message) actions.push({ type: 'event', eventType: 'Warning', reason: 'FailedScheduling', message: decision.message });
    return decision.message;
  }
  return undefined;
}

/** `w` with the raised replica's mark `state` (RAISED_REPLICA_ANNOTATION), or as it is. */
function asRaised(w: WorkItem, state: 'held' | 'released' | undefined): WorkItem {
  return state ? { ...w, metadata: { ...w.metadata, annotations: { ...w.metadata.annotations, [RAISED_REPLICA_ANNOTATION]: state } } } : w;
}

function planVolumeDeletion(o: VolumeObserved): Plan<VolumeStatus> {
  const actions: Action[] = [];
  let requeueAfterMs: number | undefined;
  for (const w of o.workItems) {
    const node = o.node(w.spec.nodeName);
    if (node.lost) actions.push({ type: 'releaseWorkItem', name: w.metadata.name!, uid: w.metadata.uid });
    else if (!w.metadata.deletionTimestamp) actions.push({ type: 'deleteWorkItem', name: w.metadata.name!, uid: w.metadata.uid });
    if (node.unreachable && !node.lost) requeueAfterMs = earliest(requeueAfterMs, node.lostInMs + 100);
  }
  if (o.workItems.length === 0 && o.volume.metadata.finalizers?.includes(CONTROLLER_FINALIZER)) actions.push({ type: 'removeFinalizer' });
  const slots = o.workItems.map((w) => ({ index: w.spec.volumeReplica?.index ?? 0, workItem: w }));
  return { actions, status: volumeStatus(o, slots, o.volume.status?.capacity ?? o.volume.spec.size, [], undefined), requeueAfterMs };
}

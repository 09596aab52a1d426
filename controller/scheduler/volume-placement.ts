/**
 * Chooses nodes for the replicas a Volume still lacks. Replicas that hold
 * live data stay where they are (moving data is never a scheduling side
 * effect); only the missing ones are placed, one per node, spread across
 * failure zones (topology.kubernetes.io/zone) where nodes say theirs, then
 * on the nodes with the lowest storage allocation after placement, ties
 * broken by name, so replicas spread and the same input gives the same nodes. When too few
 * nodes fit, the nodes that do are still returned, so the caller can create
 * what it can now and report the rest.
 */
import { ZONE_LABEL } from '../../api/names.js';
import { acceptedReplicas, isGluster, type Volume } from '../../api/volume.js';
import { matchesNodeSelector } from './eligibility.js';
import { compareNames, nodeViews, usedFraction, type NodeView } from './node-view.js';
import { liveReplicaNodes } from './placements.js';
import { REASON } from './reasons.js';
import { volumeSizeBytes } from './requests.js';
import { clusterName, objectKey, type ClusterSnapshot, type ScheduleOptions } from './snapshot.js';
import { noNodesMessage, tallyReasons, unschedulableMessage, type Unschedulable } from './unschedulable-message.js';

/** The nodes that should hold the Volume's replicas: those kept first, then the new ones in order of preference. */
export type ReplicaPlacement = { nodeNames: string[] } | (Unschedulable & { nodeNames: string[] });

interface ReplicaFitContext {
  sizeBytes: number;
  gluster: boolean;
  holders: ReadonlySet<string>;
  excluded: ReadonlySet<string>;
  nodeSelector: Readonly<Record<string, string>> | undefined;
}

/** The first check a node fails for a new replica, in a fixed order, or undefined when it can take one. */
function replicaFitFailure({ name, node, usage, capacity, eligibility }: NodeView, ctx: ReplicaFitContext): string | undefined {
  if (!eligibility.eligible) return eligibility.reason;
  if (ctx.excluded.has(name)) return REASON.excluded;
  if (ctx.holders.has(name)) return REASON.holdsReplica;
  if (!matchesNodeSelector(node, ctx.nodeSelector)) return REASON.nodeSelector;
  // A node that says it cannot run bricks (glusterfsd or attr missing) gets none; one that says nothing may.
  if (ctx.gluster && node.status?.drivers?.find((d) => d.name === 'gluster')?.available === false) return REASON.noGluster;
  if (usage.storageBytes + ctx.sizeBytes > capacity.storageBytes) return REASON.insufficientStorage;
  return undefined;
}

function zoneOf(v: NodeView): string | undefined {
  return v.node.metadata.labels?.[ZONE_LABEL];
}

/**
 * `count` of the nodes, in their order of preference, each next one from a zone holding the fewest of the
 * Volume's replicas so far (kept ones included), so losing a zone loses as few replicas as can be. A node
 * without a zone label is a zone of its own.
 */
function spreadOverZones(preferred: readonly NodeView[], keptZones: ReadonlyArray<string | undefined>, count: number): NodeView[] {
  const inZone = new Map<string, number>();
  const add = (zone: string | undefined) => zone !== undefined && inZone.set(zone, (inZone.get(zone) ?? 0) + 1);
  keptZones.forEach(add);
  const load = (v: NodeView) => {
    const zone = zoneOf(v);
    return zone === undefined ? 0 : (inZone.get(zone) ?? 0);
  };
  const left = [...preferred];
  const chosen: NodeView[] = [];
  while (chosen.length < count && left.length > 0) {
    const best = left.reduce((b, v, i) => (load(v) < load(left[b]!) ? i : b), 0);
    const [next] = left.splice(best, 1);
    chosen.push(next!);
    add(zoneOf(next!));
  }
  return chosen;
}

/**
 * Nodes for a Volume's spec.replicas (default 1). Live replicas on nodes
 * not in opts.excludeNodes are kept (all of them: choosing which extra
 * replica to remove is the Volume reconciler's call); a live replica on an
 * excluded node is to be replaced. Unschedulable counts, per node, why it
 * cannot take a new replica; "a/b nodes are available" means a of the b
 * nodes could take one, and a sentence says how many replicas are missing.
 */
export function scheduleVolumeReplicas(volume: Volume, snapshot: ClusterSnapshot, opts: ScheduleOptions = {}): ReplicaPlacement {
  const excluded = new Set(opts.excludeNodes ?? []);
  const kept = liveReplicaNodes(volume).filter((n) => !excluded.has(n));
  // The replicas the volume keeps: a refused lowering of spec.replicas (data would go) leaves more, and a lost one
  // of those is replaced like any other, or the volume would stay a brick short for good.
  const wanted = acceptedReplicas(volume);
  const missing = wanted - kept.length;
  if (missing <= 0) return { nodeNames: kept };
  const self = objectKey(volume);
  // The Volume as passed wins over its copy in the snapshot, which may be older.
  const current: ClusterSnapshot = { ...snapshot, volumes: [...snapshot.volumes.filter((v) => objectKey(v) !== self), volume] };
  const ctx: ReplicaFitContext = { sizeBytes: volumeSizeBytes(volume), gluster: isGluster(volume), holders: new Set(kept), excluded, nodeSelector: volume.spec.nodeSelector };
  const fitting: NodeView[] = [];
  const failures: string[] = [];
  for (const view of nodeViews(current)) {
    const failure = replicaFitFailure(view, ctx);
    if (failure === undefined) fitting.push(view);
    else failures.push(failure);
  }
  const fraction = (v: NodeView): number => usedFraction(v.usage.storageBytes + ctx.sizeBytes, v.capacity.storageBytes);
  const preferred = fitting.sort((a, b) => fraction(a) - fraction(b) || compareNames(a.name, b.name));
  const keptZones = nodeViews(current).filter((v) => kept.includes(v.name)).map(zoneOf);
  const chosen = spreadOverZones(preferred, keptZones, missing).map((v) => v.name);
  const nodeNames = [...kept, ...chosen];
  if (chosen.length === missing) return { nodeNames };
  const stillMissing = missing - chosen.length;
  const hint = `${stillMissing} of ${wanted} replicas ${stillMissing === 1 ? 'is' : 'are'} still missing.`;
  const reasons = tallyReasons(failures);
  const message =
    snapshot.nodes.length === 0
      ? noNodesMessage(clusterName(snapshot, volume.metadata), [hint])
      : unschedulableMessage(fitting.length, snapshot.nodes.length, reasons, [hint]);
  return { unschedulable: true, message, reasons, nodeNames };
}

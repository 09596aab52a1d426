/**
 * Whether one node can take one Instance, as an ordered list of checks.
 * The order is part of the contract: a node is reported under the first
 * check it fails, so hard facts about the node (ineligible, excluded) come
 * before what the Instance asks for (selector, pin, anti-affinity, volume
 * locality: a gluster volume is reachable from every node once mountable,
 * and none while Stopped),
 * and resources come last because they are what changes by
 * itself as other instances come and go.
 */
import type { Instance } from '../../api/instance.js';
import { isStopped } from '../../api/volume.js';
import { matchesNodeSelector } from './eligibility.js';
import type { NodeView } from './node-view.js';
import { pinnedNode, type Pin } from './pin.js';
import { glusterBricks, instanceNodes, liveReplicaNodes } from './placements.js';
import { REASON } from './reasons.js';
import { instanceRequest, type InstanceRequest } from './requests.js';
import { instanceLimits, type ClusterSnapshot, type ScheduleOptions } from './snapshot.js';

/** Everything the checks need to know about the Instance, computed once per decision. */
export interface InstanceFitContext {
  request: InstanceRequest;
  pin: Pin | undefined;
  nodeSelector: Readonly<Record<string, string>> | undefined;
  /** The Instance's anti-affinity group and the nodes where another member sits. */
  antiAffinity: { group: string; nodes: ReadonlySet<string> } | undefined;
  /** Each attached Volume, the nodes holding a live replica of it, and whether every node reaches its data (driver gluster, mountable). */
  volumes: ReadonlyArray<{ volumeName: string; holders: ReadonlySet<string>; shared: boolean; stopped: boolean }>;
  /** The first attached Volume that is stopped (spec.stopped), whatever the node. */
  stoppedVolume: string | undefined;
  maxInstancesPerNode: number;
  excluded: ReadonlySet<string>;
}

type Check = (view: NodeView, ctx: InstanceFitContext) => string | undefined;

const CHECKS: readonly Check[] = [
  ({ eligibility: e }) => (e.eligible ? undefined : e.reason),
  ({ name }, ctx) => (ctx.excluded.has(name) ? REASON.excluded : undefined),
  ({ node }, ctx) => (matchesNodeSelector(node, ctx.nodeSelector) ? undefined : REASON.nodeSelector),
  ({ name }, ctx) => (ctx.pin && ctx.pin.nodeName !== name ? REASON.notPinned : undefined),
  ({ name }, ctx) => (ctx.antiAffinity?.nodes.has(name) ? REASON.antiAffinity(ctx.antiAffinity.group) : undefined),
  (_, ctx) => (ctx.stoppedVolume === undefined ? undefined : REASON.volumeStopped(ctx.stoppedVolume)),
  ({ name }, ctx) => {
    // A loop, not find(): a closure over the name for each node of each decision was a good part of the controller's garbage.
    for (const v of ctx.volumes) if (!v.shared && !v.holders.has(name)) return REASON.noReplica(v.volumeName);
    return undefined;
  },
  ({ usage }, ctx) => (ctx.maxInstancesPerNode > 0 && usage.instances >= ctx.maxInstancesPerNode ? REASON.maxInstancesPerNode : undefined),
  ({ usage, capacity }, ctx) => (usage.cpus + ctx.request.cpus > capacity.cpus ? REASON.insufficientCpu : undefined),
  ({ usage, capacity }, ctx) => (usage.memoryBytes + ctx.request.memoryBytes > capacity.memoryBytes ? REASON.insufficientMemory : undefined),
];

/** The first check a node fails for the Instance, or undefined when it fits. */
export function instanceFitFailure(view: NodeView, ctx: InstanceFitContext): string | undefined {
  for (const check of CHECKS) {
    const reason = check(view, ctx);
    if (reason !== undefined) return reason;
  }
  return undefined;
}

/** The fit context of an Instance against a snapshot that no longer contains the Instance itself. */
export function instanceFitContext(instance: Instance, others: ClusterSnapshot, opts: ScheduleOptions): InstanceFitContext {
  const group = instance.spec.placement?.antiAffinityGroup;
  const volumeNames = [...new Set((instance.spec.volumes ?? []).map((v) => v.volumeName))];
  const volumes = volumeNames.map((volumeName) => {
    const volume = others.volumes.find((v) => v.metadata.name === volumeName);
    return { volumeName, holders: new Set(volume ? liveReplicaNodes(volume) : []), shared: !!volume && glusterBricks(volume) !== undefined, stopped: !!volume && isStopped(volume) };
  });
  return {
    request: instanceRequest(instance),
    pin: pinnedNode(instance),
    nodeSelector: instance.spec.placement?.nodeSelector,
    antiAffinity: group
      ? { group, nodes: new Set(others.instances.filter((i) => i.spec.placement?.antiAffinityGroup === group).flatMap(instanceNodes)) }
      : undefined,
    volumes,
    stoppedVolume: volumes.find((v) => v.stopped)?.volumeName,
    maxInstancesPerNode: instanceLimits(others.cluster).maxInstancesPerNode,
    excluded: new Set(opts.excludeNodes ?? []),
  };
}

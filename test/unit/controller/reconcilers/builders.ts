/** Builders of the objects and observations the reconciler plan tests feed in (not a test file itself). */
import type { Cluster, ClusterSpec } from '../../../../api/cluster.js';
import type { Instance, InstanceSpec, InstanceStatus } from '../../../../api/instance.js';
import { CONTROLLER_FINALIZER } from '../../../../api/names.js';
import type { Volume, VolumeSpec, VolumeStatus } from '../../../../api/volume.js';
import type { WorkItem, WorkItemStatus } from '../../../../api/workitem.js';
import type { NodeView } from '../../../../controller/node-health.js';
import type { Action } from '../../../../controller/reconcilers/actions.js';
import { desiredInstanceWorkItem } from '../../../../controller/reconcilers/instance/workitem-spec.js';
import type { InstanceObserved, ScheduleDecision } from '../../../../controller/reconcilers/instance/observed.js';
import type { VolumeObserved } from '../../../../controller/reconcilers/volume/plan.js';
import { desiredReplicaWorkItem } from '../../../../controller/reconcilers/volume/workitem-spec.js';

/** Namespace (= cluster name) of every object built here. */
export const NS = 'c1';
/** The fixed "now" of every plan. */
export const NOW = Date.parse('2024-05-01T12:00:00Z');
/** NOW as the controller writes it. */
export const NOW_TEXT = '2024-05-01T12:00:00Z';
/** An older time, for conditions that were set before. */
export const EARLIER = '2024-05-01T11:00:00Z';

/** A reachable, schedulable node. */
export const READY: NodeView = { exists: true, unreachable: false, lost: false, lostInMs: Infinity, draining: false };
/** A reachable node being drained. */
export const DRAINING: NodeView = { ...READY, draining: true };
/** A node that is lost (unreachable past the grace period). */
export const LOST: NodeView = { exists: true, unreachable: true, lost: true, lostInMs: 0, draining: false };
/** A Node object that does not exist any more. */
export const GONE: NodeView = { exists: false, unreachable: true, lost: true, lostInMs: 0, draining: false };
/** A node whose lease expired, lost in lostInMs. */
export function unreachable(lostInMs: number): NodeView {
  return { exists: true, unreachable: true, lost: false, lostInMs, draining: false };
}

/** node(name) answering from a table; nodes not listed are READY. */
export function nodeTable(table: Record<string, NodeView> = {}): (name: string) => NodeView {
  return (name) => table[name] ?? READY;
}

/** A Cluster named NS. */
export function cluster(spec: ClusterSpec = {}): Cluster {
  return { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: NS, uid: 'uid-cluster', generation: 1 }, spec };
}

/** Extra metadata and status of an Instance or Volume. */
export interface OwnerOptions {
  annotations?: Record<string, string>;
  finalizers?: string[];
  deleting?: boolean;
  generation?: number;
}

/** An Instance named `name` carrying the controller finalizer (unless told otherwise), generation 1. */
export function instance(name: string, spec: InstanceSpec = {}, status?: InstanceStatus, o: OwnerOptions = {}): Instance {
  return {
    apiVersion: 'cairn.dev/v1alpha1',
    kind: 'Instance',
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      resourceVersion: '10',
      generation: o.generation ?? 1,
      finalizers: o.finalizers ?? [CONTROLLER_FINALIZER],
      ...(o.annotations ? { annotations: o.annotations } : {}),
      ...(o.deleting ? { deletionTimestamp: EARLIER } : {}),
    },
    spec: { process: { command: ['/bin/sleep', '1000'] }, ...spec },
    ...(status ? { status } : {}),
  };
}

/** Stored-object metadata and status of a WorkItem. */
export interface StoredOptions {
  status?: WorkItemStatus;
  deleting?: boolean;
  generation?: number;
  resourceVersion?: string;
}

function stored(w: WorkItem, o: StoredOptions): WorkItem {
  return {
    ...w,
    metadata: {
      ...w.metadata,
      uid: `uid-${w.metadata.name}`,
      resourceVersion: o.resourceVersion ?? '5',
      generation: o.generation ?? 1,
      creationTimestamp: EARLIER,
      ...(o.deleting ? { deletionTimestamp: EARLIER } : {}),
    },
    ...(o.status ? { status: o.status } : {}),
  };
}

/** The WorkItem of inst on nodeName as the controller wrote it and the apiserver stored it. */
export function instanceWorkItem(inst: Instance, nodeName: string, o: StoredOptions & { cluster?: Cluster; volumes?: ReadonlyMap<string, Volume> } = {}): WorkItem {
  return stored(desiredInstanceWorkItem(inst, o.cluster, o.volumes ?? new Map(), nodeName), o);
}

/** The agent's report of a running workload for the WorkItem's current generation. */
export function running(pid = 4242, generation = 1): WorkItemStatus {
  return { observedGeneration: generation, phase: 'Done', instance: { state: 'Running', ready: true, pid, restarts: 0, startedAt: EARLIER, logPath: '/var/log/x.log' } };
}

/** Observations for planInstance; defaults: no WorkItems, every node READY, fencing free, schedules on n1. */
export function instanceObserved(inst: Instance, p: Partial<Omit<InstanceObserved, 'instance'>> & { decision?: ScheduleDecision; nodes?: Record<string, NodeView> } = {}): InstanceObserved & { scheduled: () => number } {
  let calls = 0;
  const { decision, nodes, ...rest } = p;
  return {
    instance: inst,
    workItems: [],
    volumes: new Map(),
    node: nodeTable(nodes),
    fencing: { held: false, remainingMs: 0 },
    schedule: () => {
      calls++;
      return decision ?? { nodeName: 'n1' };
    },
    now: NOW,
    ...rest,
    scheduled: () => calls,
  };
}

/** A Volume named `name`, 10Gi with the given spec (driver file unless it says gluster), carrying the controller finalizer. */
export function volume(name: string, spec: Partial<VolumeSpec> = {}, status?: VolumeStatus, o: OwnerOptions = {}): Volume {
  return {
    apiVersion: 'cairn.dev/v1alpha1',
    kind: 'Volume',
    metadata: {
      name,
      namespace: NS,
      uid: `uid-${name}`,
      resourceVersion: '20',
      generation: o.generation ?? 1,
      finalizers: o.finalizers ?? [CONTROLLER_FINALIZER],
      ...(o.deleting ? { deletionTimestamp: EARLIER } : {}),
    },
    spec: { size: '10Gi', driver: 'file', ...spec },
    ...(status ? { status } : {}),
  };
}

/** The WorkItem of replica index of vol on nodeName, as stored (size defaults to the spec's). */
export function replicaWorkItem(vol: Volume, index: number, nodeName: string, o: StoredOptions & { size?: string } = {}): WorkItem {
  return stored(desiredReplicaWorkItem(vol, index, nodeName, o.size ?? vol.spec.size, { dataDir: `/data/${nodeName}`, port: 49152 }), o);
}

/** The agent's report of a replica that exists with the given size. */
export function replicaDone(size = '10Gi', path = '/data/r', generation = 1): WorkItemStatus {
  return { observedGeneration: generation, phase: 'Done', volumeReplica: { path, size } };
}

/** Observations for planVolume; defaults: no WorkItems, every node READY, the scheduler answers nodeNames. */
export function volumeObserved(vol: Volume, p: Partial<Omit<VolumeObserved, 'volume'>> & { nodeNames?: string[]; message?: string; nodes?: Record<string, NodeView> } = {}): VolumeObserved & { scheduled: () => number } {
  let calls = 0;
  const { nodeNames, message, nodes, ...rest } = p;
  return {
    volume: vol,
    workItems: [],
    node: nodeTable(nodes),
    schedule: () => {
      calls++;
      return { nodeNames: nodeNames ?? ['n1', 'n2', 'n3'], ...(message ? { message } : {}) };
    },
    brickHome: (n, existing) => ({ dataDir: `/data/${n}`, port: existing?.spec.volumeReplica?.brick?.port ?? 49152 }),
    nodeAddress: () => '10.0.0.1',
    now: NOW,
    seenAt: (_slot: string, stamp: string) => Date.parse(stamp), // agents' clocks in step with the controller's
    unchangedSince: () => NOW,
    mounts: [],
    ...rest,
    scheduled: () => calls,
  };
}

/** The actions of one type. */
export function ofType<T extends Action['type']>(actions: readonly Action[], type: T): Array<Extract<Action, { type: T }>> {
  return actions.filter((a): a is Extract<Action, { type: T }> => a.type === type);
}

/** The events among actions, as [type, reason]. */
export function events(actions: readonly Action[]): Array<[string, string]> {
  return ofType(actions, 'event').map((e) => [e.eventType, e.reason]);
}

/** Deep copy, for checking that a plan leaves its input alone. */
export function clone<T>(v: T): T {
  return structuredClone(v);
}

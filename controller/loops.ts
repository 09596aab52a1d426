/**
 * The four reconcile loops, and the garbage collector, and what wakes each
 * of them up. Every watch maps
 * an object to the keys it affects; the queue dedups them. Changes that
 * only feed aggregates (counts, allocation) are delayed so bursts coalesce
 * into one status write.
 */
import type { Logger } from 'winston';
import type { CairnClient } from '../api/client/cairn-client.js';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL } from '../api/names.js';
import { getCondition } from '../api/conditions.js';
import type { WorkItem } from '../api/workitem.js';
import { RestClient } from '../api/client/rest-client.js';
import type { ControllerCache, LeaseObject } from './cache.js';
import { changedForCollection, GarbageCollector, type GcSource } from './garbage-collector/collector.js';
import type { LeaseObservations } from './lease-observations.js';
import type { Placements } from './placements.js';
import type { StaleGuard } from './reconcilers/stale-guard.js';
import { reconcileCluster } from './reconcilers/cluster/reconciler.js';
import { reconcileInstance } from './reconcilers/instance/reconciler.js';
import { reconcileNode } from './reconcilers/node/reconciler.js';
import { reconcileVolume } from './reconcilers/volume/reconciler.js';
import { FirstSeen } from './first-seen.js';
import { changedForPlacement } from './node-changes.js';
import { changedBeyondStatus } from './cluster-changes.js';
import type { Clock } from '../runtime/clock.js';
import { Controller } from '../runtime/controller.js';
import type { EventRecorder } from '../runtime/events.js';
import type { RuntimeMetrics } from '../runtime/metrics.js';

/** What the loops share. */
export interface LoopDeps {
  cache: ControllerCache;
  client: CairnClient;
  recorder: EventRecorder;
  log: Logger;
  metrics: RuntimeMetrics;
  clock: Clock;
  leases: LeaseObservations;
  placements: Placements;
  stale: StaleGuard;
  workers: number;
  resyncMs: number;
}

/** The running loops. */
export interface ReconcileLoops {
  /** Syncs the caches the reconcilers read, then runs every loop until stop() (the garbage collector once its own caches have synced too). */
  start(): Promise<void>;
  stop(): void;
  /** Resolves when every loop has finished after stop(). */
  stopped: Promise<void>;
  readonly synced: boolean;
}

/** Cluster counts: at most about two status writes a second per cluster. */
const AGGREGATE_DELAY_MS = 500;
/** Garbage collection plans over every object: one run for a burst of changes, at most one a second while changes go on. */
const GC_DELAY_MS = 1000;
const GC_KEY = 'all';
/** A burst of WorkItem changes on a node: one Node reconcile for it (the plan itself spaces allocation-only writes). */
const NODE_ALLOCATION_DELAY_MS = 3000;
const nsKey = (o: { metadata: { namespace?: string; name?: string } }) => `${o.metadata.namespace}/${o.metadata.name}`;
const specChanged = (old: { metadata: { generation?: number } }, obj: { metadata: { generation?: number } }) => old.metadata.generation !== obj.metadata.generation;

/** Builds the Cluster, Node, Instance and Volume loops over one cache. */
export function buildControllers(d: LoopDeps): ReconcileLoops {
  const { cache } = d;
  const make = (name: string, workers: number, reconcile: (key: string) => Promise<{ requeueAfterMs?: number } | void>) =>
    new Controller({ name, reconcile, workers, log: d.log, metrics: d.metrics, clock: d.clock, resyncMs: d.resyncMs });
  const few = Math.max(1, Math.floor(d.workers / 2));
  const rest = RestClient.forConfig(d.client.kubeConfig);
  const clusters = make('cluster', 1, (k) => reconcileCluster({ ...d, rest }, k));
  const nodeDeps = { ...d, allocationWrites: new Map<string, number>() };
  const nodes = make('node', few, (k) => reconcileNode(nodeDeps, k));
  const instances = make('instance', d.workers, (k) => reconcileInstance(d, k));
  const volumeDeps = { ...d, firstSeen: new FirstSeen() };
  const volumes = make('volume', few, (k) => reconcileVolume(volumeDeps, k));

  observeLeases(d);
  clusters.watch(cache.clusters, (c) => [c.metadata.name!], 0, { changed: changedBeyondStatus });
  // Its status alone (mostly the loop's own write coming back): with the counts' delay, so an edit by hand is still undone.
  clusters.watch(cache.clusters, (c) => [c.metadata.name!], AGGREGATE_DELAY_MS, { changed: (old, now) => !changedBeyondStatus(old, now), updatesOnly: true });
  for (const inf of [cache.nodes, cache.instances, cache.volumes] as const) {
    clusters.watch(inf as typeof cache.nodes, (o) => [o.metadata.namespace!], AGGREGATE_DELAY_MS);
  }
  clusters.watch(cache.workItems, (w) => [w.metadata.namespace!], AGGREGATE_DELAY_MS);

  nodes.watch(cache.nodes, (n) => [nsKey(n)]);
  nodes.watch(cache.leases, (l) => leaseOwner(l, 'node-'));
  nodes.watch(cache.workItems, (w) => [`${w.metadata.namespace}/${w.spec.nodeName}`], NODE_ALLOCATION_DELAY_MS);

  instances.watch(cache.instances, (i) => [nsKey(i)]);
  // A WorkItem going away (being deleted, or gone: a relist finds a delete without the deletionTimestamp) frees
  // capacity that an unplaced instance may fit into. A WorkItem's change is progress of work under way (a node
  // started the instance): ahead of new Instances.
  const freed = (w: WorkItem) => waitingForRoom(d, w.metadata.namespace!, w.spec.nodeName);
  instances.watch(cache.workItems, (w) => [...ownerKeys(w, 'Instance'), ...(w.metadata.deletionTimestamp ? freed(w) : [])], 0, { urgent: true, deletedKeys: freed });
  instances.watch(cache.leases, (l) => leaseOwner(l, 'instance-'));
  instances.watch(cache.nodes, (n) => [...cache.instancesOnNode(n.metadata.namespace!, n.metadata.name!).map(nsKey), ...unplacedInstances(d, n.metadata.namespace!)], 0, { changed: changedForPlacement });
  instances.watch(cache.volumes, (v) => attachedInstances(d, v.metadata.namespace!, v.metadata.name!));
  // A Cluster's spec steers placement (policy), failover and driver defaults: what it refused or held may go now.
  instances.watch(cache.clusters, (c) => cache.inNamespace(cache.instances, c.metadata.name!).map(nsKey), AGGREGATE_DELAY_MS, { changed: specChanged });

  volumes.watch(cache.volumes, (v) => [nsKey(v)]);
  volumes.watch(cache.workItems, (w) => ownerKeys(w, 'Volume'));
  // An instance's report on the generation with a new client volfile may let the copy onto a raised brick go
  // (copy-gate.ts); its other status writes say nothing to its volumes.
  volumes.watch(cache.workItems, mountedGlusterVolumes, 0, { changed: (old, w) => mountSeen(old) !== mountSeen(w) });
  volumes.watch(cache.nodes, (n) => cache.inNamespace(cache.volumes, n.metadata.namespace!).map(nsKey), 0, { changed: changedForPlacement });
  // A Cluster's spec steers failover (recreateLostReplicas): a volume kept on a lost node waits on it, not on a timer.
  volumes.watch(cache.clusters, (c) => cache.inNamespace(cache.volumes, c.metadata.name!).map(nsKey), 0, { changed: specChanged });

  const collector = new GarbageCollector(gcSources(cache), rest, d.log);
  const gc = make('garbage-collector', 1, () => collector.collect());
  for (const s of gcSources(cache)) gc.watch(s.informer, () => [GC_KEY], GC_DELAY_MS, { changed: changedForCollection });

  const all = [clusters, nodes, instances, volumes, gc];
  let running: Promise<unknown> = Promise.resolve();
  let stopping = false;
  return {
    async start() {
      await cache.start();
      if (stopping) return;
      running = Promise.all(all.map((c) => c.run()));
      await running;
    },
    stop() {
      stopping = true;
      for (const c of all) c.stop();
    },
    get stopped() {
      return running.then(() => undefined);
    },
    get synced() {
      return cache.synced;
    },
  };
}

function observeLeases(d: LoopDeps): void {
  const seen = (l: LeaseObject) => void d.leases.view(l, d.clock.now());
  // Only a node lease's absence is ever asked about (a Node's heartbeat); others are just forgotten.
  const gone = (l: LeaseObject) => (l.metadata.name!.startsWith('node-') ? d.leases.deleted(l.metadata.namespace!, l.metadata.name!, d.clock.now()) : d.leases.forget(l.metadata.namespace!, l.metadata.name!));
  d.cache.leases.addHandlers({ add: seen, update: (_old, l) => seen(l), delete: gone });
}

function leaseOwner(lease: LeaseObject, prefix: string): string[] {
  const name = lease.metadata.name ?? '';
  return name.startsWith(prefix) ? [`${lease.metadata.namespace}/${name.slice(prefix.length)}`] : [];
}

function ownerKeys(w: { metadata: { namespace?: string; labels?: Record<string, string> } }, kind: string): string[] {
  return w.metadata.labels?.[OWNER_KIND_LABEL] === kind ? [`${w.metadata.namespace}/${w.metadata.labels[OWNER_NAME_LABEL]}`] : [];
}

/** What the copy gate reads of an instance WorkItem. */
function mountSeen(w: WorkItem): string {
  return `${w.metadata.generation}/${w.status?.observedGeneration}/${w.metadata.deletionTimestamp ?? ''}`;
}

/** The gluster Volumes an instance WorkItem mounts. */
function mountedGlusterVolumes(w: WorkItem): string[] {
  return (w.spec.instance?.volumes ?? []).filter((v) => v.gluster).map((v) => `${w.metadata.namespace}/${v.volumeName}`);
}

/** Instances of a namespace that wait for a node: a freed or new node may fit them now. */
function unplacedInstances(d: LoopDeps, namespace: string): string[] {
  return d.cache
    .inNamespace(d.cache.instances, namespace)
    .filter((i) => !i.status?.nodeName)
    .map(nsKey);
}

/** Instances that may fit now that a WorkItem on `nodeName` has gone: unplaced ones, and those on the node whose resize was refused. */
function waitingForRoom(d: LoopDeps, namespace: string, nodeName: string): string[] {
  const refusedResize = d.cache.instancesOnNode(namespace, nodeName).filter((i) => getCondition(i.status?.conditions, 'SpecAccepted')?.status === 'False');
  return [...unplacedInstances(d, namespace), ...refusedResize.map(nsKey)];
}

function attachedInstances(d: LoopDeps, namespace: string, volumeName: string): string[] {
  return d.cache
    .inNamespace(d.cache.instances, namespace)
    .filter((i) => i.spec.volumes?.some((a) => a.volumeName === volumeName))
    .map(nsKey);
}

// The kinds whose objects may own others or be owned: every kind the controller watches.
function gcSources(cache: ControllerCache): GcSource[] {
  const cairn = (kind: string, plural: string, namespaced = true) => ({ group: 'cairn.dev', version: 'v1alpha1', kind, plural, namespaced });
  const sources: [GcSource['kind'], unknown][] = [
    [cairn('Cluster', 'clusters', false), cache.clusters],
    [cairn('Node', 'nodes'), cache.nodes],
    [cairn('Instance', 'instances'), cache.instances],
    [cairn('Volume', 'volumes'), cache.volumes],
    [cairn('WorkItem', 'workitems'), cache.workItems],
    [{ group: 'coordination.k8s.io', version: 'v1', kind: 'Lease', plural: 'leases', namespaced: true }, cache.leases],
    [{ group: '', version: 'v1', kind: 'Secret', plural: 'secrets', namespaced: true }, cache.secrets],
    [{ group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true }, cache.configMaps],
  ];
  return sources.map(([kind, informer]) => ({ kind, informer: informer as GcSource['informer'] }));
}

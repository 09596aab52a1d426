/**
 * The four reconcile loops and what wakes each of them up. Every watch maps
 * an object to the keys it affects; the queue dedups them. Changes that
 * only feed aggregates (counts, allocation) are delayed so bursts coalesce
 * into one status write.
 */
import type { Logger } from 'winston';
import type { CairnClient } from '../api/client/cairn-client.js';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL } from '../api/names.js';
import type { ControllerCache, LeaseObject } from './cache.js';
import type { LeaseObservations } from './lease-observations.js';
import type { Placements } from './placements.js';
import type { StaleGuard } from './reconcilers/stale-guard.js';
import { reconcileCluster } from './reconcilers/cluster/reconciler.js';
import { reconcileInstance } from './reconcilers/instance/reconciler.js';
import { reconcileNode } from './reconcilers/node/reconciler.js';
import { reconcileVolume } from './reconcilers/volume/reconciler.js';
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
  /** Syncs the caches, then runs every loop until stop(). */
  start(): Promise<void>;
  stop(): void;
  /** Resolves when every loop has finished after stop(). */
  stopped: Promise<void>;
  readonly synced: boolean;
}

/** Cluster counts: at most about two status writes a second per cluster. */
const AGGREGATE_DELAY_MS = 500;
/** Node allocation: one write per node every few seconds at most, even while thousands of instances land. */
const NODE_ALLOCATION_DELAY_MS = 3000;
const nsKey = (o: { metadata: { namespace?: string; name?: string } }) => `${o.metadata.namespace}/${o.metadata.name}`;

/** Builds the Cluster, Node, Instance and Volume loops over one cache. */
export function buildControllers(d: LoopDeps): ReconcileLoops {
  const { cache } = d;
  const make = (name: string, workers: number, reconcile: (key: string) => Promise<{ requeueAfterMs?: number } | void>) =>
    new Controller({ name, reconcile, workers, log: d.log, metrics: d.metrics, clock: d.clock, resyncMs: d.resyncMs });
  const few = Math.max(1, Math.floor(d.workers / 2));
  const clusters = make('cluster', 1, (k) => reconcileCluster(d, k));
  const nodes = make('node', few, (k) => reconcileNode(d, k));
  const instances = make('instance', d.workers, (k) => reconcileInstance(d, k));
  const volumes = make('volume', few, (k) => reconcileVolume(d, k));

  observeLeases(d);
  clusters.watch(cache.clusters, (c) => [c.metadata.name!]);
  for (const inf of [cache.nodes, cache.instances, cache.volumes] as const) {
    clusters.watch(inf as typeof cache.nodes, (o) => [o.metadata.namespace!], AGGREGATE_DELAY_MS);
  }
  clusters.watch(cache.workItems, (w) => [w.metadata.namespace!], AGGREGATE_DELAY_MS);

  nodes.watch(cache.nodes, (n) => [nsKey(n)]);
  nodes.watch(cache.leases, (l) => leaseOwner(l, 'node-'));
  nodes.watch(cache.workItems, (w) => [`${w.metadata.namespace}/${w.spec.nodeName}`], NODE_ALLOCATION_DELAY_MS);

  instances.watch(cache.instances, (i) => [nsKey(i)]);
  // A WorkItem going away frees capacity that an unplaced instance may fit into.
  instances.watch(cache.workItems, (w) => [...ownerKeys(w, 'Instance'), ...(w.metadata.deletionTimestamp ? unplacedInstances(d, w.metadata.namespace!) : [])]);
  instances.watch(cache.leases, (l) => leaseOwner(l, 'instance-'));
  instances.watch(cache.nodes, (n) => [...cache.instancesOnNode(n.metadata.namespace!, n.metadata.name!).map(nsKey), ...unplacedInstances(d, n.metadata.namespace!)]);
  instances.watch(cache.volumes, (v) => attachedInstances(d, v.metadata.namespace!, v.metadata.name!));

  volumes.watch(cache.volumes, (v) => [nsKey(v)]);
  volumes.watch(cache.workItems, (w) => ownerKeys(w, 'Volume'));
  volumes.watch(cache.nodes, (n) => cache.inNamespace(cache.volumes, n.metadata.namespace!).map(nsKey));

  const all = [clusters, nodes, instances, volumes];
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
  d.cache.leases.addHandlers({ add: seen, update: (_old, l) => seen(l), delete: (l) => d.leases.forget(l.metadata.namespace!, l.metadata.name!) });
}

function leaseOwner(lease: LeaseObject, prefix: string): string[] {
  const name = lease.metadata.name ?? '';
  return name.startsWith(prefix) ? [`${lease.metadata.namespace}/${name.slice(prefix.length)}`] : [];
}

function ownerKeys(w: { metadata: { namespace?: string; labels?: Record<string, string> } }, kind: string): string[] {
  return w.metadata.labels?.[OWNER_KIND_LABEL] === kind ? [`${w.metadata.namespace}/${w.metadata.labels[OWNER_NAME_LABEL]}`] : [];
}

/** Instances of a namespace that wait for a node: a freed or new node may fit them now. */
function unplacedInstances(d: LoopDeps, namespace: string): string[] {
  return d.cache
    .inNamespace(d.cache.instances, namespace)
    .filter((i) => !i.status?.nodeName)
    .map(nsKey);
}

function attachedInstances(d: LoopDeps, namespace: string, volumeName: string): string[] {
  return d.cache
    .inNamespace(d.cache.instances, namespace)
    .filter((i) => i.spec.volumes?.some((a) => a.volumeName === volumeName))
    .map(nsKey);
}

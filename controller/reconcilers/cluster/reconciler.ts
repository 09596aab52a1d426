/** The Cluster reconciler's I/O: counts from the cache; finalizer, deletions and status through the API. */
import type { CairnClient } from '../../../api/client/cairn-client.js';
import { CLUSTER_FINALIZER } from '../../../api/names.js';
import type { ControllerCache } from '../../cache.js';
import type { Clock } from '../../../runtime/clock.js';
import type { Result } from '../../../runtime/controller.js';
import { sameJson } from '../stable-json.js';
import type { StaleGuard } from '../stale-guard.js';
import { planCluster, type ClusterAction } from './plan.js';
import type { Cluster } from '../../../api/cluster.js';
import type { RestClient } from '../../../api/client/rest-client.js';
import { clusterContents, deleteContent } from './contents.js';

/** What the Cluster reconciler reads and writes through. */
export interface ClusterReconcilerDeps {
  client: CairnClient;
  /** For the kinds a deleted Cluster's namespace may hold beside Cairn's own (contents.ts). */
  rest: RestClient;
  cache: ControllerCache;
  clock: Clock;
  stale: StaleGuard;
}

/** Reconciles the Cluster with this name (its namespace). */
export async function reconcileCluster(deps: ClusterReconcilerDeps, name: string): Promise<Result | void> {
  const cluster = deps.cache.clusters.get(name);
  if (!cluster) return deps.stale.forget(name);
  if (deps.stale.isStale(name, cluster.metadata.resourceVersion)) return;
  const { cache } = deps;
  const deleting = !!cluster.metadata.deletionTimestamp;
  const observed = {
    cluster,
    nodes: cache.inNamespace(cache.nodes, name),
    instances: cache.inNamespace(cache.instances, name),
    volumes: cache.inNamespace(cache.volumes, name),
    workItems: cache.inNamespace(cache.workItems, name),
    leases: deleting ? cache.inNamespace(cache.leases, name).map((l) => l.metadata.name!) : [],
    now: deps.clock.now(),
  };
  // Listed through the API, and only once nothing of the cluster's own is left: deletion is rare, the kinds many.
  const emptied = deleting && [observed.nodes, observed.instances, observed.volumes, observed.workItems].every((l) => l.length === 0);
  const plan = planCluster({ ...observed, ...(emptied ? { contents: await clusterContents(deps.rest, name) } : {}) });
  let latest = cluster;
  for (const a of plan.actions) {
    const before = latest.metadata.resourceVersion;
    latest = await apply(deps.client, deps.rest, latest, a);
    if (a.type === 'addFinalizer' || a.type === 'removeFinalizer') deps.stale.replaced(name, before);
  }
  if (plan.actions.some((a) => a.type === 'removeFinalizer')) return;
  if (!sameJson(latest.status ?? {}, plan.status)) {
    await deps.client.replaceStatus('Cluster', { ...latest, status: plan.status });
    deps.stale.replaced(name, latest.metadata.resourceVersion);
  }
  return cluster.metadata.deletionTimestamp ? { requeueAfterMs: 2000 } : undefined;
}

async function apply(client: CairnClient, rest: RestClient, cluster: Cluster, a: ClusterAction): Promise<Cluster> {
  const name = cluster.metadata.name!;
  if (a.type === 'deleteContent') {
    await deleteContent(rest, a.content);
    return cluster;
  }
  if (a.type === 'delete') {
    const kind = a.kind;
    if (kind === 'Lease') await client.deleteLease(name, a.name);
    else await client.delete(kind, name, a.name);
    return cluster;
  }
  const current = cluster.metadata.finalizers ?? [];
  const finalizers = a.type === 'addFinalizer' ? [...current, CLUSTER_FINALIZER] : current.filter((f) => f !== CLUSTER_FINALIZER);
  return client.patch('Cluster', undefined, name, { metadata: { finalizers, resourceVersion: cluster.metadata.resourceVersion } });
}

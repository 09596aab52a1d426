/**
 * Cairn's namespaces are its Clusters: namespace `x` exists while Cluster
 * `x` does (and `default` and `cairn-system` always). This module answers
 * "may I create in namespace x" and serves the read-only v1 Namespace view.
 */
import { ApiError } from '../errors.js';
import type { ResourceDefinition } from '../resources.js';
import type { KubeObject } from '../storage/codec.js';
import type { EtcdStore } from '../storage/etcd-store.js';
import { objectKey } from '../storage/keys.js';
import type { WatchCache } from '../storage/watch-cache.js';

/** The label kube puts on every namespace, naming it. */
export const NAME_LABEL = 'kubernetes.io/metadata.name';

/** Namespaces that exist without a Cluster. */
export const BUILTIN_NAMESPACES = ['cairn-system', 'default'];

/** The namespace view over Clusters. */
export class Namespaces {
  constructor(
    private readonly etcd: EtcdStore,
    private readonly cache: WatchCache,
    private readonly clusterDef: ResourceDefinition,
    private readonly startedAt: string,
  ) {}

  /** Throws 404 when `ns` does not exist, 403 when it is being deleted. */
  async checkWritable(ns: string): Promise<void> {
    if (BUILTIN_NAMESPACES.includes(ns)) return;
    const key = objectKey(this.clusterDef, undefined, ns);
    // The cache may lag a Cluster created a moment ago, so a miss is checked in etcd.
    const cluster = this.cache.forResource(this.clusterDef).objects.get(key) ?? (await this.etcd.get(key))?.obj;
    if (!cluster) {
      throw new ApiError(404, 'NotFound', `namespaces "${ns}" not found: create the Cluster "${ns}" first (kind: Cluster, apiVersion: cairn.dev/v1alpha1)`, {
        name: ns,
        kind: 'namespaces',
      });
    }
    if (cluster.metadata.deletionTimestamp) {
      // The cause is how controllers (apierrors.HasStatusCause) tell this from an RBAC refusal, and stay quiet.
      throw new ApiError(403, 'Forbidden', `unable to create new content in namespace ${ns} because it is being terminated`, {
        name: ns,
        kind: 'namespaces',
        causes: [{ reason: 'NamespaceTerminating', message: `namespace ${ns} is being terminated`, field: 'metadata.namespace' }],
      });
    }
  }

  /** Every namespace as a v1 Namespace, sorted by name. */
  list(): KubeObject[] {
    const clusters = [...this.cache.forResource(this.clusterDef).objects.values()];
    const builtins = BUILTIN_NAMESPACES.map((name) => this.view(name, { uid: `builtin-${name}`, creationTimestamp: this.startedAt, resourceVersion: '1' }));
    return [...builtins, ...clusters.map((c) => this.viewOf(c))].sort((a, b) =>
      a.metadata.name!.localeCompare(b.metadata.name!),
    );
  }

  /** The Namespace a Cluster stands for. */
  viewOf(cluster: KubeObject): KubeObject {
    return this.view(cluster.metadata.name!, cluster.metadata, !!cluster.metadata.deletionTimestamp);
  }

  private view(name: string, from: KubeObject['metadata'], terminating = false): KubeObject {
    return {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: {
        name,
        uid: from.uid,
        resourceVersion: from.resourceVersion,
        creationTimestamp: from.creationTimestamp,
        labels: { ...from.labels, [NAME_LABEL]: name },
        ...(from.annotations ? { annotations: from.annotations } : {}),
        ...(terminating ? { deletionTimestamp: from.deletionTimestamp } : {}),
      },
      spec: { finalizers: ['kubernetes'] },
      status: { phase: terminating ? 'Terminating' : 'Active' },
    };
  }
}

/**
 * Typed reads and writes of Cairn's kinds through client-node's
 * CustomObjectsApi, so the same calls work against Cairn's apiserver and a
 * kube-apiserver with crds/ installed. Every write carries the
 * resourceVersion the caller read (optimistic concurrency); failures come
 * back as ApiStatusError.
 */
import { CoordinationV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from '@kubernetes/client-node';
import type { KindMap } from '../kinds.js';
import { GROUP, NAMESPACED, PLURALS, VERSION, type Kind, type ObjectList } from '../types.js';
import { isConflict, isNotFound, toApiError } from './errors.js';

/** Selectors and paging of a list call. */
export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

async function wrap<T>(call: Promise<unknown>): Promise<T> {
  try {
    return (await call) as T;
  } catch (err) {
    throw toApiError(err);
  }
}

/** CRUD of Cairn objects by kind. */
export class CairnClient {
  private readonly api: CustomObjectsApi;
  private readonly leases: CoordinationV1Api;

  constructor(
    readonly kubeConfig: KubeConfig,
    /** Written to managedFields and audit records. */
    readonly fieldManager = 'cairn',
  ) {
    this.api = kubeConfig.makeApiClient(CustomObjectsApi);
    this.leases = kubeConfig.makeApiClient(CoordinationV1Api);
  }

  /** One page of objects of a kind, across namespaces unless opts.namespace. */
  list<K extends Kind>(kind: K, opts: ListOptions = {}): Promise<ObjectList<KindMap[K]>> {
    const common = { group: GROUP, version: VERSION, plural: PLURALS[kind], ...pageParams(opts) };
    if (opts.namespace && NAMESPACED[kind]) return wrap(this.api.listNamespacedCustomObject({ ...common, namespace: opts.namespace }));
    return wrap(this.api.listClusterCustomObject(common));
  }

  /** Every object of a kind, following continue tokens. */
  async listAll<K extends Kind>(kind: K, opts: ListOptions = {}): Promise<ObjectList<KindMap[K]>> {
    const first = await this.list(kind, { limit: 500, ...opts });
    const items = [...first.items];
    let token = first.metadata.continue;
    while (token) {
      const page = await this.list(kind, { limit: 500, ...opts, continue: token });
      items.push(...page.items);
      token = page.metadata.continue;
    }
    return { ...first, metadata: { resourceVersion: first.metadata.resourceVersion }, items };
  }

  /** The object, or undefined when it does not exist. */
  async get<K extends Kind>(kind: K, namespace: string | undefined, name: string): Promise<KindMap[K] | undefined> {
    try {
      return await wrap(this.byName(kind, namespace, name, (p) => (p.namespace ? this.api.getNamespacedCustomObject(p) : this.api.getClusterCustomObject(p))));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Creates an object (409 when its name is taken). */
  create<K extends Kind>(kind: K, obj: KindMap[K]): Promise<KindMap[K]> {
    const ns = obj.metadata.namespace;
    const body = { apiVersion: `${GROUP}/${VERSION}`, kind, ...obj };
    const common = { group: GROUP, version: VERSION, plural: PLURALS[kind], body, fieldManager: this.fieldManager };
    if (NAMESPACED[kind]) return wrap(this.api.createNamespacedCustomObject({ ...common, namespace: requireNs(kind, ns) }));
    return wrap(this.api.createClusterCustomObject(common));
  }

  /** Replaces spec and metadata (PUT); 409 when obj's resourceVersion is stale. */
  replace<K extends Kind>(kind: K, obj: KindMap[K]): Promise<KindMap[K]> {
    const body = { apiVersion: `${GROUP}/${VERSION}`, kind, ...obj };
    return wrap(
      this.byName(kind, obj.metadata.namespace, obj.metadata.name!, (p) =>
        p.namespace
          ? this.api.replaceNamespacedCustomObject({ ...p, body, fieldManager: this.fieldManager })
          : this.api.replaceClusterCustomObject({ ...p, body, fieldManager: this.fieldManager }),
      ),
    );
  }

  /** Replaces status through the status subresource; 409 when obj's resourceVersion is stale. */
  replaceStatus<K extends Kind>(kind: K, obj: KindMap[K]): Promise<KindMap[K]> {
    const body = { apiVersion: `${GROUP}/${VERSION}`, kind, ...obj };
    return wrap(
      this.byName(kind, obj.metadata.namespace, obj.metadata.name!, (p) =>
        p.namespace
          ? this.api.replaceNamespacedCustomObjectStatus({ ...p, body, fieldManager: this.fieldManager })
          : this.api.replaceClusterCustomObjectStatus({ ...p, body, fieldManager: this.fieldManager }),
      ),
    );
  }

  /** JSON merge patch of the object (include metadata.resourceVersion in the patch to make it conditional). */
  patch<K extends Kind>(kind: K, namespace: string | undefined, name: string, patch: object): Promise<KindMap[K]> {
    return wrap(
      this.byName(kind, namespace, name, (p) =>
        p.namespace
          ? this.api.patchNamespacedCustomObject({ ...p, body: patch, fieldManager: this.fieldManager }, MERGE_PATCH)
          : this.api.patchClusterCustomObject({ ...p, body: patch, fieldManager: this.fieldManager }, MERGE_PATCH),
      ),
    );
  }

  /** Deletes an object; resolves false when it was already gone. */
  async delete(kind: Kind, namespace: string | undefined, name: string, opts: { uid?: string; resourceVersion?: string } = {}): Promise<boolean> {
    const preconditions = opts.uid || opts.resourceVersion ? { uid: opts.uid, resourceVersion: opts.resourceVersion } : undefined;
    const body = preconditions ? { preconditions } : undefined;
    try {
      await wrap(
        this.byName(kind, namespace, name, (p) =>
          p.namespace ? this.api.deleteNamespacedCustomObject({ ...p, body }) : this.api.deleteClusterCustomObject({ ...p, body }),
        ),
      );
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }

  /** Deletes a coordination.k8s.io Lease, only at that resourceVersion when given; resolves false when it was gone or had changed. */
  async deleteLease(namespace: string, name: string, resourceVersion?: string): Promise<boolean> {
    try {
      await wrap(this.leases.deleteNamespacedLease({ namespace, name, body: resourceVersion ? { preconditions: { resourceVersion } } : undefined }));
      return true;
    } catch (err) {
      if (isNotFound(err) || (resourceVersion && isConflict(err))) return false;
      throw err;
    }
  }

  /**
   * Revokes a node's lease (docs/fencing.md): clears its holder, only at `resourceVersion` (the version
   * watched expire), or creates it holderless when it is missing. Resolves false when it changed
   * meanwhile or was created by someone else: its holder renewed after all.
   */
  async revokeLease(namespace: string, name: string, current: { resourceVersion: string; leaseDurationSeconds?: number | null } | undefined): Promise<boolean> {
    try {
      if (!current) {
        await wrap(this.leases.createNamespacedLease({ namespace, body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec: {} } }));
        return true;
      }
      const spec = current.leaseDurationSeconds ? { leaseDurationSeconds: current.leaseDurationSeconds } : {};
      await wrap(this.leases.replaceNamespacedLease({ namespace, name, body: { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace, resourceVersion: current.resourceVersion }, spec } }));
      return true;
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return false;
      throw err;
    }
  }

  /** URL path of a kind's collection, for watches. */
  collectionPath(kind: Kind, namespace?: string): string {
    const base = `/apis/${GROUP}/${VERSION}`;
    return namespace && NAMESPACED[kind] ? `${base}/namespaces/${namespace}/${PLURALS[kind]}` : `${base}/${PLURALS[kind]}`;
  }

  private byName<R>(kind: Kind, namespace: string | undefined, name: string, call: (p: NameParams) => Promise<R>): Promise<R> {
    const ns = NAMESPACED[kind] ? requireNs(kind, namespace) : '';
    return call({ group: GROUP, version: VERSION, plural: PLURALS[kind], name, namespace: ns });
  }
}

interface NameParams {
  group: string;
  version: string;
  plural: string;
  name: string;
  /** Empty for cluster-scoped kinds. */
  namespace: string;
}

function requireNs(kind: Kind, ns: string | undefined): string {
  if (!ns) throw new Error(`${kind} is namespaced: metadata.namespace (the Cluster's name) is required`);
  return ns;
}

function pageParams(opts: ListOptions) {
  return {
    labelSelector: opts.labelSelector,
    fieldSelector: opts.fieldSelector,
    limit: opts.limit,
    _continue: opts.continue,
    resourceVersion: opts.resourceVersion,
  };
}

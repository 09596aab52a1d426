/**
 * Typed reads and writes of Cairn's kinds by their REST paths (RestClient:
 * a client-node KubeConfig's connection and credentials), so the same calls
 * work against Cairn's apiserver and a kube-apiserver with crds/ installed;
 * Leases through client-node's CoordinationV1Api. Every write carries the
 * resourceVersion the caller read (optimistic concurrency); failures come
 * back as ApiStatusError.
 */
import { CoordinationV1Api, type KubeConfig } from '@kubernetes/client-node';
import type { KindMap } from '../kinds.js';
import { GROUP, NAMESPACED, PLURALS, VERSION, type Kind, type ObjectList } from '../types.js';
import { isConflict, isNotFound, toApiError } from './errors.js';
import { RestClient } from './rest-client.js';

/** Selectors and paging of a list call. */
export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
}

const MERGE_PATCH = { 'Content-Type': 'application/merge-patch+json' };

async function wrap<T>(call: Promise<unknown>): Promise<T> {
  try {
    return (await call) as T;
  } catch (err) {
    throw toApiError(err);
  }
}

/** CRUD of Cairn objects by kind. */
export class CairnClient {
  private readonly rest: RestClient;
  private readonly leases: CoordinationV1Api;

  constructor(
    readonly kubeConfig: KubeConfig,
    /** Written to managedFields and audit records. */
    readonly fieldManager = 'cairn',
  ) {
    this.rest = RestClient.forConfig(kubeConfig);
    this.leases = kubeConfig.makeApiClient(CoordinationV1Api);
  }

  /** One page of objects of a kind, across namespaces unless opts.namespace. */
  list<K extends Kind>(kind: K, opts: ListOptions = {}): Promise<ObjectList<KindMap[K]>> {
    const { namespace, ...query } = opts;
    return this.rest.request('GET', this.collectionPath(kind, namespace), { query });
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
      return await this.rest.request<KindMap[K]>('GET', this.objectPath(kind, namespace, name));
    } catch (err) {
      if (isNotFound(err)) return undefined;
      throw err;
    }
  }

  /** Creates an object (409 when its name is taken). */
  create<K extends Kind>(kind: K, obj: KindMap[K]): Promise<KindMap[K]> {
    const ns = NAMESPACED[kind] ? requireNs(kind, obj.metadata.namespace) : undefined;
    return this.rest.request('POST', this.collectionPath(kind, ns), { query: { fieldManager: this.fieldManager }, body: withType(kind, obj) });
  }

  /** Replaces spec and metadata (PUT); 409 when obj's resourceVersion is stale. */
  replace<K extends Kind>(kind: K, obj: KindMap[K]): Promise<KindMap[K]> {
    return this.rest.request('PUT', this.objectPath(kind, obj.metadata.namespace, obj.metadata.name!), { query: { fieldManager: this.fieldManager }, body: withType(kind, obj) });
  }

  /** Replaces status through the status subresource; 409 when obj's resourceVersion is stale. */
  replaceStatus<K extends Kind>(kind: K, obj: KindMap[K]): Promise<KindMap[K]> {
    const path = `${this.objectPath(kind, obj.metadata.namespace, obj.metadata.name!)}/status`;
    return this.rest.request('PUT', path, { query: { fieldManager: this.fieldManager }, body: withType(kind, obj) });
  }

  /** JSON merge patch of the object (include metadata.resourceVersion in the patch to make it conditional). */
  patch<K extends Kind>(kind: K, namespace: string | undefined, name: string, patch: object): Promise<KindMap[K]> {
    return this.rest.request('PATCH', this.objectPath(kind, namespace, name), { query: { fieldManager: this.fieldManager }, headers: MERGE_PATCH, body: patch });
  }

  /** Deletes an object; resolves false when it was already gone. */
  async delete(kind: Kind, namespace: string | undefined, name: string, opts: { uid?: string; resourceVersion?: string } = {}): Promise<boolean> {
    const preconditions = opts.uid || opts.resourceVersion ? { uid: opts.uid, resourceVersion: opts.resourceVersion } : undefined;
    try {
      await this.rest.request('DELETE', this.objectPath(kind, namespace, name), preconditions ? { body: { preconditions } } : {});
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

  private objectPath(kind: Kind, namespace: string | undefined, name: string): string {
    return `${this.collectionPath(kind, NAMESPACED[kind] ? requireNs(kind, namespace) : undefined)}/${encodeURIComponent(name)}`;
  }
}

/** The object as sent: apiVersion and kind first, as client-node's callers set them. */
function withType<K extends Kind>(kind: K, obj: KindMap[K]): KindMap[K] {
  return { apiVersion: `${GROUP}/${VERSION}`, kind, ...obj };
}

function requireNs(kind: Kind, ns: string | undefined): string {
  if (!ns) throw new Error(`${kind} is namespaced: metadata.namespace (the Cluster's name) is required`);
  return ns;
}

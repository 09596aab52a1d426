/**
 * How objects are kept in etcd: canonical JSON without `metadata.resourceVersion`,
 * which is the key's mod_revision and is filled in on every read (so stored
 * bytes never carry a stale version and identical writes stay identical).
 */

/** A Kubernetes-style object as stored and served. */
export type KubeObject = Record<string, any> & { metadata: ObjectMeta };

/** The metadata fields the apiserver reads or sets. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  finalizers?: string[];
  ownerReferences?: Record<string, unknown>[];
  managedFields?: Record<string, unknown>[];
  [field: string]: unknown;
}

/**
 * The bytes written to etcd for `obj`: keys sorted (as Go's encoding of a
 * map sorts them), so equal objects always encode to equal bytes and a
 * no-op write is recognised whatever order a client sent the fields in.
 */
export function encode(obj: KubeObject): string {
  const { resourceVersion: _omit, ...metadata } = obj.metadata;
  return JSON.stringify({ ...obj, metadata }, sortedKeys);
}

function sortedKeys(_key: string, value: unknown): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(value).sort()) out[k] = (value as Record<string, unknown>)[k];
  return out;
}

/** The object stored as `value`, at mod_revision `rev`. */
export function decode(value: Buffer | string, rev: string): KubeObject {
  const obj = JSON.parse(value.toString()) as KubeObject;
  obj.metadata.resourceVersion = rev;
  return obj;
}

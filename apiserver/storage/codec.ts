/**
 * How objects are kept in etcd: JSON without `metadata.resourceVersion`,
 * which is the key's mod_revision and is filled in on every read (so stored
 * bytes never carry a stale version and identical writes stay identical).
 */
import { isDeepStrictEqual } from 'node:util';

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

/** The bytes written to etcd for `obj`. */
export function encode(obj: KubeObject): string {
  const { resourceVersion: _omit, ...metadata } = obj.metadata;
  return JSON.stringify({ ...obj, metadata });
}

/**
 * Whether two objects would store the same content (resourceVersion aside),
 * whatever order their fields are in: a write of an equal object is a no-op.
 */
export function sameContent(a: KubeObject, b: KubeObject): boolean {
  const { resourceVersion: _a, ...ma } = a.metadata;
  const { resourceVersion: _b, ...mb } = b.metadata;
  return isDeepStrictEqual({ ...a, metadata: ma }, { ...b, metadata: mb });
}

/** The object stored as `value`, at mod_revision `rev`. */
export function decode(value: Buffer | string, rev: string): KubeObject {
  const obj = JSON.parse(value.toString()) as KubeObject;
  if (obj === null || typeof obj !== 'object' || obj.metadata === null || typeof obj.metadata !== 'object') {
    throw new Error('stored value is not an object with metadata');
  }
  obj.metadata.resourceVersion = rev;
  return obj;
}

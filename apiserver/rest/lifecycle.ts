/**
 * What the apiserver itself sets or preserves on writes (kube's REST
 * strategies): uid, creationTimestamp, generation, the split between the
 * main endpoint (spec) and `/status`, and the rules of deletion with
 * finalizers. Pure functions: no I/O, time and ids passed in.
 */
import { isDeepStrictEqual } from 'node:util';
import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../../api/names.js';
import { conflict, invalid } from '../errors.js';
import type { ResourceDefinition } from '../resources.js';
import type { KubeObject } from '../storage/codec.js';

/** Which endpoint a write came through. */
export type Subresource = 'main' | 'status';

// Fields only the server sets; a client's values are ignored on create and kept from the old object on update.
const SYSTEM_FIELDS = ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'] as const;

/** How a DELETE treats the object's dependents (kube's propagationPolicy). */
export type Propagation = 'Background' | 'Foreground' | 'Orphan';

/**
 * What a DELETE leaves of `obj`: the object itself when it may go now (no
 * finalizers), null when nothing changes (already being deleted), or the
 * object marked for deletion. Foreground and Orphan add kube's finalizer,
 * which the garbage collector removes once the dependents are gone or no
 * longer name this owner.
 */
export function afterDelete(obj: KubeObject, propagation: Propagation, now: string): KubeObject | null {
  const finalizers = obj.metadata.finalizers ?? [];
  const gc = propagation === 'Foreground' ? FOREGROUND_FINALIZER : propagation === 'Orphan' ? ORPHAN_FINALIZER : undefined;
  if (gc && !finalizers.includes(gc)) {
    const held = { ...obj, metadata: { ...obj.metadata, finalizers: [...finalizers, gc] } };
    return obj.metadata.deletionTimestamp ? held : markDeleting(held, now);
  }
  if (finalizers.length === 0) return obj;
  return obj.metadata.deletionTimestamp ? null : markDeleting(obj, now);
}

/** Fills in server-set metadata for a new object. */
export function prepareForCreate(def: ResourceDefinition, obj: KubeObject, now: string, uid: string): KubeObject {
  const metadata = withoutNulls(obj.metadata);
  for (const f of SYSTEM_FIELDS) delete metadata[f];
  delete metadata.resourceVersion;
  metadata.uid = uid;
  metadata.creationTimestamp = now;
  if (tracksGeneration(def)) metadata.generation = 1;
  const out: KubeObject = { ...obj, metadata };
  if (def.hasStatus) delete out.status;
  return out;
}

/**
 * A copy of `metadata` without its null fields: kube decodes `"labels": null` as no labels and stores none,
 * and readers here, label selectors among them, take a field as absent or a map.
 */
function withoutNulls(metadata: KubeObject['metadata']): KubeObject['metadata'] {
  const out = { ...metadata };
  for (const [key, value] of Object.entries(out)) if (value === null) delete out[key as keyof typeof out];
  return out;
}

/**
 * Merges a client's new object with the stored one: system fields are kept,
 * the main endpoint cannot change status and `/status` can change nothing
 * else, and generation moves when anything outside metadata and status does.
 */
export function prepareForUpdate(def: ResourceDefinition, old: KubeObject, next: KubeObject, sub: Subresource): KubeObject {
  const out: KubeObject = sub === 'status' ? { ...old, status: next.status } : { ...next };
  if (sub === 'status' && next.status === undefined) delete out.status;
  out.metadata = withoutNulls(sub === 'status' ? old.metadata : next.metadata);
  for (const f of SYSTEM_FIELDS) copyField(out.metadata, old.metadata, f);
  // A client that replaces the object without managedFields (kubectl edit) keeps the recorded ownership, as in kube.
  if (out.metadata.managedFields === undefined && old.metadata.managedFields !== undefined) out.metadata.managedFields = old.metadata.managedFields;
  out.metadata.name = old.metadata.name;
  if (def.namespaced) out.metadata.namespace = old.metadata.namespace;
  else delete out.metadata.namespace;
  if (def.hasStatus && sub === 'main') {
    if (old.status === undefined) delete out.status;
    else out.status = old.status;
  }
  checkFinalizerRules(old, out);
  if (tracksGeneration(def) && specChanged(old, out)) out.metadata.generation = (old.metadata.generation ?? 0) + 1;
  return out;
}

/** True when the object has been asked to go and nothing holds it any more. */
export function readyToDelete(obj: KubeObject): boolean {
  return !!obj.metadata.deletionTimestamp && (obj.metadata.finalizers ?? []).length === 0;
}

/** The object marked for deletion (finalizers still to run). */
export function markDeleting(obj: KubeObject, now: string): KubeObject {
  return { ...obj, metadata: { ...obj.metadata, deletionTimestamp: now, deletionGracePeriodSeconds: 0 } };
}

/**
 * Checks an update's resourceVersion and uid against the stored ones. A uid in the body is a precondition,
 * as kube takes it: a client that read an object deleted and made anew under its name must not write over
 * the new one (it was silently replaced by the stored uid).
 */
export function checkResourceVersion(def: ResourceDefinition, old: KubeObject, next: KubeObject, name: string): void {
  const rv = next.metadata.resourceVersion;
  if (rv !== undefined && rv !== '' && rv !== old.metadata.resourceVersion) {
    throw conflict(def.plural, def.group, name, 'the object has been modified; please apply your changes to the latest version and try again');
  }
  const uid = next.metadata.uid;
  if (uid && uid !== old.metadata.uid) throw conflict(def.plural, def.group, name, `Precondition failed: UID in precondition: ${uid}, UID in object meta: ${old.metadata.uid}`);
}

// Built-in kinds without a status subresource (Lease, Event) carry no generation, as in kube.
function tracksGeneration(def: ResourceDefinition): boolean {
  return def.hasStatus;
}

function specChanged(old: KubeObject, next: KubeObject): boolean {
  const strip = ({ metadata: _m, status: _s, ...rest }: KubeObject) => rest;
  return !isDeepStrictEqual(strip(old), strip(next));
}

function copyField(to: Record<string, unknown>, from: Record<string, unknown>, field: string): void {
  if (from[field] === undefined) delete to[field];
  else to[field] = from[field];
}

function checkFinalizerRules(old: KubeObject, next: KubeObject): void {
  if (!old.metadata.deletionTimestamp) return;
  const before = new Set(old.metadata.finalizers ?? []);
  const added = (next.metadata.finalizers ?? []).filter((f) => !before.has(f));
  if (added.length > 0) {
    throw invalid(old.kind, old.apiVersion.includes('/') ? old.apiVersion.split('/')[0]! : '', old.metadata.name ?? '', [
      { reason: 'FieldValueForbidden', field: 'metadata.finalizers', message: `Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers ${JSON.stringify(added)}` },
    ]);
  }
}

/**
 * Field ownership of the writes that are not server-side apply (create,
 * PUT, merge and JSON patches: `kubectl create`, `patch`, `edit`, `label`,
 * client-side `apply`), as kube records them: the writer's manager gets an
 * `Update` entry in `metadata.managedFields` holding every field the write
 * set or changed, and those fields leave every other manager's entry
 * (fields the schema defaults on a create belong to nobody). A
 * later server-side apply that sets one of them to another value then
 * conflicts with that manager (apply.ts), as in kube, and drift is visible
 * per field. A write that changes no field leaves managedFields as they
 * are, so a no-op write stays a no-op. Pure.
 */
import { isDeepStrictEqual } from 'node:util';
import type { KubeObject } from '../storage/codec.js';
import type { JSONSchemaProps } from '../resources.js';
import type { ManagedFieldsEntry } from './apply.js';
import { ListIndexes, ownedPaths, PathSet, pathsOf, toFieldsV1, valueAt, type Path } from './field-paths.js';

/** Who makes a write: the `fieldManager` query parameter, or else the User-Agent up to its first '/', as kube does. */
export function managerName(fieldManager: string | undefined, userAgent: string | undefined): string {
  if (fieldManager) return fieldManager;
  return (userAgent ?? '').split('/')[0]!.replace(/[^\x20-\x7e]/g, '').slice(0, 128);
}

/**
 * `next` with `manager`'s Update entry holding what it changed from `old`; for a create (no `old`),
 * what the request itself set (`requested`: its paths before schema defaults), so that fields the schema
 * filled in belong to nobody and a later apply may set them without a conflict.
 */
export function recordUpdate(old: KubeObject | undefined, next: KubeObject, manager: string, apiVersion: string, now: string, schema?: JSONSchemaProps, requested?: Path[]): KubeObject {
  const lists = new ListIndexes();
  const at = (obj: KubeObject, p: Path) => valueAt(obj, p, lists);
  const changed = old ? ownedPaths(next, schema).filter((p) => !isDeepStrictEqual(at(old, p), at(next, p))) : (requested ?? ownedPaths(next, schema)).filter((p) => at(next, p) !== undefined);
  const removed = old ? ownedPaths(old, schema).filter((p) => at(next, p) === undefined) : [];
  if (!manager || (changed.length === 0 && removed.length === 0)) return next;
  const touched = [...changed, ...removed];
  let touchedSet: PathSet | undefined; // built only when there are other paths to check against it
  const overlaps = (p: Path) => (touchedSet ??= new PathSet(touched)).overlaps(p);
  const entries = recordedEntries(next);
  const own = entries.find((e) => e.manager === manager && e.operation === 'Update');
  const others = entries
    .filter((e) => e !== own)
    .map((e) => ({ ...e, fieldsV1: toFieldsV1(pathsOf(e.fieldsV1).filter((p) => !overlaps(p))) }))
    .filter((e) => Object.keys(e.fieldsV1).length > 0);
  const kept = (own ? pathsOf(own.fieldsV1) : []).filter((p) => !overlaps(p));
  const mine: ManagedFieldsEntry = { manager, operation: 'Update', apiVersion, time: now, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1([...kept, ...changed]) };
  // An entry that owns nothing (the write only removed fields) is not kept, as in kube.
  const managedFields = Object.keys(mine.fieldsV1).length > 0 ? [...others, mine] : others;
  return { ...next, metadata: { ...next.metadata, managedFields: managedFields as unknown as Record<string, unknown>[] } };
}

function recordedEntries(obj: KubeObject): ManagedFieldsEntry[] {
  const recorded = obj.metadata.managedFields;
  if (!Array.isArray(recorded)) return [];
  return (recorded as unknown as ManagedFieldsEntry[]).filter((e) => e?.fieldsType === 'FieldsV1' && e.fieldsV1 !== null && typeof e.fieldsV1 === 'object');
}

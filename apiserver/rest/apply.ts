/**
 * Server-side apply, simplified from kube's structured-merge-diff: each
 * applier's set of fields is recorded in `metadata.managedFields`
 * (FieldsV1); applying merges the configuration into the live object, drops
 * fields the same manager applied before but no longer sends (unless another
 * manager also owns them), and refuses with 409 to change a field another
 * manager owns with a different value unless `force` is set: another
 * applier, or the writer of an Update (managed-fields.ts records those).
 * Associative lists (`x-kubernetes-list-map-keys`) are merged and owned item
 * by item (field-paths.ts); other lists are one value.
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiError } from '../errors.js';
import type { JSONSchemaProps } from '../resources.js';
import type { KubeObject } from '../storage/codec.js';
import { ListIndexes, mergeApplied, ownedPaths, PathSet, pathsOf, removePaths, toFieldsV1, valueAt, type Path } from './field-paths.js';

/** One `metadata.managedFields` entry. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
}

/** The live object after `manager` applies `config` (live may be an empty shell for a create); `schema`: the kind's. */
export function serverSideApply(live: KubeObject, config: KubeObject, manager: string, force: boolean, now: string, schema?: JSONSchemaProps): KubeObject {
  const owned = ownedPaths(config, schema);
  const recorded = Array.isArray(live.metadata.managedFields) ? (live.metadata.managedFields as unknown as ManagedFieldsEntry[]) : [];
  const entries = recorded.filter((e) => e?.fieldsType === 'FieldsV1' && e.fieldsV1 !== null && typeof e.fieldsV1 === 'object');
  const others = entries.filter((e) => !(e.manager === manager && e.operation === 'Apply'));
  const conflicts = findConflicts(live, config, owned, others);
  if (conflicts.length > 0 && !force) throw conflictError(conflicts);
  const previous = entries.find((e) => e.manager === manager && e.operation === 'Apply');
  let out = structuredClone(live) as KubeObject;
  const stillOwned = others.flatMap((e) => pathsOf(e.fieldsV1));
  const keep = new PathSet([...owned, ...stillOwned]);
  removePaths(out, previous ? pathsOf(previous.fieldsV1) : [], keep);
  out = mergeApplied(out, config, schema) as KubeObject;
  const lost = new Set(force ? conflicts.map((c) => c.path.join('.')) : []);
  const kept = others
    .map((e) => ({ ...e, fieldsV1: toFieldsV1(pathsOf(e.fieldsV1).filter((p) => !lost.has(p.join('.')))) }))
    .filter((e) => Object.keys(e.fieldsV1).length > 0);
  const mine: ManagedFieldsEntry = { manager, operation: 'Apply', apiVersion: String(config.apiVersion), time: now, fieldsType: 'FieldsV1', fieldsV1: toFieldsV1(owned) };
  // Re-applying the same configuration changes nothing, not even the entry's time: no write, no
  // new resourceVersion, no watch event (what a GitOps loop applying every few minutes relies on).
  if (previous && conflicts.length === 0 && sameOwnership(previous, mine) && sameContent(out, live)) return live;
  out.metadata.managedFields = [...kept, mine] as unknown as Record<string, unknown>[];
  return out;
}

function sameOwnership(a: ManagedFieldsEntry, b: ManagedFieldsEntry): boolean {
  return a.apiVersion === b.apiVersion && isDeepStrictEqual(a.fieldsV1, b.fieldsV1);
}

function sameContent(a: KubeObject, b: KubeObject): boolean {
  const withoutFields = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, managedFields: undefined } });
  return isDeepStrictEqual(withoutFields(a), withoutFields(b));
}

interface Conflict {
  manager: string;
  path: Path;
}

function findConflicts(live: KubeObject, config: KubeObject, owned: Path[], others: ManagedFieldsEntry[]): Conflict[] {
  const out: Conflict[] = [];
  const mine = new PathSet(owned);
  const lists = new ListIndexes();
  for (const e of others) {
    for (const p of pathsOf(e.fieldsV1)) {
      if (mine.overlaps(p) && !isDeepStrictEqual(valueAt(live, p, lists), valueAt(config, p, lists))) out.push({ manager: e.manager, path: p });
    }
  }
  return out;
}

function conflictError(conflicts: Conflict[]): ApiError {
  const lines = conflicts.map((c) => `conflict with "${c.manager}": .${c.path.join('.')}`);
  return new ApiError(409, 'Conflict', `Apply failed with ${conflicts.length} conflict${conflicts.length > 1 ? 's' : ''}: ${lines.join('\n')}`, {
    causes: conflicts.map((c) => ({ reason: 'FieldManagerConflict', message: `conflict with "${c.manager}"`, field: `.${c.path.join('.')}` })),
  });
}

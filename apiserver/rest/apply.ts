/**
 * Server-side apply, simplified from kube's structured-merge-diff: each
 * applier's set of fields is recorded in `metadata.managedFields`
 * (FieldsV1); applying merges the configuration into the live object, drops
 * fields the same manager applied before but no longer sends (unless another
 * manager also owns them), and refuses with 409 to change a field another
 * manager owns with a different value unless `force` is set: another
 * applier, or the writer of an Update (managed-fields.ts records those).
 * Lists are treated as atomic values.
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiError } from '../errors.js';
import type { KubeObject } from '../storage/codec.js';
import { mergePatch } from './patch.js';

/** A field's path from the object's root. */
export type Path = string[];
type Json = unknown;

/** One `metadata.managedFields` entry. */
export interface ManagedFieldsEntry {
  manager: string;
  operation: 'Apply' | 'Update';
  apiVersion: string;
  time: string;
  fieldsType: 'FieldsV1';
  fieldsV1: Record<string, unknown>;
}

const UNOWNED_META = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generateName']);

/** The live object after `manager` applies `config` (live may be an empty shell for a create). */
export function serverSideApply(live: KubeObject, config: KubeObject, manager: string, force: boolean, now: string): KubeObject {
  const owned = ownedPaths(config);
  const recorded = Array.isArray(live.metadata.managedFields) ? (live.metadata.managedFields as unknown as ManagedFieldsEntry[]) : [];
  const entries = recorded.filter((e) => e?.fieldsType === 'FieldsV1' && e.fieldsV1 !== null && typeof e.fieldsV1 === 'object');
  const others = entries.filter((e) => !(e.manager === manager && e.operation === 'Apply'));
  const conflicts = findConflicts(live, config, owned, others);
  if (conflicts.length > 0 && !force) throw conflictError(conflicts);
  const previous = entries.find((e) => e.manager === manager && e.operation === 'Apply');
  let out = structuredClone(live) as KubeObject;
  const stillOwned = others.flatMap((e) => pathsOf(e.fieldsV1));
  const keep = [...owned, ...stillOwned];
  for (const p of previous ? pathsOf(previous.fieldsV1) : []) {
    if (!keep.some((q) => isPrefix(p, q))) removePath(out, p, keep);
  }
  out = mergePatch(out, config) as KubeObject;
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

/** The leaf paths a configuration sets (lists count as one leaf). */
export function ownedPaths(config: KubeObject): Path[] {
  const out: Path[] = [];
  const walk = (v: Json, path: Path) => {
    if (v === null || typeof v !== 'object' || Array.isArray(v)) out.push(path);
    // An empty object sets nothing, so it owns nothing (and conflicts with no one).
    else for (const [k, child] of Object.entries(v)) walk(child, [...path, k]);
  };
  for (const [k, v] of Object.entries(config)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'status') continue;
    if (k !== 'metadata') walk(v, [k]);
    else for (const [mk, mv] of Object.entries(v as object)) if (!UNOWNED_META.has(mk)) walk(mv, ['metadata', mk]);
  }
  return out;
}

/** FieldsV1 (`{"f:spec":{"f:cpus":{}}}`) from leaf paths. */
export function toFieldsV1(paths: Path[]): Record<string, unknown> {
  const root: Record<string, Record<string, unknown>> = {};
  for (const p of paths) {
    let node: Record<string, unknown> = root;
    for (const seg of p) node = (node[`f:${seg}`] ??= {}) as Record<string, unknown>;
  }
  return root;
}

/** Leaf paths from FieldsV1. */
export function pathsOf(fields: Record<string, unknown>, prefix: Path = []): Path[] {
  const keys = Object.keys(fields).filter((k) => k.startsWith('f:'));
  if (keys.length === 0) return prefix.length > 0 ? [prefix] : [];
  return keys.flatMap((k) => pathsOf((fields[k] ?? {}) as Record<string, unknown>, [...prefix, k.slice(2)]));
}

interface Conflict {
  manager: string;
  path: Path;
}

function findConflicts(live: KubeObject, config: KubeObject, owned: Path[], others: ManagedFieldsEntry[]): Conflict[] {
  const out: Conflict[] = [];
  for (const e of others) {
    for (const p of pathsOf(e.fieldsV1)) {
      const mine = owned.find((q) => isPrefix(q, p) || isPrefix(p, q));
      if (mine && !isDeepStrictEqual(valueAt(live, p), valueAt(config, p))) out.push({ manager: e.manager, path: p });
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

/** Whether `prefix` is `p` or a parent of it. */
export function isPrefix(prefix: Path, p: Path): boolean {
  return prefix.length <= p.length && prefix.every((s, i) => p[i] === s);
}

/** The value at `p`, undefined when absent. */
export function valueAt(obj: Json, p: Path): Json {
  let cur = obj;
  for (const seg of p) cur = cur !== null && typeof cur === 'object' ? (cur as Record<string, Json>)[seg] : undefined;
  return cur;
}

// Removes the field at `p`, then every parent it leaves empty that no kept path still reaches.
function removePath(obj: Json, p: Path, keep: Path[]): void {
  for (let end = p.length; end > 0; end--) {
    const parent = valueAt(obj, p.slice(0, end - 1));
    if (parent === null || typeof parent !== 'object' || Array.isArray(parent)) return;
    const key = p[end - 1]!;
    const child = (parent as Record<string, Json>)[key];
    const emptied = end === p.length || (child !== null && typeof child === 'object' && Object.keys(child).length === 0);
    if (!emptied || keep.some((q) => isPrefix(p.slice(0, end), q))) return;
    delete (parent as Record<string, Json>)[key];
  }
}

/**
 * Field paths as managedFields name them (structured-merge-diff's FieldsV1):
 * `f:<field>` for an object's field, and `k:{"name":"data"}` for the item
 * of an associative list (`x-kubernetes-list-type: map` with
 * `x-kubernetes-list-map-keys` in the kind's schema), which is owned, merged
 * and removed item by item. Other lists are one value. Pure.
 */
import type { JSONSchemaProps } from '../resources.js';
import type { KubeObject } from '../storage/codec.js';

/** A field's path from the object's root: field names, and `k:{...}` for the item of an associative list. */
export type Path = string[];
type Json = unknown;
type Schema = JSONSchemaProps | undefined;

const ITEM = 'k:';
const UNOWNED_META = new Set(['name', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp', 'managedFields', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generateName']);

const isObject = (v: Json): v is Record<string, Json> => v !== null && typeof v === 'object' && !Array.isArray(v);

/** The schema of field `seg` (or of the items of an associative list) under `schema`. */
function childSchema(schema: Schema, seg: string): Schema {
  if (!schema) return undefined;
  if (seg.startsWith(ITEM)) return schema.items;
  if (schema.properties?.[seg]) return schema.properties[seg];
  return typeof schema.additionalProperties === 'object' ? schema.additionalProperties : undefined;
}

/** The key fields of an associative list, or undefined for a list that is one value. */
function mapKeys(schema: Schema): string[] | undefined {
  const keys = schema?.['x-kubernetes-list-map-keys'];
  return schema?.['x-kubernetes-list-type'] === 'map' && Array.isArray(keys) && keys.length > 0 ? keys : undefined;
}

/** `k:{"name":"data"}`: an item of an associative list by its key fields. */
function itemSegment(item: Json, keys: string[]): string {
  const obj = isObject(item) ? item : {};
  return ITEM + JSON.stringify(Object.fromEntries(keys.map((k) => [k, obj[k]])));
}

function itemIndex(list: Json[], seg: string): number {
  const key = itemKey(seg);
  if (!key) return -1;
  return list.findIndex((item) => isObject(item) && Object.entries(key).every(([k, v]) => item[k] === v));
}

/** The leaf paths an object sets (status, apiVersion, kind and server-set metadata aside). */
export function ownedPaths(obj: KubeObject, schema?: JSONSchemaProps): Path[] {
  const out: Path[] = [];
  const walk = (v: Json, path: Path, s: Schema) => {
    const keys = Array.isArray(v) ? mapKeys(s) : undefined;
    if (keys) for (const item of v as Json[]) walk(item, [...path, itemSegment(item, keys)], s?.items);
    else if (!isObject(v)) out.push(path);
    // An empty object sets nothing, so it owns nothing (and conflicts with no one).
    else for (const [k, child] of Object.entries(v)) walk(child, [...path, k], childSchema(s, k));
  };
  for (const [k, v] of Object.entries(obj)) {
    if (k === 'apiVersion' || k === 'kind' || k === 'status') continue;
    if (k !== 'metadata') walk(v, [k], childSchema(schema, k));
    else for (const [mk, mv] of Object.entries(v as object)) if (!UNOWNED_META.has(mk)) walk(mv, ['metadata', mk], undefined);
  }
  return out;
}

/**
 * The value at `p`, undefined when absent. Own fields only: the paths come from managedFields a client
 * may write, and `__proto__` once reached Object.prototype, which a removal then edited for the process.
 */
export function valueAt(obj: Json, p: Path): Json {
  let cur = obj;
  for (const seg of p) {
    if (seg.startsWith(ITEM) && Array.isArray(cur)) cur = cur[itemIndex(cur, seg)];
    else cur = isObject(cur) && Object.hasOwn(cur, seg) ? cur[seg] : undefined;
  }
  return cur;
}

/**
 * Paths, asked in the time of the path asked whether one of them lies under or over another. The
 * ownership checks once compared every path with every other: quadratic in the managedFields a client
 * may send, seconds of the event loop for one request of 50,000 fields.
 */
export class PathSet {
  private readonly paths = new Set<string>();
  /** Every path and every parent of one. */
  private readonly prefixes = new Set<string>();

  constructor(paths: Iterable<Path>) {
    for (const p of paths) {
      let key = '';
      this.prefixes.add(key);
      for (const seg of p) this.prefixes.add((key += JSON.stringify(seg)));
      this.paths.add(key);
    }
  }

  /** Whether `p` is one of the paths or a parent of one. */
  reaches(p: Path): boolean {
    return this.prefixes.has(p.map((seg) => JSON.stringify(seg)).join(''));
  }

  /** Whether `p` is one of the paths, under one, or a parent of one. */
  overlaps(p: Path): boolean {
    let key = '';
    for (const seg of p) {
      if (this.paths.has(key)) return true;
      key += JSON.stringify(seg);
    }
    return this.prefixes.has(key);
  }
}

/** FieldsV1 (`{"f:spec":{"f:volumes":{"k:{\"name\":\"data\"}":{...}}}}`) from leaf paths. */
export function toFieldsV1(paths: Path[]): Record<string, unknown> {
  const root: Record<string, Record<string, unknown>> = {};
  for (const p of paths) {
    let node: Record<string, unknown> = root;
    for (const seg of p) node = (node[seg.startsWith(ITEM) ? seg : `f:${seg}`] ??= {}) as Record<string, unknown>;
  }
  return root;
}

/** Leaf paths from FieldsV1. */
export function pathsOf(fields: Record<string, unknown>, prefix: Path = []): Path[] {
  const keys = Object.keys(fields).filter((k) => k.startsWith('f:') || k.startsWith(ITEM));
  if (keys.length === 0) return prefix.length > 0 ? [prefix] : [];
  return keys.flatMap((k) => pathsOf((fields[k] ?? {}) as Record<string, unknown>, [...prefix, k.startsWith(ITEM) ? k : k.slice(2)]));
}

/** `target` with `patch` merged in as a merge patch would, but associative lists merged item by item. */
export function mergeApplied(target: Json, patch: Json, schema: Schema): Json {
  if (Array.isArray(patch)) {
    const keys = mapKeys(schema);
    if (!keys || !Array.isArray(target)) return structuredClone(patch);
    const out = [...target];
    for (const item of patch) {
      const at = itemIndex(out, itemSegment(item, keys));
      if (at >= 0) out[at] = mergeApplied(out[at], item, schema?.items);
      else out.push(structuredClone(item));
    }
    return out;
  }
  if (!isObject(patch)) return patch;
  const out: Record<string, Json> = isObject(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (v === null) delete out[k];
    // Defined, not assigned: a field named __proto__ stays a field (ConfigMap data may have that key).
    else Object.defineProperty(out, k, { value: mergeApplied(valueAt(out, [k]), v, childSchema(schema, k)), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * Removes the field (or list item) at `p`, then every parent it leaves empty that no kept path still
 * reaches. A list item's key fields go with the item, never alone: an item left with only them is empty.
 */
export function removePath(obj: Json, p: Path, keep: PathSet): void {
  for (let end = p.length; end > 0; end--) {
    const parent = valueAt(obj, p.slice(0, end - 1));
    const seg = p[end - 1]!;
    const emptied = end === p.length || isEmptied(valueAt(parent, [seg]), seg);
    if (!emptied || keep.reaches(p.slice(0, end))) return;
    const item = end >= 2 ? p[end - 2]! : '';
    if (item.startsWith(ITEM) && Object.hasOwn(itemKey(item) ?? {}, seg)) continue;
    if (Array.isArray(parent) && seg.startsWith(ITEM)) {
      const at = itemIndex(parent, seg);
      if (at >= 0) parent.splice(at, 1);
    } else if (isObject(parent)) delete parent[seg];
    else return;
  }
}

/** The key fields a `k:{...}` segment names; undefined for one that is not a JSON object (managedFields come from clients). */
function itemKey(seg: string): Record<string, Json> | undefined {
  try {
    const key: unknown = JSON.parse(seg.slice(ITEM.length));
    return isObject(key) ? key : undefined;
  } catch {
    return undefined;
  }
}

// Nothing left in it: no field, or for a list item, only its key fields.
function isEmptied(child: Json, seg: string): boolean {
  if (child === null || typeof child !== 'object') return false;
  const left = Object.keys(child);
  const key = seg.startsWith(ITEM) ? itemKey(seg) : undefined;
  return left.length === 0 || (key !== undefined && left.every((k) => Object.hasOwn(key, k)));
}

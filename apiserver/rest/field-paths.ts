/**
 * Field paths as managedFields name them (structured-merge-diff's FieldsV1):
 * `f:<field>` for an object's field, and `k:{"name":"data"}` for the item
 * of an associative list (`x-kubernetes-list-type: map` with
 * `x-kubernetes-list-map-keys` in the kind's schema), which is owned, merged
 * and removed item by item. Other lists are one value. Pure.
 */
import { declaredProperty, type JSONSchemaProps } from '../resources.js';
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
  const declared = declaredProperty(schema, seg);
  if (declared) return declared;
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

/**
 * The items of one associative list by their key fields' values, indexed once: found by a scan, each
 * item's path of a list of N items cost N steps, and owning the list N² (5,000 env entries: 5 s of the
 * event loop for a create, 15 s for each later write of the object). An item whose key fields are not
 * all its own primitive values matches no segment, as it matched none by `===`; the first item wins.
 */
class ListItems {
  private readonly at = new Map<string, number>();

  /** `removed`: positions taken out of the list (shared by every index of it), which match nothing. */
  constructor(
    readonly list: Json[],
    readonly keys: string[],
    private readonly removed: ReadonlySet<number> = new Set(),
  ) {
    list.forEach((item, i) => this.note(item, i));
  }

  /** The index of the item whose key fields are `key`'s; -1 when none. */
  indexOf(key: Record<string, Json>): number {
    const id = identity(key, this.keys);
    const at = id === undefined ? undefined : this.at.get(id);
    return at === undefined || this.removed.has(at) ? -1 : at;
  }

  /** Appends `item` to the list. */
  push(item: Json): void {
    this.note(item, this.list.length);
    this.list.push(item);
  }

  private note(item: Json, i: number): void {
    const id = isObject(item) ? identity(item, this.keys) : undefined;
    if (id !== undefined && !this.at.has(id)) this.at.set(id, i);
  }
}

// The values of `keys` in `obj`, as one string; undefined when one is not `obj`'s own primitive value.
function identity(obj: Record<string, Json>, keys: string[]): string | undefined {
  const values: Json[] = [];
  for (const k of keys) {
    const v = Object.hasOwn(obj, k) ? obj[k] : undefined;
    if (v === undefined || (v !== null && typeof v === 'object')) return undefined;
    values.push(v);
  }
  return JSON.stringify(values);
}

/**
 * The indexes of the associative lists one operation reads (each list indexed once, by the key fields
 * asked). Kept for one operation only: its lists change in place only through them (removePath), while
 * objects outside it (the watch cache's) are nobody's to index for good.
 */
export class ListIndexes {
  // Per list: its indexes by the key fields asked (a client's managedFields may name items by other fields
  // than the schema's), and the positions removed, which every index of it skips until compact().
  private readonly lists = new WeakMap<Json[], { byKeys: Map<string, ListItems>; removed: Set<number> }>();
  private readonly shortened = new Set<Json[]>();

  /** The index of the item `seg` names in `list`; -1 when none. */
  indexOf(list: Json[], seg: string): number {
    const key = itemKey(seg);
    if (!key) return -1;
    const keys = Object.keys(key);
    let state = this.lists.get(list);
    if (!state) this.lists.set(list, (state = { byKeys: new Map(), removed: new Set() }));
    const sig = JSON.stringify(keys);
    let items = state.byKeys.get(sig);
    if (!items) state.byKeys.set(sig, (items = new ListItems(list, keys, state.removed)));
    return items.indexOf(key);
  }

  /**
   * Removes the item `seg` names from `list`: found no more at once, out of the list at compact(). Spliced
   * out one by one, removing every item of a list would cost N² again.
   */
  remove(list: Json[], seg: string): void {
    const at = this.indexOf(list, seg);
    if (at < 0) return;
    this.lists.get(list)!.removed.add(at);
    this.shortened.add(list);
  }

  /** Whether every item of `list` is removed (or it has none). */
  isEmpty(list: Json[]): boolean {
    return list.length === (this.lists.get(list)?.removed.size ?? 0);
  }

  /** Takes every removed item out of its list, in place; the list's indexes go with it. */
  compact(): void {
    for (const list of this.shortened) {
      const removed = this.lists.get(list)!.removed;
      let kept = 0;
      for (let i = 0; i < list.length; i++) if (!removed.has(i)) list[kept++] = list[i];
      list.length = kept;
      this.lists.delete(list);
    }
    this.shortened.clear();
  }
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
export function valueAt(obj: Json, p: Path, lists = new ListIndexes()): Json {
  let cur = obj;
  for (const seg of p) {
    if (seg.startsWith(ITEM) && Array.isArray(cur)) cur = cur[lists.indexOf(cur, seg)];
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
  // A trie of the paths: each node a path or a parent of one (marked when a path ends there).
  private readonly root: TrieNode = { children: new Map(), isPath: false };

  constructor(paths: Iterable<Path>) {
    for (const p of paths) {
      let node = this.root;
      for (const seg of p) {
        let child = node.children.get(seg);
        if (!child) node.children.set(seg, (child = { children: new Map(), isPath: false }));
        node = child;
      }
      node.isPath = true;
    }
  }

  /** Whether `p` is one of the paths or a parent of one. */
  reaches(p: Path): boolean {
    let node: TrieNode | undefined = this.root;
    for (const seg of p) if (!(node = node.children.get(seg))) return false;
    return true;
  }

  /** Whether `p` is one of the paths, under one, or a parent of one. */
  overlaps(p: Path): boolean {
    let node: TrieNode | undefined = this.root;
    for (const seg of p) {
      if (node.isPath) return true;
      if (!(node = node.children.get(seg))) return false;
    }
    return true;
  }
}

interface TrieNode {
  children: Map<string, TrieNode>;
  isPath: boolean;
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
export function pathsOf(fields: Record<string, unknown>): Path[] {
  const out: Path[] = [];
  const walk = (node: Record<string, unknown>, path: Path) => {
    let leaf = true;
    for (const k of Object.keys(node)) {
      if (!k.startsWith('f:') && !k.startsWith(ITEM)) continue;
      leaf = false;
      walk((node[k] ?? {}) as Record<string, unknown>, [...path, k.startsWith(ITEM) ? k : k.slice(2)]);
    }
    if (leaf && path.length > 0) out.push(path);
  };
  walk(fields, []);
  return out;
}

/** `target` with `patch` merged in as a merge patch would, but associative lists merged item by item. */
export function mergeApplied(target: Json, patch: Json, schema: Schema): Json {
  if (Array.isArray(patch)) {
    const keys = mapKeys(schema);
    if (!keys || !Array.isArray(target)) return structuredClone(patch);
    const out = new ListItems([...target], keys);
    for (const item of patch) {
      const at = out.indexOf(isObject(item) ? item : {});
      if (at >= 0) out.list[at] = mergeApplied(out.list[at], item, schema?.items);
      else out.push(structuredClone(item));
    }
    return out.list;
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
 * Removes the fields (or list items) at `paths` that no kept path reaches, each with every parent it
 * leaves empty that no kept path still reaches. A list item's key fields go with the item, never alone:
 * an item left with only them is empty.
 */
export function removePaths(obj: Json, paths: Path[], keep: PathSet): void {
  const lists = new ListIndexes();
  for (const p of paths) if (!keep.reaches(p)) removePath(obj, p, keep, lists);
  lists.compact();
}

function removePath(obj: Json, p: Path, keep: PathSet, lists: ListIndexes): void {
  for (let end = p.length; end > 0; end--) {
    const parent = valueAt(obj, p.slice(0, end - 1), lists);
    const seg = p[end - 1]!;
    const emptied = end === p.length || isEmptied(valueAt(parent, [seg], lists), seg, lists);
    if (!emptied || keep.reaches(p.slice(0, end))) return;
    const item = end >= 2 ? p[end - 2]! : '';
    if (item.startsWith(ITEM) && Object.hasOwn(itemKey(item) ?? {}, seg)) continue;
    if (Array.isArray(parent) && seg.startsWith(ITEM)) lists.remove(parent, seg);
    else if (isObject(parent)) delete parent[seg];
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

// Nothing left in it: no field (no item not removed), or for a list item, only its key fields.
function isEmptied(child: Json, seg: string, lists: ListIndexes): boolean {
  if (Array.isArray(child)) return lists.isEmpty(child);
  if (child === null || typeof child !== 'object') return false;
  const left = Object.keys(child);
  const key = seg.startsWith(ITEM) ? itemKey(seg) : undefined;
  return left.length === 0 || (key !== undefined && left.every((k) => Object.hasOwn(key, k)));
}

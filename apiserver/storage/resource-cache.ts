/**
 * The in-memory copy of one kind (kube-apiserver's cacher): every object at
 * the cache's revision, an index per selectable field, a ring of recent
 * events for resuming watches, and the watchers to fan events out to.
 *
 * Concurrency: everything here runs on the event loop without awaiting, so
 * applying an event, replaying the ring to a new watcher and registering it
 * are atomic with respect to each other; no event is lost or repeated.
 * Objects held here are shared and must never be mutated by readers.
 */
import type { ResourceDefinition } from '../resources.js';
import type { KubeObject } from './codec.js';
import { toWatchEvent, type Predicate, type StoreEvent, type WatchEvent } from './events.js';
import { fieldValue } from './fields.js';
import { RevisionRing } from './ring.js';

/** A watcher attached to the cache. */
export interface Subscriber {
  matches: Predicate;
  /** Called synchronously for each event the watcher should hear; must not throw. */
  onEvent(ev: WatchEvent): void;
  /** Called when the cache drops the watcher (it was reset); the client must re-watch. */
  onClose(): void;
  /** An exact-value field requirement the watcher can be indexed by. */
  indexedBy?: { field: string; value: string };
}

/** Cached state of one resource kind. */
export class ResourceCache {
  readonly objects = new Map<string, KubeObject>();
  private readonly index = new Map<string, Map<string, Set<string>>>();
  private readonly ring: RevisionRing<StoreEvent>;
  private readonly unindexed = new Set<Subscriber>();
  private readonly indexedSubs = new Map<string, Map<string, Set<Subscriber>>>();
  private indexedCount = 0;
  /** Every event after this revision is in the ring. */
  oldestRev = 0;

  constructor(readonly def: ResourceDefinition, readonly prefix: string, ringSize: number) {
    this.ring = new RevisionRing(ringSize);
    for (const field of def.selectableFields) {
      this.index.set(field, new Map());
      this.indexedSubs.set(field, new Map());
    }
  }

  /** Replaces the contents with a fresh listing taken at `rev`. */
  reset(objects: Map<string, KubeObject>, rev: number): void {
    // Watchers attached while the relist ran saw the old contents; they must re-watch.
    this.closeAll();
    this.objects.clear();
    for (const values of this.index.values()) values.clear();
    this.ring.clear();
    for (const [key, obj] of objects) this.store(key, obj);
    this.oldestRev = rev;
  }

  /** Applies one change and tells the watchers that care. */
  apply(ev: StoreEvent): void {
    const old = this.objects.get(ev.key);
    if (old) this.unindex(ev.key, old);
    if (ev.type === 'put') this.store(ev.key, ev.obj);
    else this.objects.delete(ev.key);
    const dropped = this.ring.push(ev);
    if (dropped) this.oldestRev = dropped.rev;
    for (const sub of this.subscribersFor(ev)) {
      const out = toWatchEvent(ev, sub.matches);
      if (out) sub.onEvent(out);
    }
  }

  /** Objects matching `matches`, sorted by key; uses an index when `exact` names an indexed field. */
  list(matches: Predicate, exact?: { field: string; value: string }): KubeObject[] {
    const keys = exact && this.index.get(exact.field)?.get(exact.value);
    const candidates = exact && this.index.has(exact.field) ? [...(keys ?? [])] : [...this.objects.keys()];
    candidates.sort();
    const out: KubeObject[] = [];
    for (const key of candidates) {
      const obj = this.objects.get(key);
      if (obj && matches(obj)) out.push(obj);
    }
    return out;
  }

  /**
   * Replays every buffered event after `fromRev` to `sub` and attaches it.
   * Returns false (attaching nothing) when `fromRev` is older than the ring.
   */
  subscribe(sub: Subscriber, fromRev: number): boolean {
    if (fromRev < this.oldestRev) return false;
    for (const ev of this.ring.after(fromRev)) {
      const out = toWatchEvent(ev, sub.matches);
      if (out) sub.onEvent(out);
    }
    const set = this.subscriberSet(sub);
    if (set !== this.unindexed && !set.has(sub)) this.indexedCount++;
    set.add(sub);
    return true;
  }

  /** Detaches a watcher. */
  unsubscribe(sub: Subscriber): void {
    // Looked up, not made: after closeAll() the watcher's set is gone, and an empty one made here stayed for good.
    const byValue = sub.indexedBy && this.indexedSubs.get(sub.indexedBy.field);
    const set = byValue ? byValue.get(sub.indexedBy!.value) : this.unindexed;
    if (set?.delete(sub) && set !== this.unindexed) {
      this.indexedCount--;
      if (set.size === 0) this.indexedSubs.get(sub.indexedBy!.field)?.delete(sub.indexedBy!.value);
    }
  }

  /** Detaches and closes every watcher (the cache is being reset). */
  closeAll(): void {
    const all = [...this.unindexed];
    for (const byValue of this.indexedSubs.values()) for (const subs of byValue.values()) all.push(...subs);
    this.unindexed.clear();
    for (const byValue of this.indexedSubs.values()) byValue.clear();
    this.indexedCount = 0;
    for (const sub of all) sub.onClose();
  }

  private subscriberSet(sub: Subscriber): Set<Subscriber> {
    const byValue = sub.indexedBy && this.indexedSubs.get(sub.indexedBy.field);
    if (!byValue || !sub.indexedBy) return this.unindexed;
    let set = byValue.get(sub.indexedBy.value);
    if (!set) byValue.set(sub.indexedBy.value, (set = new Set()));
    return set;
  }

  private subscribersFor(ev: StoreEvent): Iterable<Subscriber> {
    if (this.indexedCount === 0) return this.unindexed;
    const out = new Set(this.unindexed);
    for (const [field, byValue] of this.indexedSubs) {
      if (byValue.size === 0) continue;
      for (const obj of [ev.obj, ev.prev]) {
        const subs = obj && byValue.get(fieldValue(obj, field));
        if (subs) for (const s of subs) out.add(s);
      }
    }
    return out;
  }

  private store(key: string, obj: KubeObject): void {
    this.objects.set(key, obj);
    for (const [field, values] of this.index) {
      const v = fieldValue(obj, field);
      let keys = values.get(v);
      if (!keys) values.set(v, (keys = new Set()));
      keys.add(key);
    }
  }

  private unindex(key: string, obj: KubeObject): void {
    for (const [field, values] of this.index) {
      const v = fieldValue(obj, field);
      const keys = values.get(v);
      keys?.delete(key);
      if (keys?.size === 0) values.delete(v);
    }
  }
}

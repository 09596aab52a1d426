/**
 * An informer: a local cache of one resource kept current by list + watch,
 * with add/update/delete handlers. It lists, then watches from the list's
 * resourceVersion (with bookmarks); when a watch ends it resumes from the
 * last version seen, after a backoff when it ended in an error; a 410 Gone
 * (version compacted away), a failed list or an event a handler failed on
 * makes it re-list, and the re-list diff is delivered to handlers as adds,
 * updates and deletes, so nothing is missed.
 *
 * Concurrency model: one async loop per informer; the store is only
 * written by that loop, and handlers run synchronously inside it (they
 * should only enqueue keys). hasSynced turns true after the first list.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { isGone, toApiError } from '../api/client/errors.js';
import { eachPage } from '../api/client/pages.js';
import { RestClient } from '../api/client/rest-client.js';
import { realClock, sleep, type Clock } from './clock.js';
import { WatchStream } from './watch-stream.js';

/** The minimum every listed object has. */
export interface ListedObject {
  metadata: { name?: string; namespace?: string; resourceVersion?: string };
}

/** What an informer lists and watches: any group/version/plural, optionally narrowed. */
export interface InformerSource {
  group: string;
  version: string;
  plural: string;
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** Callbacks of an informer; keep them fast (enqueue keys). */
export interface InformerHandlers<T> {
  add?(obj: T): void;
  update?(oldObj: T, newObj: T): void;
  delete?(obj: T): void;
}

/** Options of an Informer. */
export interface InformerOptions {
  clock?: Clock;
  log?: Logger;
  /** Server-side watch timeout; each watch gets ±10 % jitter. Default 300 s. */
  watchTimeoutSeconds?: number;
  /**
   * A watch that delivers nothing (not even a bookmark) for this long is
   * presumed dead — a partition can leave a connection open but silent —
   * and is restarted from the last version. Cairn's apiserver sends a
   * bookmark every 15 s; default 60 s.
   */
  idleTimeoutMs?: number;
  /** Applied to every object before it is cached (client-go's TransformFunc), e.g. dropping managedFields to save memory. */
  transform?: <T>(obj: T) => T;
}

/** A transform that drops metadata.managedFields, which readers of a cache never need. */
export function dropManagedFields<T>(obj: T): T {
  const meta = (obj as { metadata?: { managedFields?: unknown } }).metadata;
  if (meta?.managedFields) delete meta.managedFields;
  return obj;
}

/** The cache key of an object: namespace/name, or name when cluster-scoped. */
export function objectKey(obj: ListedObject): string {
  const { namespace, name } = obj.metadata;
  return namespace ? `${namespace}/${name}` : String(name);
}

/** Changes of a relist told to the handlers before the event loop may run. */
const REPLACE_CHUNK = 1000;

/** How one watch ended: closed or given up, 410 Gone (relist), or another ERROR event (back off, then watch again). */
type WatchOutcome = 'ended' | 'gone' | 'refused';

/** A change of the store, as the handlers are told it. */
type Change<T> = { kind: 'add' | 'delete'; obj: T } | { kind: 'update'; obj: T; old: T };

/** A secondary index: the keys under each value, and the objects under it as last read (until one changes). */
interface SecondaryIndex<T> {
  fn: (obj: T) => string[];
  map: Map<string, Set<string>>;
  lists: Map<string, readonly T[]>;
}

/** A list+watch cache of one resource. */
export class Informer<T extends ListedObject> {
  private readonly store = new Map<string, T>();
  private readonly indexes = new Map<string, SecondaryIndex<T>>();
  private readonly handlers: InformerHandlers<T>[] = [];
  private readonly rest: RestClient;
  private readonly watcher: WatchStream;
  private readonly clock: Clock;
  private readonly stopController = new AbortController();
  private resourceVersion = '';
  private synced = false;
  private syncWaiters: Array<() => void> = [];
  private loop: Promise<void> | undefined;

  constructor(
    kubeConfig: KubeConfig,
    readonly source: InformerSource,
    private readonly opts: InformerOptions = {},
  ) {
    this.rest = RestClient.forConfig(kubeConfig);
    this.watcher = new WatchStream(kubeConfig);
    this.clock = opts.clock ?? realClock;
  }

  /** Registers handlers; objects already cached are delivered as adds. */
  addHandlers(h: InformerHandlers<T>): void {
    this.handlers.push(h);
    for (const obj of this.store.values()) h.add?.(obj);
  }

  // The collection's URL: the core group's under /api, every other under /apis/<group>.
  private get path(): string {
    const { group, version, plural, namespace } = this.source;
    return `${group ? `/apis/${group}` : '/api'}/${version}${namespace ? `/namespaces/${namespace}` : ''}/${plural}`;
  }

  /** Starts list + watch in the background. */
  start(): void {
    this.loop ??= this.run();
  }

  /** Resolves once the first list has filled the cache. */
  waitForSync(): Promise<void> {
    if (this.synced) return Promise.resolve();
    return new Promise((resolve) => this.syncWaiters.push(resolve));
  }

  /** Whether the first list has completed. */
  get hasSynced(): boolean {
    return this.synced;
  }

  /** The cached object with this key (namespace/name), if any. Never mutate it. */
  get(key: string): T | undefined {
    return this.store.get(key);
  }

  /** Adds a secondary index (client-go's Indexer): fn lists the index values of an object. Call before start(). */
  addIndex(name: string, fn: (obj: T) => string[]): void {
    this.indexes.set(name, { fn, map: new Map(), lists: new Map() });
    for (const [key, obj] of this.store) this.index(key, obj, undefined);
  }

  /** How many cached objects index `name` holds under value, without making (and keeping) their list. */
  countByIndex(name: string, value: string): number {
    return this.indexes.get(name)?.map.get(value)?.size ?? 0;
  }

  /**
   * Cached objects whose index `name` contains value. The same array is returned until one of them changes
   * (a scheduler reads a cluster's nodes for every decision): never mutate it.
   */
  byIndex(name: string, value: string): readonly T[] {
    const index = this.indexes.get(name);
    const keys = index?.map.get(value);
    if (!index || !keys) return [];
    let list = index.lists.get(value);
    if (!list) index.lists.set(value, (list = [...keys].map((k) => this.store.get(k)!)));
    return list;
  }

  /** Every cached object. Never mutate them. */
  list(): T[] {
    return [...this.store.values()];
  }

  /** The resourceVersion the cache reflects. */
  get lastResourceVersion(): string {
    return this.resourceVersion;
  }

  /** Stops the loop and any open watch. */
  async stop(): Promise<void> {
    this.stopController.abort();
    await this.loop;
  }

  private get stopped(): boolean {
    return this.stopController.signal.aborted;
  }

  private async run(): Promise<void> {
    let failures = 0;
    let needList = true;
    while (!this.stopped) {
      try {
        if (needList) await this.relist();
        needList = false;
        const outcome = await this.watchOnce();
        failures = outcome === 'ended' ? 0 : failures + 1;
        needList = outcome === 'gone';
      } catch (err) {
        failures++;
        needList = needList || isGone(err) || !this.resourceVersion;
        this.opts.log?.warn('list/watch failed, retrying', { resource: this.source.plural, error: String(toApiError(err)) });
      }
      if (failures > 0) await sleep(this.clock, Math.min(100 * 2 ** Math.min(failures - 1, 7), 10_000), this.stopController.signal);
    }
  }

  private async relist(): Promise<void> {
    const { labelSelector, fieldSelector } = this.source;
    const fresh = new Map<string, T>();
    let rv = '';
    for await (const page of eachPage<{ items: T[]; metadata: { resourceVersion?: string; continue?: string } }>(this.rest, this.path, { query: { labelSelector, fieldSelector } })) {
      // Transformed page by page: a list of 100,000 ConfigMaps is not held with its data.
      for (const o of page.items) fresh.set(objectKey(o), this.transformed(o));
      rv ||= page.metadata.resourceVersion ?? '';
      if (this.stopped) break;
    }
    if (this.synced) this.opts.log?.info('relisted', { resource: this.source.plural, objects: fresh.size });
    await this.replaceAll(fresh);
    this.resourceVersion = rv;
    this.markSynced();
  }

  /**
   * Makes the store what a list found in one synchronous step, then tells the handlers REPLACE_CHUNK
   * changes at a time, with the event loop let go in between: handlers calling out for each of 150,000
   * objects held this process for seconds, longer than a leader's renew deadline. The store itself must
   * change at once: a list comes in key order, not in etcd's, and a reader between two of its objects
   * would see a state that never was — an instance's claim of a node's new term beside that node's lease
   * from before it, and the claim freed while its holder runs the instance.
   */
  private async replaceAll(fresh: Map<string, T>): Promise<void> {
    const changes: Change<T>[] = [];
    for (const [key, old] of this.store) {
      if (fresh.has(key)) continue;
      this.store.delete(key);
      this.index(key, undefined, old);
      changes.push({ kind: 'delete', obj: old });
    }
    for (const [key, obj] of fresh) {
      const change = this.put(key, obj);
      if (change) changes.push(change);
    }
    // A change a handler failed on is undone, so that the relist this failure leads to tells it again.
    let failure: { err: unknown } | undefined;
    for (let i = 0; i < changes.length; i++) {
      try {
        this.emit(changes[i]!);
      } catch (err) {
        failure ??= { err };
        this.undo(changes[i]!);
      }
      if ((i + 1) % REPLACE_CHUNK === 0) await new Promise((r) => setImmediate(r));
    }
    if (failure) throw failure.err;
  }

  private undo(change: Change<T>): void {
    const key = objectKey(change.obj);
    this.restore(key, change.kind === 'update' ? change.old : change.kind === 'delete' ? change.obj : undefined);
  }

  /** Puts key back as it was (`before`; undefined: absent), whatever the store holds for it now. */
  private restore(key: string, before: T | undefined): void {
    const now = this.store.get(key);
    if (before) this.store.set(key, before);
    else this.store.delete(key);
    this.index(key, before, now);
  }

  private transformed(raw: T): T {
    return this.opts.transform ? this.opts.transform(raw) : raw;
  }

  private upsert(key: string, raw: T): void {
    this.apply(key, this.transformed(raw));
  }

  private apply(key: string, obj: T): void {
    const change = this.put(key, obj);
    if (change) this.emit(change);
  }

  /** Stores and indexes `obj`; the change to tell the handlers, if it is one. */
  private put(key: string, obj: T): Change<T> | undefined {
    const old = this.store.get(key);
    this.store.set(key, obj);
    this.index(key, obj, old);
    if (!old) return { kind: 'add', obj };
    return old.metadata.resourceVersion !== obj.metadata.resourceVersion ? { kind: 'update', obj, old } : undefined;
  }

  private emit(change: Change<T>): void {
    for (const h of this.handlers) {
      if (change.kind === 'add') h.add?.(change.obj);
      else if (change.kind === 'update') h.update?.(change.old, change.obj);
      else h.delete?.(change.obj);
    }
  }

  private markSynced(): void {
    if (this.synced) return;
    this.synced = true;
    for (const w of this.syncWaiters.splice(0)) w();
  }

  /**
   * One watch from the cached version; resolves 'ended' when it closes normally (or is given up: stopped, or
   * silent for too long), 'gone' on 410, 'refused' on any other ERROR event (retried with backoff, not at once).
   */
  private watchOnce(): Promise<WatchOutcome> {
    const { labelSelector, fieldSelector } = this.source;
    const path = this.path;
    const base = this.opts.watchTimeoutSeconds ?? 300;
    const timeoutSeconds = Math.round(base * (0.9 + Math.random() * 0.2));
    return new Promise((resolve, reject) => {
      if (this.stopped) return resolve('ended'); // stopped while it relisted: its abort has come and gone
      let outcome: WatchOutcome = 'ended';
      let settled = false;
      // This watch's own cancellation, from the moment it is sent: a half-open connection never sends headers.
      const handle = new AbortController();
      const settle = (fn: () => void) => {
        if (settled) return;
        settled = true;
        idle.cancel();
        this.stopController.signal.removeEventListener('abort', cut);
        fn();
      };
      const cut = () => handle.abort();
      const idleMs = this.opts.idleTimeoutMs ?? 60_000;
      // One timer per watch, re-armed only when it fires: events (thousands a second in a burst) just stamp the time.
      let lastEvent = this.clock.now();
      const checkIdle = () => {
        const quietMs = this.clock.now() - lastEvent;
        if (quietMs < idleMs) return void (idle = this.clock.setTimer(checkIdle, idleMs - quietMs));
        this.opts.log?.warn('watch silent for too long; restarting it', { resource: this.source.plural, idleMs });
        cut();
      };
      let idle = this.clock.setTimer(checkIdle, idleMs);
      this.stopController.signal.addEventListener('abort', cut, { once: true });
      const onEvent = (type: string, obj: T & { code?: number; message?: string }) => {
        lastEvent = this.clock.now();
        if (type === 'ERROR') {
          outcome = obj.code === 410 ? 'gone' : 'refused';
          if (outcome === 'refused') this.opts.log?.warn('watch ended by an error; retrying', { resource: this.source.plural, code: obj.code, error: obj.message });
          handle.abort();
          return;
        }
        // An event that failed is undone and relisted, not lost with the cache and its handlers out of step.
        try {
          this.applyEvent(type, obj);
        } catch (err) {
          outcome = 'gone';
          handle.abort();
          const object = obj?.metadata ? objectKey(obj) : '(an object without metadata)';
          this.opts.log?.error('an informer event could not be handled; relisting', { resource: this.source.plural, type, object, error: String(err) });
        }
      };
      const onDone = (err: unknown) =>
        settle(() => (err && outcome === 'ended' && !this.stopped && (err as Error).name !== 'AbortError' ? reject(err) : resolve(outcome)));
      const query = { resourceVersion: this.resourceVersion, allowWatchBookmarks: true, timeoutSeconds, labelSelector, fieldSelector };
      this.watcher.watch(path, query, onEvent, onDone, handle.signal).catch((err: unknown) => settle(() => reject(err)));
    });
  }

  // One watch event, all or nothing: if the transform or a handler throws, the cache keeps the key as it
  // was, so the relist that follows delivers the change again, and the resourceVersion is not advanced.
  private applyEvent(type: string, obj: T): void {
    if (type === 'ADDED' || type === 'MODIFIED' || type === 'DELETED') this.applyChange(type, obj);
    if (obj?.metadata?.resourceVersion) this.resourceVersion = obj.metadata.resourceVersion; // a BOOKMARK's too
  }

  private applyChange(type: 'ADDED' | 'MODIFIED' | 'DELETED', obj: T): void {
    const key = objectKey(obj);
    const before = this.store.get(key);
    try {
      if (type === 'DELETED') this.remove(obj);
      else this.upsert(key, obj);
    } catch (err) {
      this.restore(key, before);
      throw err;
    }
  }

  private remove(obj: T): void {
    const key = objectKey(obj);
    const old = this.store.get(key);
    if (!old) return;
    this.store.delete(key);
    this.index(key, undefined, old);
    this.emit({ kind: 'delete', obj });
  }

  private index(key: string, obj: T | undefined, old: T | undefined): void {
    for (const { fn, map, lists } of this.indexes.values()) {
      for (const v of old ? fn(old) : []) {
        const set = map.get(v);
        set?.delete(key);
        if (set?.size === 0) map.delete(v);
        lists.delete(v);
      }
      for (const v of obj ? fn(obj) : []) {
        let set = map.get(v);
        if (!set) map.set(v, (set = new Set()));
        set.add(key);
        lists.delete(v);
      }
    }
  }
}

/**
 * One etcd watch feeding a ResourceCache per kind: lists, gets and
 * watches are served from memory at a known revision, the way
 * kube-apiserver's cacher does, so N watchers cost one etcd watch.
 *
 * Concurrency: events are applied on the event loop in revision order.
 * `revision` is the last revision applied; consistent reads wait until it
 * has reached etcd's current revision (one revision request serves every
 * reader that arrived while the previous one was in flight). When the etcd watch is cancelled
 * (its start revision was compacted, say) the cache relists, and every
 * attached watcher is closed so its client re-watches from its last version.
 */
import type { Watcher } from 'etcd3';
import type { Logger } from 'winston';
import type { ResourceDefinition } from '../resources.js';
import type { KubeObject } from './codec.js';
import { EtcdStore, type Stored } from './etcd-store.js';
import { deletedState, type StoreEvent } from './events.js';
import { REGISTRY_PREFIX, resourcePrefix } from './keys.js';
import { ResourceCache } from './resource-cache.js';
import { RevisionBarrier } from './revision-barrier.js';
import { resumeAfterDelivered } from './watch-resume.js';

/** Tuning of the watch cache. */
export interface WatchCacheOptions {
  /** Events kept per kind for resuming watches. */
  ringSize: number;
  /** Keys read per page while (re)listing, at most (big objects make pages smaller: EtcdStore.scan). */
  listPageSize: number;
}

const defaults: WatchCacheOptions = { ringSize: 10_000, listPageSize: 1000 };

/** The apiserver's cache of every stored kind. */
export class WatchCache {
  /** The last etcd revision applied to the caches. */
  revision = 0;
  private readonly caches: ResourceCache[] = [];
  private readonly byDef = new Map<ResourceDefinition, ResourceCache>();
  // etcd's write count of each cached key, for a write planned on a cached object (Stored.version).
  private versions = new Map<string, number>();
  private waiters: { rev: number; resolve: () => void }[] = [];
  private watcher: Watcher | null = null;
  private stopped = false;
  private resyncing = false;
  private readonly opts: WatchCacheOptions;
  private readonly barrier: RevisionBarrier;

  /** How many objects each kind's cache holds, by resource (`instances.cairn.dev`). */
  sizes(): { resource: string; objects: number }[] {
    return this.caches.map((c) => ({ resource: c.def.group ? `${c.def.plural}.${c.def.group}` : c.def.plural, objects: c.objects.size }));
  }

  constructor(
    private readonly store: EtcdStore,
    defs: ResourceDefinition[],
    private readonly log: Logger,
    opts: Partial<WatchCacheOptions> = {},
  ) {
    this.opts = { ...defaults, ...opts };
    this.barrier = new RevisionBarrier(() => store.currentRevision());
    for (const def of defs) {
      const cache = new ResourceCache(def, resourcePrefix(def), this.opts.ringSize);
      this.caches.push(cache);
      this.byDef.set(def, cache);
    }
  }

  /** Lists everything and starts watching; resolves once the caches are populated. */
  async start(): Promise<void> {
    const rev = await this.relist();
    await this.watchFrom(rev);
  }

  /** The cache of one kind. */
  forResource(def: ResourceDefinition): ResourceCache {
    const cache = this.byDef.get(def);
    if (!cache) throw new Error(`no watch cache for ${def.plural}`);
    return cache;
  }

  /** The cached state of `key` as etcd would return it; undefined when not cached (it may still exist in etcd). */
  stored(key: string): Stored | undefined {
    const obj = this.cacheForKey(key)?.objects.get(key);
    const version = this.versions.get(key);
    return obj && version !== undefined ? { obj, rev: Number(obj.metadata.resourceVersion), version } : undefined;
  }

  /** Resolves true once `revision` ≥ rev, or false after `timeoutMs`. */
  waitForRevision(rev: number, timeoutMs: number): Promise<boolean> {
    if (this.revision >= rev) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((w) => w !== waiter);
        resolve(false);
      }, timeoutMs).unref();
      const waiter = {
        rev,
        resolve: () => {
          clearTimeout(timer);
          resolve(true);
        },
      };
      this.waiters.push(waiter);
    });
  }

  /** Waits until the cache holds everything etcd had when called (a consistent read). */
  async waitFresh(timeoutMs: number): Promise<boolean> {
    return this.waitForRevision(await this.barrier.current(), timeoutMs);
  }

  /** Stops watching etcd and closes every watcher. */
  async stop(): Promise<void> {
    this.stopped = true;
    for (const cache of this.caches) cache.closeAll();
    await this.watcher?.cancel().catch(() => undefined);
  }

  private async relist(): Promise<number> {
    const listed = new Map<ResourceCache, Map<string, KubeObject>>(this.caches.map((c) => [c, new Map()]));
    const versions = new Map<string, number>();
    let rev = 0;
    for await (const page of this.store.scan(REGISTRY_PREFIX, prefixEnd(REGISTRY_PREFIX), 0, this.opts.listPageSize)) {
      rev = page.revision;
      for (const kv of page.kvs) {
        const key = kv.key.toString();
        const cache = this.cacheForKey(key);
        const obj = cache && this.decodeOrSkip(key, kv.value, kv.mod_revision);
        if (!cache || !obj) continue;
        listed.get(cache)!.set(key, obj);
        versions.set(key, Number(kv.version));
      }
    }
    for (const [cache, objects] of listed) cache.reset(objects, rev);
    this.versions = versions;
    this.advance(rev);
    return rev;
  }

  private async watchFrom(rev: number): Promise<void> {
    // The whole keyspace, not just /registry/: every revision then reaches the
    // cache, even one made by another program sharing this etcd, so `revision`
    // always catches up with etcd's and consistent reads never wait in vain.
    const watcher = await this.store.client.watch().prefix('').startRevision(String(rev + 1)).create();
    this.watcher = watcher;
    resumeAfterDelivered(watcher, () => this.revision);
    watcher.on('data', (res) => {
      for (const e of res.events) this.applyEtcdEvent(e.type === 'Delete' ? 'delete' : 'put', e.kv);
    });
    watcher.on('error', (err) => void this.resync(err));
  }

  private applyEtcdEvent(type: 'put' | 'delete', kv: { key: Buffer; value: Buffer; mod_revision: string; version: string }): void {
    const key = kv.key.toString();
    const rev = Number(kv.mod_revision);
    const cache = this.cacheForKey(key);
    if (cache) {
      const prev = cache.objects.get(key) ?? null;
      const obj = type === 'put' ? this.decodeOrSkip(key, kv.value, kv.mod_revision) : null;
      if (obj) {
        this.versions.set(key, Number(kv.version));
        cache.apply({ type: 'put', key, rev, obj, prev });
      } else {
        this.versions.delete(key);
        if (prev) cache.apply({ type: 'delete', key, rev, obj: deletedState(prev, rev), prev } satisfies StoreEvent);
      }
    }
    this.advance(rev);
  }

  private async resync(err: unknown): Promise<void> {
    if (this.stopped || this.resyncing) return;
    this.resyncing = true;
    this.log.warn('watch cache lost its etcd watch; relisting', { error: String(err) });
    // etcd may have cancelled the watch already, and then a cancel() would wait forever: drop it unawaited.
    this.watcher?.removeAllListeners();
    void this.watcher?.cancel().catch(() => undefined);
    this.watcher = null;
    for (const cache of this.caches) cache.closeAll();
    try {
      await this.watchFrom(await this.relist());
      this.resyncing = false;
    } catch (e) {
      this.resyncing = false;
      this.log.error('watch cache relist failed; retrying in 1s', { error: String(e) });
      setTimeout(() => void this.resync(e), 1000).unref();
    }
  }

  // Something other than Cairn may have written under /registry/: one bad value must not take the cache down.
  private decodeOrSkip(key: string, value: Buffer, rev: string): KubeObject | null {
    try {
      return this.store.decode(key, value, rev);
    } catch (err) {
      this.log.error('skipping an undecodable object in etcd', { key, revision: rev, error: String(err) });
      return null;
    }
  }

  private advance(rev: number): void {
    if (rev <= this.revision) return;
    this.revision = rev;
    if (this.waiters.length === 0) return;
    const ready = this.waiters.filter((w) => w.rev <= rev);
    this.waiters = this.waiters.filter((w) => w.rev > rev);
    for (const w of ready) w.resolve();
  }

  private cacheForKey(key: string): ResourceCache | undefined {
    return this.caches.find((c) => key.startsWith(c.prefix));
  }
}

/** The end of the key range holding every key that starts with `prefix`. */
export function prefixEnd(prefix: string): string {
  return prefix.slice(0, -1) + String.fromCharCode(prefix.charCodeAt(prefix.length - 1) + 1);
}

/**
 * Live collections: one list-then-watch loop per (resource, namespace,
 * field selector), shared by every view that shows it and kept while any
 * does (plus a short linger, so moving between a list and a detail page
 * does not relist). Watch events are applied in batches — at most one
 * store update and one redraw per BATCH_MS — which keeps a busy cluster of
 * hundreds of instances cheap to follow.
 *
 * Every watch holds an HTTP/1.1 connection open, and a browser opens at
 * most six to one server: with all six held by watches, a button's PATCH
 * would wait forever. So the hub keeps at most STREAM_BUDGET streams open
 * (watches plus log streams that ask for room), ending lingering watches
 * first; the pages are built to need no more than that.
 */
import type { Api } from '../api/http';
import type { KubeObject, Resource } from '../api/paths';
import { collectionPath } from '../api/paths';
import { type ConnectionState, startInformer } from '../api/watch';
import { applyEvents, type Collection, emptyCollection, relist, type WatchEvent } from './store';

/** What to watch. */
export interface Source {
  resource: Resource;
  /** A Cluster's namespace; undefined for every cluster. */
  namespace?: string;
  fieldSelector?: string;
}

export interface LiveSnapshot<T> {
  collection: Collection<T>;
  connection: ConnectionState;
}

const BATCH_MS = 50;
const LINGER_MS = 20_000;
/** Long-lived streams the dashboard keeps open at once, of the browser's six connections per server. */
export const STREAM_BUDGET = 4;

/** The identity of a source. */
export function sourceKey(s: Source): string {
  return `${s.resource}|${s.namespace ?? '*'}|${s.fieldSelector ?? ''}`;
}

type Listener<T> = (snapshot: LiveSnapshot<T>) => void;

/** One watched collection and the views listening to it. */
export class LiveCollection<T extends KubeObject> {
  private current: LiveSnapshot<T> = { collection: emptyCollection<T>(), connection: { state: 'connecting' } };
  private readonly listeners = new Set<Listener<T>>();
  private queued: WatchEvent<T>[] = [];
  private flushTimer: ReturnType<typeof setTimeout> | undefined;
  private stopInformer: (() => void) | undefined;
  refs = 0;
  lingerTimer: ReturnType<typeof setTimeout> | undefined;
  /** When the last view let go of it (for ending the oldest lingering watch first). */
  releasedAt = 0;

  constructor(
    readonly source: Source,
    private readonly onConnection: () => void,
  ) {}

  get snapshot(): LiveSnapshot<T> {
    return this.current;
  }

  start(api: Api): void {
    this.stopInformer = startInformer<T>(api, { path: collectionPath(this.source.resource, this.source.namespace), fieldSelector: this.source.fieldSelector }, {
      onList: (items, rv) => {
        this.queued = []; // the list supersedes whatever the old watch still had in flight
        this.update({ collection: relist(items, rv) });
      },
      onEvents: (events) => {
        this.queued.push(...events);
        this.flushTimer ??= setTimeout(() => this.flush(), BATCH_MS);
      },
      onConnection: (connection) => {
        this.update({ connection });
        this.onConnection();
      },
    });
  }

  stop(): void {
    this.stopInformer?.();
    clearTimeout(this.flushTimer);
    this.listeners.clear();
  }

  subscribe(listener: Listener<T>): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Resolves once the object under `key` (undefined when absent) satisfies
   * `ready`; rejects after `timeoutMs`, naming `what` it waited for.
   */
  waitFor(key: string, ready: (o: T | undefined) => boolean, what: string, timeoutMs = 30_000): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = (s: LiveSnapshot<T>) => s.collection.synced && ready(s.collection.items.get(key));
      if (check(this.current)) return resolve();
      const timer = setTimeout(() => {
        off();
        reject(new Error(`gave up waiting for ${what} after ${Math.round(timeoutMs / 1000)} s`));
      }, timeoutMs);
      const off = this.subscribe((s) => {
        if (!check(s)) return;
        clearTimeout(timer);
        off();
        resolve();
      });
    });
  }

  private flush(): void {
    this.flushTimer = undefined;
    const events = this.queued;
    this.queued = [];
    const collection = applyEvents(this.current.collection, events);
    if (collection !== this.current.collection) this.update({ collection });
  }

  private update(change: Partial<LiveSnapshot<T>>): void {
    this.current = { ...this.current, ...change };
    for (const listener of [...this.listeners]) listener(this.current);
  }
}

/** How the watches are doing, for the connection indicator. */
export interface ConnectionSummary {
  watches: number;
  retrying: number;
  /** The error of one retrying watch. */
  error?: string;
}

/** Every live collection of the session. */
export class Hub {
  private readonly lives = new Map<string, LiveCollection<KubeObject>>();
  private readonly connectionListeners = new Set<() => void>();

  constructor(private readonly api: Api) {}

  /** The live collection of `source`, started if it was not; pair with release(). */
  acquire<T extends KubeObject>(source: Source): LiveCollection<T> {
    const key = sourceKey(source);
    let live = this.lives.get(key);
    if (!live) {
      this.makeRoom(1);
      live = new LiveCollection<KubeObject>(source, () => this.notifyConnection());
      this.lives.set(key, live);
      live.start(this.api);
    }
    clearTimeout(live.lingerTimer);
    live.refs++;
    return live as unknown as LiveCollection<T>;
  }

  /** Done with a collection acquired before; it stops once nobody used it for a while. */
  release(live: LiveCollection<KubeObject>): void {
    live.refs--;
    if (live.refs > 0) return;
    live.releasedAt = Date.now();
    live.lingerTimer = setTimeout(() => this.end(live), LINGER_MS);
  }

  /**
   * Ends lingering watches (oldest first) until `streams` more fit in the
   * budget. Watches in use are never ended: a page needing more than the
   * budget still works, with fewer connections left for its requests.
   */
  makeRoom(streams: number): void {
    const lingering = [...this.lives.values()].filter((l) => l.refs === 0).sort((a, b) => a.releasedAt - b.releasedAt);
    for (const live of lingering) {
      if (this.lives.size + streams <= STREAM_BUDGET) return;
      this.end(live);
    }
  }

  private end(live: LiveCollection<KubeObject>): void {
    if (live.refs > 0) return;
    clearTimeout(live.lingerTimer);
    live.stop();
    this.lives.delete(sourceKey(live.source));
    this.notifyConnection();
  }

  /** The current snapshot of `source` if it is watched already. */
  peek<T extends KubeObject>(source: Source): LiveSnapshot<T> | undefined {
    return this.lives.get(sourceKey(source))?.snapshot as LiveSnapshot<T> | undefined;
  }

  connection(): ConnectionSummary {
    let retrying = 0;
    let error: string | undefined;
    for (const live of this.lives.values()) {
      const c = live.snapshot.connection;
      if (c.state !== 'retrying') continue;
      retrying++;
      error ??= c.error;
    }
    return { watches: this.lives.size, retrying, error };
  }

  onConnectionChange(listener: () => void): () => void {
    this.connectionListeners.add(listener);
    return () => this.connectionListeners.delete(listener);
  }

  /** Stops every watch (at logout). */
  stopAll(): void {
    for (const live of this.lives.values()) {
      clearTimeout(live.lingerTimer);
      live.stop();
    }
    this.lives.clear();
    this.connectionListeners.clear();
  }

  private notifyConnection(): void {
    for (const listener of [...this.connectionListeners]) listener();
  }
}

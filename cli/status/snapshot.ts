/**
 * The objects `status` and `failures` look at — Clusters, Nodes, Instances,
 * Volumes and WorkItems of one namespace (or all) — read once, or kept
 * current by one list-then-watch loop per kind, the way an informer does:
 * watch from the list's resourceVersion, re-list when the watch ends or the
 * server answers 410 Gone. Every loop runs on the event loop (no locks);
 * each applied change is reported to `onChange` with the object before and
 * after, so a caller can both redraw and log what moved. A loop whose
 * list or watch fails keeps retrying with a backoff (1 s doubling to
 * MAX_RETRY_DELAY_MS), so a server restart is survived; meanwhile
 * `onConnection` is told the connection is lost (since when, the last
 * error: ConnectionLost), and told again once every loop lists again. A
 * namespace without a Cluster gets a note saying where to look instead
 * (missingClusterHint).
 */
import type { Cluster } from '../../api/cluster.js';
import type { Instance } from '../../api/instance.js';
import type { Node } from '../../api/node.js';
import { API_VERSION } from '../../api/types.js';
import type { Volume } from '../../api/volume.js';
import type { WorkItem } from '../../api/workitem.js';
import type { ResourceInfo } from '../client/catalog.js';
import type { ClientContext } from '../client/context.js';
import type { WatchHandle } from '../client/api-client.js';
import { listObjects, watchObjects, type ApiList, type ApiObject, type Selection } from '../client/watch.js';

/** The watches cannot reach the server: since when, and the last error. */
export interface ConnectionLost {
  since: Date;
  error: string;
}

/** The kinds `status` reads, by their key in StatusObjects. */
export const STATUS_KINDS = { clusters: 'Cluster', nodes: 'Node', instances: 'Instance', volumes: 'Volume', workItems: 'WorkItem' } as const;
/** A key of StatusObjects. */
export type StatusKey = keyof typeof STATUS_KINDS;

/** One read of every kind `status` shows. */
export interface StatusObjects {
  clusters: Cluster[];
  nodes: Node[];
  instances: Instance[];
  volumes: Volume[];
  workItems: WorkItem[];
}

/** Which namespace (Cluster) to read; undefined: every one (-A). */
export interface StatusScope {
  namespace?: string;
}

/** An object of one of those kinds. */
export type StatusObject = StatusObjects[StatusKey][number];

/** One applied change: `before` is undefined for a new object, `after` for a deleted one. */
export interface ObjectChange {
  key: StatusKey;
  before?: StatusObject;
  after?: StatusObject;
}

/** The first pause before a loop lists again after a failure; it doubles with each failure in a row. */
export const RETRY_AFTER_ERROR_MS = 1000;
/** The longest pause between retries. */
export const MAX_RETRY_DELAY_MS = 5000;

/** The pause after `failures` failures in a row. Pure. */
export function retryDelay(failures: number): number {
  return Math.min(MAX_RETRY_DELAY_MS, RETRY_AFTER_ERROR_MS * 2 ** Math.max(0, failures - 1));
}

/** Where an ObjectsWatcher lists and watches; tests script it. */
export interface ObjectsSource {
  list(r: ResourceInfo, sel: Selection): Promise<ApiList>;
  watch(r: ResourceInfo, sel: Selection, resourceVersion: string, onEvent: (type: string, obj: ApiObject) => void): Promise<WatchHandle>;
}

/** The optional parts of an ObjectsWatcher: connection reports, and the source, clock and pauses tests replace. */
export interface WatcherOptions {
  /** Called when the connection is lost (with since when and the last error) and when it is back (undefined). */
  onConnection?: (lost: ConnectionLost | undefined) => void;
  source?: ObjectsSource;
  now?: () => Date;
  sleep?: (ms: number) => Promise<void>;
}

// An unref'd timer: a pause in progress never holds the process open after stop().
const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms).unref());

function errorText(err: unknown): string {
  const e = err as { message?: unknown; code?: unknown } | undefined;
  const message = typeof e?.message === 'string' && e.message ? e.message : String(err);
  return typeof e?.code === 'string' && !message.includes(e.code) ? `${message} (${e.code})` : message;
}

function selection(r: ResourceInfo, scope: StatusScope): Selection {
  // A Cluster is cluster-scoped and named after its namespace.
  if (!r.namespaced) return { fieldSelector: scope.namespace ? `metadata.name=${scope.namespace}` : undefined };
  return { namespace: scope.namespace };
}

async function resources(ctx: ClientContext): Promise<Record<StatusKey, ResourceInfo>> {
  const catalog = await ctx.catalog();
  const entries = Object.entries(STATUS_KINDS).map(([key, kind]) => [key, catalog.forKind(API_VERSION, kind) ?? catalog.resolveOne(kind)]);
  return Object.fromEntries(entries) as Record<StatusKey, ResourceInfo>;
}

function objectKey(obj: ApiObject): string {
  return `${obj.metadata.namespace ?? ''}/${obj.metadata.name}`;
}

function byName(a: ApiObject, b: ApiObject): number {
  return objectKey(a).localeCompare(objectKey(b));
}

/** Reads every kind once. */
export async function loadObjects(ctx: ClientContext, scope: StatusScope): Promise<StatusObjects> {
  const infos = await resources(ctx);
  const keys = Object.keys(STATUS_KINDS) as StatusKey[];
  const lists = await Promise.all(keys.map((key) => listObjects(ctx, infos[key], selection(infos[key], scope))));
  return Object.fromEntries(keys.map((key, i) => [key, [...lists[i]!.items].sort(byName)])) as unknown as StatusObjects;
}

/** The names of every Cluster, sorted. */
export async function clusterNames(ctx: ClientContext): Promise<string[]> {
  const infos = await resources(ctx);
  const list = await listObjects(ctx, infos.clusters, {});
  return list.items.map((c) => c.metadata.name).sort();
}

/**
 * What to tell a user looking at namespace `namespace`, which has no Cluster,
 * given the Clusters that exist: where to look instead (a hint line on stderr).
 */
export function missingClusterNote(namespace: string, clusters: readonly string[]): string {
  const others = clusters.filter((c) => c !== namespace);
  if (others.length === 0) return `no Cluster "${namespace}", and there are no Clusters: create one with cairn apply -f`;
  const which = others.length === 1 ? `the Cluster is ${others[0]}` : `the Clusters are ${others.join(', ')}`;
  return `no Cluster "${namespace}"; ${which}: use -n NAME or -A`;
}

/**
 * The note for a scope whose namespace has no Cluster (`status` and
 * `failures` would otherwise report an empty namespace as all clear), or
 * undefined when it has one, with -A, or when the Clusters cannot be listed.
 */
export async function missingClusterHint(ctx: ClientContext, scope: StatusScope, clusters?: readonly Cluster[]): Promise<string | undefined> {
  const { namespace } = scope;
  if (namespace === undefined || (clusters && clusters.length > 0)) return undefined;
  const names = await clusterNames(ctx).catch(() => undefined);
  if (!names || names.includes(namespace)) return undefined;
  return missingClusterNote(namespace, names);
}

/** Keeps StatusObjects current from watches until stopped. */
export class ObjectsWatcher {
  private readonly stores = new Map<StatusKey, Map<string, ApiObject>>();
  private readonly watches = new Set<WatchHandle>();
  /** The kinds whose loop is failing: since when, and the last error. */
  private readonly failing = new Map<StatusKey, ConnectionLost>();
  private reported: ConnectionLost | undefined;
  private readonly source: ObjectsSource;
  private readonly now: () => Date;
  private readonly sleep: (ms: number) => Promise<void>;
  private stopped = false;

  constructor(
    private readonly ctx: ClientContext,
    private readonly scope: StatusScope,
    private readonly onChange: (change: ObjectChange) => void,
    private readonly opts: WatcherOptions = {},
  ) {
    this.source = opts.source ?? { list: (r, sel) => listObjects(ctx, r, sel), watch: (r, sel, rv, onEvent) => watchObjects(ctx, r, sel, rv, onEvent) };
    this.now = opts.now ?? (() => new Date());
    this.sleep = opts.sleep ?? realSleep;
  }

  /** Lists every kind (resolving once all are read), then follows each with a watch. */
  async start(): Promise<void> {
    const infos = await resources(this.ctx);
    const keys = Object.keys(STATUS_KINDS) as StatusKey[];
    const first = await Promise.all(keys.map((key) => this.relist(key, infos[key])));
    keys.forEach((key, i) => void this.follow(key, infos[key], first[i]!));
  }

  /** The current objects. */
  objects(): StatusObjects {
    const values = (key: StatusKey) => [...(this.stores.get(key)?.values() ?? [])].sort(byName);
    return Object.fromEntries((Object.keys(STATUS_KINDS) as StatusKey[]).map((key) => [key, values(key)])) as unknown as StatusObjects;
  }

  /** Ends every watch; no change is reported after this. */
  stop(): void {
    this.stopped = true;
    for (const w of this.watches) w.stop();
  }

  // Replaces a kind's store with a fresh list, reporting the differences; returns the list's resourceVersion.
  private async relist(key: StatusKey, r: ResourceInfo): Promise<string | undefined> {
    const list = await this.source.list(r, selection(r, this.scope));
    const previous = this.stores.get(key);
    const next = new Map(list.items.map((o) => [objectKey(o), o]));
    this.stores.set(key, next);
    // The first list is the starting state, not a change.
    if (this.stopped || !previous) return list.metadata.resourceVersion;
    for (const [k, before] of previous) if (!next.has(k)) this.report(key, before, undefined);
    for (const [k, after] of next) if (previous.get(k)?.metadata.resourceVersion !== after.metadata.resourceVersion) this.report(key, previous.get(k), after);
    return list.metadata.resourceVersion;
  }

  private async follow(key: StatusKey, r: ResourceInfo, resourceVersion: string | undefined): Promise<void> {
    let rv = resourceVersion;
    let failures = 0;
    while (!this.stopped) {
      const healthy = await this.watchOnce(key, r, rv).catch((err: unknown) => {
        this.failed(key, err);
        return false;
      });
      if (this.stopped) return;
      failures = healthy ? 0 : failures + 1;
      if (!healthy) await this.sleep(retryDelay(failures));
      if (this.stopped) return;
      try {
        rv = await this.relist(key, r);
        this.recovered(key);
      } catch (err) {
        rv = undefined;
        this.failed(key, err);
      }
    }
  }

  // The connection is lost while any loop fails: since the first of them failed.
  private failed(key: StatusKey, err: unknown): void {
    if (this.stopped) return;
    this.failing.set(key, { since: this.failing.get(key)?.since ?? this.now(), error: errorText(err) });
    this.reportConnection();
  }

  private recovered(key: StatusKey): void {
    if (this.stopped || !this.failing.delete(key)) return;
    this.reportConnection();
  }

  private reportConnection(): void {
    const lost = [...this.failing.values()].sort((a, b) => a.since.getTime() - b.since.getTime())[0];
    if (lost?.since.getTime() === this.reported?.since.getTime() && lost?.error === this.reported?.error) return;
    this.reported = lost && { ...lost };
    this.opts.onConnection?.(lost && { ...lost });
  }

  // One watch; resolves when it ends (true: closed normally, false: an error such as 410 Gone).
  private async watchOnce(key: StatusKey, r: ResourceInfo, rv: string | undefined): Promise<boolean> {
    if (rv === undefined) return false;
    let failed = false;
    let watch: WatchHandle | undefined;
    const onEvent = (type: string, obj: ApiObject) => {
      if (type === 'ERROR') {
        failed = true;
        watch?.stop();
      } else if (type !== 'BOOKMARK') this.apply(key, type, obj);
    };
    watch = await this.source.watch(r, selection(r, this.scope), rv, onEvent);
    this.watches.add(watch);
    try {
      if (this.stopped || failed) watch.stop();
      await watch.done;
      return !failed;
    } finally {
      this.watches.delete(watch);
    }
  }

  private apply(key: StatusKey, type: string, obj: ApiObject): void {
    if (this.stopped) return;
    const store = this.stores.get(key)!;
    const k = objectKey(obj);
    const before = store.get(k);
    if (type === 'DELETED') store.delete(k);
    else store.set(k, obj);
    this.report(key, before, type === 'DELETED' ? undefined : obj);
  }

  // The API's objects are the kinds' types (api/*.ts) as JSON.
  private report(key: StatusKey, before: ApiObject | undefined, after: ApiObject | undefined): void {
    this.onChange({ key, before: before as StatusObject | undefined, after: after as StatusObject | undefined });
  }
}

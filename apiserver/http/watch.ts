/**
 * WATCH (API.md "Watch"): newline-delimited JSON events over a chunked 200.
 * Served from the watch cache when the requested resourceVersion is inside
 * its window, else replayed from etcd (410 Expired when compacted, sent as
 * an ERROR event as kube does). Bookmarks (when allowed) or bare newlines
 * every keepalive interval (15 s by default; client-node gives up on a
 * stream after 30 s of silence) keep idle streams open; a client that reads
 * too slowly is cut off and re-watches.
 */
import type { ApiRequest as Request, ApiResponse as Response } from './context.js';
import { ApiError, expired, invalid, tooLargeResourceVersion, type StatusCause } from '../errors.js';
import type { ResourceDefinition } from '../resources.js';
import { partialObject, wantsPartialMetadata } from '../rest/partial-metadata.js';
import { toTable, wantsTable, type IncludeObject } from '../rest/table.js';
import type { Selection } from '../rest/selection.js';
import type { KubeObject } from '../storage/codec.js';
import { watchEtcd } from '../storage/direct-watch.js';
import type { WatchEvent } from '../storage/events.js';
import { scopePrefix } from '../storage/keys.js';
import type { Subscriber } from '../storage/resource-cache.js';
import type { ApiContext } from './context.js';
import { EventStream } from './event-stream.js';
import { bool, int, str, type Query } from './params.js';

const serialized = new WeakMap<KubeObject, string>();

/** The query parameters of a watch. */
interface WatchParams {
  fromRev: number;
  /** No resourceVersion: start from the most recent state, read consistently. */
  latest: boolean;
  /** Start with an ADDED event per object (a resourceVersion of 0 or none does, unless sendInitialEvents=false). */
  initialEvents: boolean;
  /** sendInitialEvents=true (a WatchList, client-go's streaming list): a bookmark marks the end of the initial events. */
  markInitialEnd: boolean;
  timeoutMs: number;
  bookmarks: boolean;
  table: boolean;
  /** Objects as PartialObjectMetadata of this meta.k8s.io version (a metadata-only informer). */
  partial: 'v1' | 'v1beta1' | undefined;
  include: IncludeObject;
}

/** The annotation of the bookmark that ends a WatchList's initial events, as kube sets it. */
const INITIAL_EVENTS_END = 'k8s.io/initial-events-end';

function watchParams(req: Request): WatchParams {
  const q = req.query as Query;
  const rv = str(q, 'resourceVersion');
  if (rv && !/^\d+$/.test(rv)) throw new ApiError(400, 'BadRequest', `resourceVersion: Invalid value: ${JSON.stringify(rv)}: must be a non-negative integer`);
  // Like kube, a watch without timeoutSeconds (or with 0) ends after a random 30-60 minutes, spreading
  // re-watches; a longer one is cut to an hour.
  const asked = int(q, 'timeoutSeconds');
  const timeoutS = asked ? Math.min(asked, 3600) : 1800 + Math.floor(Math.random() * 1800);
  const bookmarks = bool(q, 'allowWatchBookmarks');
  const sendInitialEvents = watchListParams(q, bookmarks);
  const fromRev = rv ? Number(rv) : 0;
  return {
    fromRev,
    latest: !rv,
    initialEvents: sendInitialEvents ?? fromRev === 0,
    markInitialEnd: sendInitialEvents === true,
    timeoutMs: timeoutS * 1000,
    bookmarks,
    table: wantsTable(req.headers.accept),
    partial: wantsPartialMetadata(req.headers.accept),
    include: (str(q, 'includeObject') ?? 'Metadata') as IncludeObject,
  };
}

// sendInitialEvents and resourceVersionMatch, checked as kube-apiserver checks a watch's ListOptions.
function watchListParams(q: Query, bookmarks: boolean): boolean | undefined {
  const raw = str(q, 'sendInitialEvents');
  const send = raw === undefined ? undefined : bool(q, 'sendInitialEvents');
  const match = str(q, 'resourceVersionMatch') ?? '';
  const causes: StatusCause[] = [];
  const forbidden = (field: string, message: string) => causes.push({ reason: 'FieldValueForbidden', field, message: `Forbidden: ${message}` });
  if (send !== undefined && match !== 'NotOlderThan') forbidden('resourceVersionMatch', 'sendInitialEvents requires setting resourceVersionMatch to NotOlderThan');
  if (match !== '' && send === undefined) forbidden('resourceVersionMatch', 'resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided');
  if (match !== '' && match !== 'NotOlderThan') causes.push({ reason: 'FieldValueNotSupported', field: 'resourceVersionMatch', message: `Unsupported value: ${JSON.stringify(match)}: supported values: "NotOlderThan"` });
  if (send === true && !bookmarks) forbidden('allowWatchBookmarks', 'allowWatchBookmarks must be set to true when sendInitialEvents is set to true');
  if (causes.length > 0) throw invalid('ListOptions', 'meta.k8s.io', '', causes);
  return send;
}

/** Streams a watch until the client leaves, the timeout passes, or the server stops. */
export async function serveWatch(ctx: ApiContext, req: Request, res: Response, def: ResourceDefinition, ns: string | undefined, sel: Selection): Promise<void> {
  const p = watchParams(req);
  if (p.latest) await ctx.cache.waitFresh(1000);
  // A WatchList's initial state is at least as new as the version asked for (NotOlderThan).
  if (p.initialEvents && p.fromRev > 0) await waitUntilServed(ctx, p.fromRev);
  if (res.destroyed || res.writableEnded) return; // the client left while we waited
  let lastRev = p.fromRev;
  let viaCache = true;
  const bookmarkOf = (rev: number, annotations?: Record<string, string>) => (p.partial ? partialObject(bookmark(def, rev, annotations) as KubeObject, p.partial) : bookmark(def, rev, annotations));
  const stream = new EventStream(res, {
    keepaliveMs: ctx.watchKeepaliveMs,
    timeoutMs: p.timeoutMs,
    budget: ctx.watchBudget,
    keepaliveLine: () => {
      // Every event up to the cache's revision has been dispatched, so that revision is a safe bookmark.
      const rev = Math.max(lastRev, viaCache ? ctx.cache.revision : 0);
      return p.bookmarks && rev > 0 ? JSON.stringify({ type: 'BOOKMARK', object: bookmarkOf(rev) }) + '\n' : '\n';
    },
  });
  const closer = () => stream.close();
  ctx.watches.add(closer);
  stream.onClose(() => ctx.watches.delete(closer));
  const write = (ev: WatchEvent) => {
    const object = p.table ? JSON.stringify(toTable(def, [ev.object], { resourceVersion: String(ev.rev) }, p.include, Date.now())) : p.partial ? JSON.stringify(partialObject(ev.object, p.partial)) : objectJson(ev.object);
    stream.write(`{"type":"${ev.type}","object":${object}}\n`);
  };
  // Against the start only: one revision may change several objects (a lease's expiry deletes all its Events at
  // once), and each of them is an event; lastRev only dates the bookmarks.
  const send = (ev: WatchEvent) => {
    if (ev.rev <= p.fromRev) return;
    lastRev = Math.max(lastRev, ev.rev);
    write(ev);
  };
  const cache = ctx.cache.forResource(def);
  const sub: Subscriber = { matches: sel.matches, onEvent: send, onClose: () => stream.close(), indexedBy: sel.exact };
  if (p.initialEvents || p.fromRev === 0) {
    const start = ctx.cache.revision;
    // Every object is sent, whatever its version: a WatchList's may be older than the one asked for, and
    // the list is in key order, not in version order.
    if (p.initialEvents) stream.initial(() => { for (const obj of cache.list(sel.matches, sel.exact)) write({ type: 'ADDED', object: obj, rev: Number(obj.metadata.resourceVersion) }); });
    if (p.markInitialEnd) stream.write(`${JSON.stringify({ type: 'BOOKMARK', object: bookmarkOf(start, { [INITIAL_EVENTS_END]: 'true' }) })}\n`);
    lastRev = start;
    cache.subscribe(sub, start);
    stream.onClose(() => cache.unsubscribe(sub));
  } else if (p.fromRev > ctx.cache.revision && (await fromAnotherStore(ctx, p.fromRev))) {
    sendError(stream, expired(`resourceVersion ${p.fromRev} is newer than this store's revision: the store was restored (docs/restore.md); list again`));
  } else if (stream.initial(() => cache.subscribe(sub, p.fromRev))) {
    stream.onClose(() => cache.unsubscribe(sub));
  } else {
    viaCache = false;
    await watchFromEtcd(ctx, stream, def, ns, p.fromRev, sel, send);
  }
}

// A version older than the cache's window is replayed from etcd; a compacted one ends in an ERROR event.
async function watchFromEtcd(ctx: ApiContext, stream: EventStream, def: ResourceDefinition, ns: string | undefined, fromRev: number, sel: Selection, send: (ev: WatchEvent) => void): Promise<void> {
  try {
    const direct = await watchEtcd(ctx.etcd, scopePrefix(def, ns), fromRev, sel.matches, send, () => stream.close());
    stream.onClose(() => void direct.stop());
  } catch (err) {
    sendError(stream, err instanceof ApiError ? err : new ApiError(500, 'InternalError', String(err)));
  }
}

/** Ends the stream with an ERROR event, as kube does for a watch it cannot serve. */
function sendError(stream: EventStream, err: ApiError): void {
  stream.write(JSON.stringify({ type: 'ERROR', object: err.toStatus() }) + '\n');
  stream.close();
}

/**
 * Whether a resourceVersion ahead of the cache is ahead of etcd too: no client got it from this store,
 * so it holds it from a store that was lost and restored (docs/restore.md). Waiting for etcd to reach it
 * would leave the watch silent, and then resume it from a revision of another history: 410 makes the
 * client list again. A version the cache merely has not caught up with yet is waited for, as before.
 */
async function fromAnotherStore(ctx: ApiContext, rev: number): Promise<boolean> {
  if (await ctx.cache.waitForRevision(rev, 1000)) return false;
  return rev > (await ctx.etcd.currentRevision());
}

function objectJson(obj: KubeObject): string {
  let s = serialized.get(obj);
  if (s === undefined) serialized.set(obj, (s = JSON.stringify(obj)));
  return s;
}

function bookmark(def: ResourceDefinition, rev: number, annotations?: Record<string, string>): Record<string, unknown> {
  return { kind: def.kind, apiVersion: def.group ? `${def.group}/${def.version}` : def.version, metadata: { resourceVersion: String(rev), ...(annotations ? { annotations } : {}) } };
}

// A WatchList from a version the cache has not reached waits for it, as kube's does (504 if it never comes).
async function waitUntilServed(ctx: ApiContext, rev: number): Promise<void> {
  if (await ctx.cache.waitForRevision(rev, 3000)) return;
  throw tooLargeResourceVersion(rev, ctx.cache.revision);
}

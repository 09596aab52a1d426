/**
 * WATCH (API.md "Watch"): newline-delimited JSON events over a chunked 200.
 * Served from the watch cache when the requested resourceVersion is inside
 * its window, else replayed from etcd (410 Expired when compacted, sent as
 * an ERROR event as kube does). Bookmarks (when allowed) or bare newlines
 * every keepalive interval (15 s by default; client-node gives up on a
 * stream after 30 s of silence) keep idle streams open; a client that reads
 * too slowly is cut off and re-watches.
 */
import type { Request, Response } from 'express';
import { ApiError } from '../errors.js';
import type { ResourceDefinition } from '../resources.js';
import { toTable, wantsTable, type IncludeObject } from '../rest/table.js';
import type { Selection } from '../rest/selection.js';
import type { KubeObject } from '../storage/codec.js';
import { watchEtcd } from '../storage/direct-watch.js';
import type { WatchEvent } from '../storage/events.js';
import { scopePrefix } from '../storage/keys.js';
import type { Subscriber } from '../storage/resource-cache.js';
import type { ApiContext } from './context.js';
import { bool, int, str, type Query } from './params.js';

const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;
const FLUSH_MS = 5;
const serialized = new WeakMap<KubeObject, string>();

/** Streams a watch until the client leaves, the timeout passes, or the server stops. */
export async function serveWatch(ctx: ApiContext, req: Request, res: Response, def: ResourceDefinition, ns: string | undefined, sel: Selection): Promise<void> {
  const q = req.query as Query;
  const rvParam = str(q, 'resourceVersion');
  const fromRev = rvParam ? Number(rvParam) : 0;
  if (rvParam && !/^\d+$/.test(rvParam)) throw new ApiError(400, 'BadRequest', `resourceVersion: Invalid value: ${JSON.stringify(rvParam)}: must be a non-negative integer`);
  const timeoutS = int(q, 'timeoutSeconds') ?? 1800 + Math.floor(Math.random() * 1800);
  const bookmarks = bool(q, 'allowWatchBookmarks');
  const table = wantsTable(req.headers.accept);
  const include = (str(q, 'includeObject') ?? 'Metadata') as IncludeObject;
  const cache = ctx.cache.forResource(def);
  if (!rvParam) await ctx.cache.waitFresh(1000);

  res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
  res.flushHeaders();
  let lastRev = fromRev;
  let closed = false;
  let pending: string[] = [];
  let stopSource: () => void = () => undefined;
  const finish = () => {
    if (closed) return;
    closed = true;
    clearInterval(keepalive);
    clearTimeout(timer);
    stopSource();
    ctx.watches.delete(finish);
    res.end(pending.join(''));
    pending = [];
  };
  // Lines are gathered for up to FLUSH_MS and written together: under load one
  // TLS write carries many events instead of one write (and syscall) each,
  // for at most a few milliseconds of added latency.
  const flush = () => {
    const chunk = pending.join('');
    pending = [];
    if (closed || chunk === '') return;
    res.write(chunk);
    if (res.writableLength > MAX_BUFFERED_BYTES) finish();
  };
  const write = (line: string) => {
    if (closed) return;
    if (pending.push(line) === 1) setTimeout(flush, FLUSH_MS);
  };
  const send = (ev: WatchEvent) => {
    if (ev.rev <= lastRev && fromRev > 0) return;
    lastRev = Math.max(lastRev, ev.rev);
    const object = table ? JSON.stringify(toTable(def, [ev.object], { resourceVersion: String(ev.rev) }, include, Date.now())) : objectJson(ev.object);
    write(`{"type":"${ev.type}","object":${object}}\n`);
  };
  const keepalive = setInterval(() => {
    const rev = Math.max(lastRev, viaCache ? ctx.cache.revision : 0);
    if (bookmarks && rev > 0) write(JSON.stringify({ type: 'BOOKMARK', object: bookmark(def, rev) }) + '\n');
    else write('\n');
  }, ctx.watchKeepaliveMs);
  const timer = setTimeout(finish, timeoutS * 1000);
  res.on('close', finish);
  ctx.watches.add(finish);

  const sub: Subscriber = { matches: sel.matches, onEvent: send, onClose: finish, indexedBy: sel.exact };
  let viaCache = true;
  if (fromRev === 0) {
    const start = ctx.cache.revision;
    for (const obj of cache.list(sel.matches, sel.exact)) send({ type: 'ADDED', object: obj, rev: Number(obj.metadata.resourceVersion) });
    lastRev = start;
    cache.subscribe(sub, start);
    stopSource = () => cache.unsubscribe(sub);
  } else if (cache.subscribe(sub, fromRev)) {
    stopSource = () => cache.unsubscribe(sub);
  } else {
    viaCache = false;
    try {
      const direct = await watchEtcd(ctx.etcd, scopePrefix(def, ns), fromRev, sel.matches, send, finish);
      if (closed) void direct.stop();
      else stopSource = () => void direct.stop();
    } catch (err) {
      const apiErr = err instanceof ApiError ? err : new ApiError(500, 'InternalError', String(err));
      write(JSON.stringify({ type: 'ERROR', object: apiErr.toStatus() }) + '\n');
      finish();
    }
  }
}

function objectJson(obj: KubeObject): string {
  let s = serialized.get(obj);
  if (s === undefined) serialized.set(obj, (s = JSON.stringify(obj)));
  return s;
}

function bookmark(def: ResourceDefinition, rev: number): Record<string, unknown> {
  return { kind: def.kind, apiVersion: def.group ? `${def.group}/${def.version}` : def.version, metadata: { resourceVersion: String(rev) } };
}

/**
 * Following objects as they change, through the client's watch: a list
 * gives the starting state and resourceVersion, a watch from there the
 * changes. `waitFor` is what `wait`, `delete --wait` and `drain --wait`
 * share: level-triggered (the condition is checked on the current state
 * first), with a deadline, re-listing when the watch ends early (after a
 * pause when it ended within a second, so a refused watch does not spin).
 */
import { collectionPath, qualifiedName, type ResourceInfo } from './catalog.js';
import type { WatchHandle } from './api-client.js';
import type { ClientContext } from './context.js';
import { CliError } from './errors.js';
import { eachPage } from '../../api/client/pages.js';

/** An object as the API returns it. */
export interface ApiObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string; generation?: number; [k: string]: unknown };
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
  [k: string]: unknown;
}

/** A list response. */
export interface ApiList {
  metadata: { resourceVersion?: string; continue?: string };
  items: ApiObject[];
}

/** Selectors of a list or watch. */
export interface Selection {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** Every page of a collection, following continue tokens (`headers`: e.g. an Accept asking for Tables). */
export async function listPages<P extends { metadata?: { continue?: string } }>(
  ctx: ClientContext,
  r: ResourceInfo,
  sel: Selection,
  headers?: Record<string, string>,
): Promise<P[]> {
  const query = { labelSelector: sel.labelSelector, fieldSelector: sel.fieldSelector };
  const pages: P[] = [];
  for await (const page of eachPage<P>(ctx.rest, collectionPath(r, sel.namespace), { query, ...(headers ? { headers } : {}) })) pages.push(page);
  return pages;
}

/** Lists a collection (every page; the first page's resourceVersion). */
export async function listObjects(ctx: ClientContext, r: ResourceInfo, sel: Selection): Promise<ApiList> {
  const pages = await listPages<ApiList>(ctx, r, sel);
  return { metadata: { resourceVersion: pages[0]!.metadata.resourceVersion }, items: pages.flatMap((p) => p.items) };
}

/**
 * Watches a collection from `resourceVersion`, calling `onEvent(type, object)` for each change;
 * `headers` go with the request (an Accept asking for Table events).
 */
export async function watchObjects(
  ctx: ClientContext,
  r: ResourceInfo,
  sel: Selection,
  resourceVersion: string | undefined,
  onEvent: (type: string, obj: ApiObject) => void,
  headers?: Record<string, string>,
): Promise<WatchHandle> {
  const query = { labelSelector: sel.labelSelector, fieldSelector: sel.fieldSelector, resourceVersion, allowWatchBookmarks: true };
  return ctx.rest.watch(collectionPath(r, sel.namespace), query, (type, obj) => onEvent(type, obj as ApiObject), headers);
}

/**
 * Resolves once `ready(obj)` holds for the named object (obj undefined once it
 * is gone); throws a CliError naming `what` after `timeoutMs`.
 */
export async function waitFor(
  ctx: ClientContext,
  r: ResourceInfo,
  namespace: string | undefined,
  name: string,
  ready: (obj: ApiObject | undefined) => boolean,
  opts: { timeoutMs: number; what: string },
): Promise<ApiObject | undefined> {
  const deadline = Date.now() + opts.timeoutMs;
  const sel = { namespace: r.namespaced ? namespace : undefined, fieldSelector: `metadata.name=${name}` };
  for (;;) {
    const list = await listObjects(ctx, r, sel);
    if (ready(list.items[0])) return list.items[0];
    const left = deadline - Date.now();
    if (left <= 0) break;
    const started = Date.now();
    const round = await watchUntil(ctx, r, sel, list.metadata.resourceVersion, ready, left);
    if (round.outcome === 'ready') return round.obj;
    if (round.outcome === 'timeout') break;
    const pause = rewatchDelay(Date.now() - started, deadline - Date.now());
    if (pause > 0) await new Promise((resolve) => setTimeout(resolve, pause));
  }
  throw new CliError(`timed out waiting for ${opts.what} on ${qualifiedName(r)}/${name}`, 'raise --timeout, or look at the object with cairn describe');
}

/** How long a watch round must last not to count as ended at once. */
export const QUICK_END_MS = 1000;
/** The pause before re-listing after a watch round that ended at once. */
export const REWATCH_DELAY_MS = 1000;

/**
 * The pause before the next list-and-watch of waitFor, after a watch round
 * that lasted `lastedMs` with `leftMs` to the deadline: a watch refused at
 * once (a 403, a server going down) must not spin until the deadline. Pure.
 */
export function rewatchDelay(lastedMs: number, leftMs: number): number {
  if (lastedMs >= QUICK_END_MS) return 0;
  return Math.max(0, Math.min(REWATCH_DELAY_MS, leftMs));
}

interface WatchRound {
  outcome: 'ready' | 'timeout' | 'ended';
  obj?: ApiObject;
}

// One watch from `resourceVersion`: ends when `ready` holds, the time is up, or the server closes the watch.
function watchUntil(
  ctx: ClientContext,
  r: ResourceInfo,
  sel: Selection,
  resourceVersion: string | undefined,
  ready: (obj: ApiObject | undefined) => boolean,
  timeoutMs: number,
): Promise<WatchRound> {
  return new Promise((resolve) => {
    let handle: WatchHandle | undefined;
    let result: WatchRound | undefined;
    const finish = (round: WatchRound) => {
      if (result) return;
      result = round;
      clearTimeout(timer);
      handle?.stop();
      resolve(round);
    };
    const timer = setTimeout(() => finish({ outcome: 'timeout' }), timeoutMs);
    const onEvent = (type: string, obj: ApiObject) => {
      const current = type === 'DELETED' ? undefined : obj;
      if (type !== 'BOOKMARK' && ready(current)) finish({ outcome: 'ready', obj: current });
    };
    watchObjects(ctx, r, sel, resourceVersion, onEvent).then(
      (h) => {
        handle = h;
        if (result) h.stop();
        const ended = () => finish({ outcome: 'ended' });
        h.done.then(ended, ended);
      },
      () => finish({ outcome: 'ended' }),
    );
  });
}

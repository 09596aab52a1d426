/**
 * Following objects as they change, through client-node's Watch: a list
 * gives the starting state and resourceVersion, a watch from there the
 * changes. `waitFor` is what `wait`, `delete --wait` and `drain --wait`
 * share: level-triggered (the condition is checked on the current state
 * first), with a deadline, re-listing when the watch ends early.
 */
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { collectionPath, qualifiedName, type ResourceInfo } from './catalog.js';
import type { ClientContext } from './context.js';
import { CliError } from './errors.js';

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

/** Lists a collection (every page). */
export async function listObjects(ctx: ClientContext, r: ResourceInfo, sel: Selection): Promise<ApiList> {
  const path = collectionPath(r, sel.namespace);
  const query = { labelSelector: sel.labelSelector, fieldSelector: sel.fieldSelector, limit: 500 };
  const first = await ctx.rest.request<ApiList>('GET', path, { query });
  const items = [...first.items];
  for (let token = first.metadata.continue; token; ) {
    const page = await ctx.rest.request<ApiList>('GET', path, { query: { ...query, continue: token } });
    items.push(...page.items);
    token = page.metadata.continue;
  }
  return { metadata: { resourceVersion: first.metadata.resourceVersion }, items };
}

/** A running watch; `stop()` ends it, `done` settles when it ends for any reason. */
export interface WatchHandle {
  stop(): void;
  done: Promise<void>;
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
  let settle!: (err?: unknown) => void;
  const done = new Promise<void>((resolve, reject) => (settle = (err) => (err ? reject(err) : resolve())));
  const query = { labelSelector: sel.labelSelector, fieldSelector: sel.fieldSelector, resourceVersion, allowWatchBookmarks: true };
  const abort = await new Watch(headers ? withHeaders(ctx.kc, headers) : ctx.kc).watch(collectionPath(r, sel.namespace), query, (type, obj) => onEvent(type, obj as ApiObject), (err) => settle(isAbort(err) ? undefined : err));
  return { stop: () => abort.abort(), done };
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
    const round = await watchUntil(ctx, r, sel, list.metadata.resourceVersion, ready, left);
    if (round.outcome === 'ready') return round.obj;
    if (round.outcome === 'timeout') break;
  }
  throw new CliError(`timed out waiting for ${opts.what} on ${qualifiedName(r)}/${name}`, 'raise --timeout, or look at the object with cairn describe');
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

// client-node's Watch takes its request options from the KubeConfig only, so extra headers go in there.
function withHeaders(kc: KubeConfig, headers: Record<string, string>): KubeConfig {
  const applyToFetchOptions: KubeConfig['applyToFetchOptions'] = (opts) => kc.applyToFetchOptions({ ...opts, headers: { ...opts.headers, ...headers } });
  return Object.assign(Object.create(kc) as KubeConfig, { applyToFetchOptions });
}

function isAbort(err: unknown): boolean {
  return !err || (err as Error).name === 'AbortError';
}

/**
 * List-then-watch, the way an informer does it: list the collection, then
 * watch from the list's resourceVersion, reading the NDJSON body of a
 * fetch as it streams. A 410 Gone (as a status or as an ERROR event), a
 * dropped stream or any failure leads to a fresh list and a new watch, after
 * a backoff that doubles from 1 s to 30 s while the failures last.
 */
import type { WatchEvent } from '../state/store';
import { type Api, ApiError, errorText } from './http';
import { NdjsonDecoder } from './ndjson';
import { type KubeList, type KubeObject, query } from './paths';

/**
 * Where a list-then-watch loop stands. `retrying` is a connection problem
 * that should pass; `refused` is the server saying no (401, 403, 404),
 * which waiting alone will not fix (the loop still tries again now and then,
 * since permissions can be granted).
 */
export type ConnectionState = { state: 'connecting' } | { state: 'live' } | { state: 'retrying' | 'refused'; error: string; status?: number };

const REFUSALS = new Set([401, 403, 404]);

export interface InformerHandlers<T extends KubeObject> {
  /** A full list: replaces everything known so far. */
  onList(items: T[], resourceVersion: string): void;
  /** Events read off the watch, in stream order (one call per network chunk). */
  onEvents(events: WatchEvent<T>[]): void;
  onConnection(state: ConnectionState): void;
}

export interface InformerOptions {
  /** The collection path, e.g. /apis/cairn.dev/v1alpha1/instances. */
  path: string;
  fieldSelector?: string;
  /** The first pause after a failure (doubling up to maxRetryMs); tests shorten it. */
  firstRetryMs?: number;
  maxRetryMs?: number;
}

/** A watch that ended as quickly as this is treated as a failure, so a misbehaving server is not hammered. */
const SHORT_WATCH_MS = 2000;

/** Starts the loop; the returned function stops it (aborting the open request). */
export function startInformer<T extends KubeObject>(api: Api, options: InformerOptions, handlers: InformerHandlers<T>): () => void {
  const control = new AbortController();
  void runLoop(api, options, handlers, control.signal);
  return () => control.abort();
}

async function runLoop<T extends KubeObject>(api: Api, options: InformerOptions, handlers: InformerHandlers<T>, signal: AbortSignal): Promise<void> {
  const firstRetryMs = options.firstRetryMs ?? 1000;
  const maxRetryMs = options.maxRetryMs ?? 30_000;
  let retryMs = firstRetryMs;
  handlers.onConnection({ state: 'connecting' });
  while (!signal.aborted) {
    try {
      const list = await api.json<KubeList<T>>('GET', options.path + query({ fieldSelector: options.fieldSelector }), { signal });
      const rv = list.metadata.resourceVersion ?? '0';
      handlers.onList(list.items, rv);
      handlers.onConnection({ state: 'live' });
      const started = Date.now();
      await watchOnce(api, options, rv, handlers, signal);
      if (Date.now() - started > SHORT_WATCH_MS) retryMs = firstRetryMs;
      else await pause(retryMs, signal); // an immediately ended watch: back off before listing again
    } catch (err) {
      if (signal.aborted) return;
      const status = err instanceof ApiError ? err.status : undefined;
      handlers.onConnection({ state: status !== undefined && REFUSALS.has(status) ? 'refused' : 'retrying', error: errorText(err), status });
      await pause(retryMs, signal);
      retryMs = Math.min(retryMs * 2, maxRetryMs);
    }
  }
}

/** Reads one watch to its end. Resolves when the server ends it (or says 410 Gone: relist); rejects on failures. */
async function watchOnce<T extends KubeObject>(api: Api, options: InformerOptions, rv: string, handlers: InformerHandlers<T>, signal: AbortSignal): Promise<void> {
  const path = options.path + query({ watch: 'true', resourceVersion: rv, allowWatchBookmarks: 'true', fieldSelector: options.fieldSelector });
  let res: Response;
  try {
    res = await api.stream(path, signal);
  } catch (err) {
    if (err instanceof ApiError && err.status === 410) return; // expired: the caller lists again
    throw err;
  }
  if (!res.body) throw new Error('the browser gave no response stream for the watch');
  const reader = res.body.getReader();
  const decoder = new NdjsonDecoder<WatchEvent<T>>();
  for (;;) {
    const { done, value } = await reader.read();
    const events = done ? decoder.end() : decoder.push(value);
    const stop = deliver(events, handlers);
    if (stop) {
      await reader.cancel().catch(() => undefined);
      return;
    }
    if (done) return;
  }
}

// Hands events over up to an ERROR event; true when the watch must end there (410 Gone or another error).
function deliver<T extends KubeObject>(events: WatchEvent<T>[], handlers: InformerHandlers<T>): boolean {
  const failed = events.findIndex((e) => e.type === 'ERROR');
  const good = failed < 0 ? events : events.slice(0, failed);
  if (good.length > 0) handlers.onEvents(good);
  if (failed < 0) return false;
  const status = events[failed]!.object as { code?: number; message?: string };
  if (status.code === 410) return true;
  throw new ApiError(status.code ?? 500, status.message ?? 'the watch failed');
}

// The abort listener goes with the timer: left on the informer's long-lived signal, one piled up per retry.
function pause(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

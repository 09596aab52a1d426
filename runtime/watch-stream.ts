/**
 * One watch request, cancellable from the moment it is sent. client-node's
 * Watch hands out its AbortController only once the response headers are in:
 * a watch sent over a connection that never answers (an apiserver hung or a
 * middlebox that stopped forwarding but still acknowledges) cannot be given
 * up, and its socket stays taken out of the pooled agent's 64 for good, until
 * every request of the process queues behind such leftovers.
 */
import http from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';
import type { KubeConfig } from '@kubernetes/client-node';
import { requestUrl } from '../api/client/http-exchange.js';

/** Called per watch event: its type (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) and object. */
export type WatchEventHandler = (type: string, object: any) => void; // eslint-disable-line @typescript-eslint/no-explicit-any

/** Watches of one apiserver, with the connection settings and credentials of a KubeConfig. */
export class WatchStream {
  constructor(private readonly config: KubeConfig) {}

  /**
   * Streams the events of `path` to `onEvent` until the response ends (`done(null)`), fails or is
   * refused (`done(err)`, err.statusCode for a refusal), or `signal` aborts it (`done` with an
   * AbortError) — before the headers came or after. `done` is called once.
   */
  async watch(path: string, query: Record<string, string | number | boolean | undefined>, onEvent: WatchEventHandler, done: (err: unknown) => void, signal: AbortSignal): Promise<void> {
    const cluster = this.config.getCurrentCluster();
    if (!cluster) throw new Error('the kubeconfig has no current cluster');
    const url = requestUrl(cluster.server, path, { watch: true, ...query });
    const options: https.RequestOptions = {};
    await this.config.applyToHTTPSOptions(options);
    let finished = false;
    let req: http.ClientRequest | undefined;
    // The abort settles at once and destroys the request: one still queued for a socket of a full pool
    // would error only once it got one, were the signal handed to http.request.
    const onAbort = () => finish(signal.reason);
    const finish = (err: unknown) => {
      if (finished) return;
      finished = true;
      signal.removeEventListener('abort', onAbort);
      req?.destroy();
      done(signal.aborted ? signal.reason : err);
    };
    if (signal.aborted) return finish(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    const request = url.protocol === 'http:' ? http.request : https.request;
    req = request(url, { ...options, method: 'GET' }, (res) => {
      res.on('error', finish);
      if (res.statusCode !== 200) {
        res.resume();
        return finish(Object.assign(new Error(`watch ${path}: ${res.statusCode} ${res.statusMessage ?? ''}`.trim()), { statusCode: res.statusCode }));
      }
      const lines = createInterface({ input: res, crlfDelay: Infinity });
      lines.on('error', finish); // readline passes on the response's errors
      lines.on('line', (line) => {
        if (finished || !line.trim()) return;
        let event: { type?: unknown; object?: unknown } | null;
        try {
          event = JSON.parse(line) as typeof event;
        } catch {
          event = null;
        }
        if (typeof event !== 'object' || event === null) return finish(new Error(`watch ${path}: a line that is not a JSON event: ${line.slice(0, 200)}`));
        try {
          onEvent(String(event.type), event.object);
        } catch (err) {
          finish(err);
        }
      });
      lines.on('close', () => finish(res.complete ? null : new Error(`watch ${path}: the response was cut off`)));
    });
    req.on('error', finish);
    // As client-node does: a peer gone without a word (a host down) is found by TCP within minutes.
    req.on('socket', (socket) => socket.setKeepAlive(true, 30_000));
    req.end();
  }
}

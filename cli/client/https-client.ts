/**
 * An ApiClient over Node's own https (http for a server run with
 * --insecure-http), for the kubeconfigs kubeconfig-file.ts reads: a bearer
 * token and the cluster's CA. It sends what client-node's RestClient and
 * Watch send (the same URL, headers and body) through one keep-alive
 * agent, and fails the same way: an HTTP error as ApiStatusError from the
 * Status the server returned, a network error as `request to URL failed,
 * reason: ...` carrying the system error code (ECONNREFUSED...), a refused
 * watch as an error with the status text and `statusCode`.
 *
 * Concurrency: requests run in parallel over the agent's pool; each watch
 * holds a connection of its own until it is stopped or the server ends it.
 */
import fs from 'node:fs';
import http, { STATUS_CODES } from 'node:http';
import https from 'node:https';
import { createInterface } from 'node:readline';
import { jsonBody, jsonHeaders, requestUrl, send, type RestRequest } from '../../api/client/http-exchange.js';
import type { ApiClient, ClusterInfo, HttpMethod, Query, RawConnection, WatchHandle } from './api-client.js';
import type { HttpsSettings } from './kubeconfig-file.js';

/** An ApiClient over node:https. */
export class HttpsClient implements ApiClient {
  readonly cluster: ClusterInfo;
  private readonly agent: http.Agent;
  private readonly token: string | undefined;
  private readonly tls: RawConnection['tls'];

  constructor(settings: HttpsSettings) {
    const { tlsServerName, ...cluster } = settings.cluster;
    this.cluster = cluster;
    this.token = settings.token;
    // As client-node: the CA file wins over the inline data; certificates are verified unless the kubeconfig says not to.
    const ca = cluster.caFile ? fs.readFileSync(cluster.caFile) : cluster.caData ? Buffer.from(cluster.caData, 'base64') : undefined;
    const tls = { ca, servername: tlsServerName, ...(cluster.skipTLSVerify ? { rejectUnauthorized: false } : {}) };
    this.tls = tls;
    this.agent = cluster.server.startsWith('https:') ? new https.Agent({ keepAlive: true, maxSockets: 64, ...tls }) : new http.Agent({ keepAlive: true, maxSockets: 64 });
  }

  async request<T = Record<string, unknown>>(method: HttpMethod, path: string, req: RestRequest = {}): Promise<T> {
    const { headers, body } = jsonHeaders(req);
    return jsonBody<T>(await this.send(method, requestUrl(this.cluster.server, path, req.query), headers, body));
  }

  async watch(path: string, query: Query, onEvent: (type: string, obj: unknown) => void, headers: Record<string, string> = {}): Promise<WatchHandle> {
    let res: http.IncomingMessage;
    try {
      res = await this.send('GET', requestUrl(this.cluster.server, path, { watch: true, ...query }), headers);
    } catch (err) {
      return ended(err);
    }
    if (res.statusCode !== 200) {
      res.resume();
      const status = res.statusCode ?? 500;
      return ended(Object.assign(new Error(res.statusMessage || STATUS_CODES[status] || 'Internal Server Error'), { statusCode: status }));
    }
    res.socket.setKeepAlive(true, 30_000);
    let settle!: (err?: unknown) => void;
    const done = new Promise<void>((resolve, reject) => (settle = (err) => (err ? reject(err) : resolve())));
    let finished = false;
    const finish = (err?: unknown) => {
      if (finished) return;
      finished = true;
      res.destroy();
      settle(err);
    };
    const lines = createInterface({ input: res, crlfDelay: Infinity });
    lines.on('line', (line) => {
      let event: { type: string; object: unknown };
      try {
        event = JSON.parse(line) as typeof event;
      } catch {
        return; // as client-node: a line that is not JSON is skipped
      }
      try {
        onEvent(event.type, event.object);
      } catch (err) {
        finish(err);
      }
    });
    // readline passes its input's errors on (a response cut off: the server killed, a slow watcher cut
    // off): without a listener there, the CLI died of an uncaught 'error' instead of listing again.
    lines.on('error', (err) => finish(err));
    lines.on('close', () => finish());
    res.on('error', (err) => finish(err));
    return { stop: () => finish(), done };
  }

  rawConnection(): Promise<RawConnection> {
    const headers: Record<string, string> = this.token ? { Authorization: `Bearer ${this.token}` } : {};
    return Promise.resolve({ server: this.cluster.server, tls: this.tls, headers });
  }

  close(): void {
    this.agent.destroy();
  }

  private send(method: HttpMethod, url: URL, headers: Record<string, string>, body?: string): Promise<http.IncomingMessage> {
    return send(url, { method, headers: { ...headers, ...(this.token ? { Authorization: `Bearer ${this.token}` } : {}) }, agent: this.agent }, body);
  }
}

// A watch that could not start: resolves as client-node's does, its `done` carrying the failure.
function ended(err: unknown): WatchHandle {
  return { stop: () => undefined, done: Promise.reject(err) };
}

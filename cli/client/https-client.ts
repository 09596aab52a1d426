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
import { toApiError } from '../../api/client/errors.js';
import type { RestRequest } from '../../api/client/rest-client.js';
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
    const body = req.body === undefined ? undefined : typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
    const headers: Record<string, string> = { Accept: 'application/json', ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...req.headers };
    const res = await this.send(method, this.url(path, req.query), headers, body);
    const status = res.statusCode ?? 0;
    if (status < 200 || status > 299) throw await refusal(res);
    const text = await readAll(res);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  async watch(path: string, query: Query, onEvent: (type: string, obj: unknown) => void, headers: Record<string, string> = {}): Promise<WatchHandle> {
    let res: http.IncomingMessage;
    try {
      res = await this.send('GET', this.url(path, { watch: true, ...query }), headers);
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

  // The server's URL and the path, then the query in order, as client-node builds it.
  private url(path: string, query: Query = {}): URL {
    const url = new URL(this.cluster.server + path);
    for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
    return url;
  }

  private send(method: HttpMethod, url: URL, headers: Record<string, string>, body?: string): Promise<http.IncomingMessage> {
    const all = { ...headers, ...(this.token ? { Authorization: `Bearer ${this.token}` } : {}), ...(body !== undefined ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}) };
    return new Promise((resolve, reject) => {
      const req = (url.protocol === 'https:' ? https : http).request(url, { method, headers: all, agent: this.agent }, resolve);
      req.on('error', (err: NodeJS.ErrnoException) => reject(Object.assign(new Error(`request to ${url.href} failed, reason: ${err.message}`), { code: err.code, cause: err })));
      req.end(body);
    });
  }
}

// A watch that could not start: resolves as client-node's does, its `done` carrying the failure.
function ended(err: unknown): WatchHandle {
  return { stop: () => undefined, done: Promise.reject(err) };
}

/** The error an HTTP refusal stands for: an ApiStatusError carrying the Status the server sent. */
export async function refusal(res: http.IncomingMessage): Promise<unknown> {
  const status = res.statusCode ?? 0;
  const body = await readAll(res).catch(() => '');
  return toApiError(Object.assign(new Error(`${status} ${STATUS_CODES[status] ?? 'Unknown API Status Code'}`), { code: status, body }));
}

function readAll(res: http.IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    res.on('error', reject);
  });
}

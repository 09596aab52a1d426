/**
 * One JSON request/response exchange over Node's own http/https, failing the
 * way client-node's fetch does: an HTTP refusal as ApiStatusError from the
 * Status the server returned, a network error as `request to URL failed,
 * reason: ...` carrying the system error code (ECONNREFUSED...). Shared by
 * RestClient (a KubeConfig's settings) and the CLI's HttpsClient (its own
 * agent and token), which both send what client-node would send.
 */
import http, { STATUS_CODES } from 'node:http';
import https from 'node:https';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { toApiError } from './errors.js';

/** Query, headers and body of one request. */
export interface RestRequest {
  query?: Record<string, string | number | boolean | undefined>;
  headers?: Record<string, string>;
  /** Sent as JSON unless already a string. */
  body?: unknown;
}

/** The methods of the API. */
export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

/** `path` on `server`, then the query in order, as client-node builds it. */
export function requestUrl(server: string, path: string, query: RestRequest['query'] = {}): URL {
  const url = new URL(server + path);
  for (const [k, v] of Object.entries(query)) if (v !== undefined) url.searchParams.set(k, String(v));
  return url;
}

/**
 * Accept and Content-Type as client-node sets them, and Accept-Encoding gzip as its fetch does (the API
 * server gzips bodies from 128 KiB: a relist of thousands of objects travels at about a tenth), then the
 * caller's own headers, and the body as sent.
 */
export function jsonHeaders(req: RestRequest): { headers: Record<string, string>; body: string | undefined } {
  const body = req.body === undefined ? undefined : typeof req.body === 'string' ? req.body : JSON.stringify(req.body);
  const headers = { Accept: 'application/json', 'Accept-Encoding': 'gzip', ...(body !== undefined ? { 'Content-Type': 'application/json' } : {}), ...req.headers };
  return { headers, body };
}

/** Sends one request; resolves with the response once its headers are in. */
export function send(url: URL, options: https.RequestOptions, body?: string): Promise<http.IncomingMessage> {
  const headers = { ...options.headers, ...(body !== undefined ? { 'Content-Length': String(Buffer.byteLength(body)) } : {}) };
  return new Promise((resolve, reject) => {
    const req = (url.protocol === 'https:' ? https : http).request(url, { ...options, headers }, resolve);
    req.on('error', (err: NodeJS.ErrnoException) => reject(Object.assign(new Error(`request to ${url.href} failed, reason: ${err.message}`), { code: err.code, cause: err })));
    req.end(body);
  });
}

/** The parsed JSON body of a 2xx response (undefined when empty); the refusal otherwise. */
export async function jsonBody<T>(res: http.IncomingMessage): Promise<T> {
  const status = res.statusCode ?? 0;
  if (status < 200 || status > 299) throw await refusal(res);
  const text = await readAll(res);
  return (text ? JSON.parse(text) : undefined) as T;
}

/** The error an HTTP refusal stands for: an ApiStatusError carrying the Status the server sent. */
export async function refusal(res: http.IncomingMessage): Promise<unknown> {
  const status = res.statusCode ?? 0;
  const body = await readAll(res).catch(() => '');
  return toApiError(Object.assign(new Error(`${status} ${STATUS_CODES[status] ?? 'Unknown API Status Code'}`), { code: status, body }));
}

const gunzip = promisify(zlib.gunzip);

async function readAll(res: http.IncomingMessage): Promise<string> {
  const raw = await new Promise<Buffer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    res.on('data', (c: Buffer) => chunks.push(c));
    res.on('end', () => resolve(Buffer.concat(chunks)));
    res.on('error', reject);
  });
  const gzipped = /^\s*gzip\s*$/i.test(String(res.headers['content-encoding'] ?? ''));
  return (gzipped ? await gunzip(raw) : raw).toString('utf8');
}

/**
 * Writing responses: objects and lists as JSON (or Tables when asked),
 * errors as Status bodies, warnings as `Warning: 299` headers.
 */
import zlib from 'node:zlib';
import type { ApiResponse as Response } from './context.js';
import type { Logger } from 'winston';
import { ApiError } from '../errors.js';
import { EtcdNoSpaceError } from '../etcd/no-space.js';
import { AmbiguousWriteError } from '../etcd/txn-client.js';

/** Bodies from this size on are gzipped for a client that accepts it, as kube-apiserver does (128 KiB). */
const COMPRESS_FROM_BYTES = 128 * 1024;

/** Sends `body` as JSON with `code`, adding a Warning header per warning; a large one gzipped when the client accepts it. */
export function sendJson(res: Response, code: number, body: unknown, warnings: string[] = []): void {
  const text = JSON.stringify(body);
  const headers: Record<string, string | number | string[]> = { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(text) };
  if (warnings.length > 0) headers.Warning = warnings.map((w) => `299 - ${JSON.stringify(w)}`);
  if ((headers['Content-Length'] as number) < COMPRESS_FROM_BYTES || !acceptsGzip(res.req?.headers['accept-encoding'])) return void res.writeHead(code, headers).end(text);
  zlib.gzip(text, { level: 4 }, (err, gz) => {
    if (err) return void res.writeHead(code, headers).end(text);
    res.writeHead(code, { ...headers, 'Content-Encoding': 'gzip', Vary: 'Accept-Encoding', 'Content-Length': gz.length }).end(gz);
  });
}

function acceptsGzip(header: string | undefined): boolean {
  return !!header && header.split(',').some((e) => /^\s*gzip\s*(;\s*q=(?!0(\.0*)?\s*$)[\d.]+)?\s*$/i.test(e));
}

/** Sends any thrown value as a Status; non-API errors become a logged 500. */
export function sendError(res: Response, err: unknown, log: Logger): void {
  const apiErr = toApiError(err, log);
  if (res.headersSent) {
    res.end();
    return;
  }
  if (apiErr.details?.retryAfterSeconds) res.setHeader('Retry-After', String(apiErr.details.retryAfterSeconds));
  sendJson(res, apiErr.code, apiErr.toStatus());
}

/** `err` as an ApiError (500 InternalError for anything unexpected, which is logged). */
export function toApiError(err: unknown, log: Logger): ApiError {
  if (err instanceof ApiError) return err;
  const e = err as { type?: string; status?: number; message?: string };
  // body-parser's own errors (size limit, aborted upload) carry an HTTP status.
  if (e?.type === 'entity.too.large') return new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: ${e.message}`);
  if (typeof e?.status === 'number' && e.status >= 400 && e.status < 500) return new ApiError(e.status, 'BadRequest', String(e.message));
  // Not 503: retrying does not help until someone frees space; the alarm monitor logs it once.
  if (err instanceof EtcdNoSpaceError) return new ApiError(507, 'InsufficientStorage', err.message);
  if (/request is too large|RESOURCE_EXHAUSTED/.test(String(e?.message))) {
    return new ApiError(413, 'RequestEntityTooLarge', 'the object is too large for the store; keep large data out of objects');
  }
  if (err instanceof AmbiguousWriteError) {
    log.error('etcd did not answer a write', { error: String(err) });
    return new ApiError(504, 'Timeout', `${err.message}. Read the object before retrying: a blind retry may apply the change twice`);
  }
  if (/ECONNREFUSED|UNAVAILABLE|deadline|circuit breaker is open/i.test(String(e?.message))) {
    log.error('etcd unavailable', { error: String(err) });
    return new ApiError(503, 'ServiceUnavailable', 'the storage backend (etcd) is unavailable; retry shortly', { retryAfterSeconds: 1 });
  }
  log.error('internal error', { error: String(err), stack: (err as Error)?.stack });
  return new ApiError(500, 'InternalError', `Internal error occurred: ${String(e?.message ?? err)}`);
}

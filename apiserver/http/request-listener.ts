/**
 * The apiserver's request listener. Resource requests — nearly all traffic —
 * are served directly on Node's http objects (authenticate, authorize, read
 * the body within the limit, dispatch), which measurably cuts CPU per request
 * against going through express's router and body parser; everything else
 * (health, version, discovery, OpenAPI, credentials) goes to the express app.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import querystring from 'node:querystring';
import { ApiError } from '../errors.js';
import { resourceAttributes, resourceVerb } from '../auth/attributes.js';
import type { RequestLabels } from '../metrics.js';
import { parseResourcePath, type RequestInfo } from '../request-info.js';
import { priorityLevel } from './priority-levels.js';
import { BODY_LIMIT_BYTES } from '../validation/limits.js';
import type { ApiContext, ApiRequest } from './context.js';
import { tooLarge } from './body.js';
import { serveResource } from './resources-handler.js';
import { sendError } from './respond.js';
import { auditWhenAnswered, authenticateRequest, authorizeRequest, type Security } from './security.js';

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** Serves a request an authenticated user may make without authorization (a review of their own access). */
export type SelfServiceHandler = (req: ApiRequest, res: ServerResponse, info: RequestInfo) => Promise<void>;

/** Serves a subresource that is not stored (an instance's log), once the request is authorized; keyed `<group>/<plural>/<subresource>`. */
export type SubresourceHandler = (req: ApiRequest, res: ServerResponse, info: RequestInfo) => Promise<void>;

/** Routes resource URLs to the resource handler and the rest to `app`. */
export function createRequestListener(ctx: ApiContext, sec: Security, app: Listener, selfService: Record<string, SelfServiceHandler> = {}, subresources: Record<string, SubresourceHandler> = {}): Listener {
  return (req, res) => {
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const info = parseResourcePath(path);
    if (!info) return app(req, res);
    const query = q < 0 ? {} : querystring.parse(url.slice(q + 1));
    ctx.metrics.observeRequest(requestLabels(req.method ?? 'GET', served(ctx, info, selfService, subresources), query), res);
    serve(ctx, sec, { selfService, subresources }, req, res, { info, path, query }).catch((err) => sendError(res, err, ctx.log));
  };
}

/**
 * The request's resource as metrics may name it: a URL names any group, resource and subresource it likes,
 * and one series per made-up name would grow the metrics without bound, so what is not served is `unknown`.
 */
function served(ctx: ApiContext, info: RequestInfo, selfService: Record<string, unknown>, subresources: Record<string, unknown>): RequestInfo {
  const key = `${info.group}/${info.plural}`;
  const def = ctx.registry.find(info.group, info.version, info.plural);
  if (!def && !selfService[key] && key !== '/namespaces') return { ...info, group: '', version: '', plural: 'unknown', subresource: undefined };
  const sub = info.subresource;
  if (!sub || (sub === 'status' && def?.hasStatus) || subresources[`${key}/${sub}`]) return info;
  return { ...info, subresource: 'unknown' };
}

/** The labels kube-apiserver gives a request in its metrics. */
function requestLabels(method: string, info: RequestInfo, query: Record<string, unknown>): RequestLabels {
  const scope = info.name ? 'resource' : info.namespace ? 'namespace' : 'cluster';
  return { verb: resourceVerb(method, !!info.name, query), group: info.group, version: info.version, resource: info.plural, subresource: info.subresource ?? '', scope };
}

async function serve(
  ctx: ApiContext,
  sec: Security,
  handlers: { selfService: Record<string, SelfServiceHandler>; subresources: Record<string, SubresourceHandler> },
  req: IncomingMessage,
  res: ServerResponse,
  r: { info: RequestInfo; path: string; query: Record<string, unknown> },
): Promise<void> {
  const user = await authenticateRequest(sec, req.headers, r.path);
  const self = handlers.selfService[`${r.info.group}/${r.info.plural}`] as SelfServiceHandler | undefined;
  const attrs = resourceAttributes(user, req.method ?? 'GET', r.info, r.query);
  auditWhenAnswered(sec, res, attrs, r.path);
  const admit = self ? undefined : await authorizeRequest(sec, attrs);
  const level = priorityLevel(user, r.info, attrs.verb, r.query);
  if (level === 'progress' || level === 'workload') {
    const release = await ctx.seats.take(level);
    // A client that went away while it waited has closed the response: a 'close' listener added now would
    // never run, so the seat would never come back (and its body would never be read to the end).
    if (res.closed) return release();
    res.once('close', release);
  }
  const body = await readBody(req, !IGNORES_BODY.has(req.method ?? 'GET'));
  const authorizeCreate = () => authorizeRequest(sec, { ...attrs, verb: 'create' });
  const apiReq = Object.assign(req, { path: r.path, query: r.query, body, user, admit, authorizeCreate }) as ApiRequest;
  if (self) return self(apiReq, res, r.info);
  const sub = r.info.subresource && handlers.subresources[`${r.info.group}/${r.info.plural}/${r.info.subresource}`];
  return sub ? sub(apiReq, res, r.info) : serveResource(ctx, apiReq, res, r.info);
}

/**
 * Methods whose body means nothing, as in kube. Read and dropped: kept, it stayed referenced by the request
 * for as long as the response lasted, so a watch (an hour) could pin 1.5 MiB each, and a watch takes no seat.
 */
const IGNORES_BODY = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The request body, at most BODY_LIMIT_BYTES (413 beyond, after draining the rest); `keep` false: read and dropped. */
function readBody(req: IncomingMessage, keep: boolean): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (keep && size <= BODY_LIMIT_BYTES) chunks.push(chunk);
    });
    req.on('end', () => (size > BODY_LIMIT_BYTES ? reject(tooLarge(BODY_LIMIT_BYTES)) : resolve(size === 0 || !keep ? undefined : Buffer.concat(chunks, size))));
    req.on('error', (err) => reject(new ApiError(400, 'BadRequest', `the request body could not be read: ${err.message}`)));
  });
}

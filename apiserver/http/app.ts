/**
 * The express application: health, version and the dashboard's files open to all, then
 * bearer-token authentication, discovery, OpenAPI and /metrics. Resource URLs
 * never reach it (see request-listener.ts). Every error leaves as a Kubernetes Status.
 */
import express, { type NextFunction, type Request, type Response } from 'express';
import { ApiError } from '../errors.js';
import { nonResourceAttributes } from '../auth/attributes.js';
import type { ApiContext } from './context.js';
import { serveDashboard } from './dashboard.js';
import { coreVersions, group, groupList, resourceList, versionInfo } from './discovery.js';
import type { OpenApi } from './openapi.js';
import { OPENAPI_V2_PROTOBUF, OpenApiV2 } from './openapi-v2.js';
import { sendError, sendJson } from './respond.js';
import { auditWhenAnswered, authenticateRequest, authorizeRequest, type Security } from './security.js';

/** What the app needs besides the shared context. */
export interface AppOptions {
  security: Security;
  /** Routes that need a user (credential exchange), added after authentication and authorization. */
  routes?: (app: express.Express) => void;
  openapi: OpenApi;
  openapiV2: OpenApiV2;
  cairnVersion: string;
  /** Why the server cannot serve now (shutting down, etcd unreachable), or null when it can: /readyz. */
  notReady: () => Promise<string | null>;
  /**
   * What a ready server still reports on /readyz, one line each (etcd's NOSPACE alarm: reads
   * and deletes are served, writes refused). They leave /readyz at 200, as kube-apiserver's
   * etcd check passes under NOSPACE: a balancer must keep routing the reads and deletes that
   * diagnose and fix it.
   */
  readyWarnings?: () => string[];
}

type Handler = (req: Request, res: Response) => unknown;

/** Builds the apiserver's HTTP application. */
export function createApp(ctx: ApiContext, opts: AppOptions): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.disable('etag');
  app.set('query parser', 'simple');
  const wrap = (fn: Handler) => (req: Request, res: Response) => Promise.resolve(fn(req, res)).catch((err) => sendError(res, err, ctx.log));

  app.get('/healthz', (_req, res) => void res.type('text/plain').send('ok'));
  app.get('/livez', (_req, res) => void res.type('text/plain').send('ok'));
  app.get('/readyz', async (_req, res) => {
    const why = await opts.notReady();
    if (why) return void res.status(503).type('text/plain').send(why);
    res.status(200).type('text/plain').send(['ok', ...(opts.readyWarnings?.() ?? []).map((w) => `warning: ${w}`)].join('\n'));
  });
  app.get('/version', (_req, res) => sendJson(res, 200, versionInfo(opts.cairnVersion)));
  serveDashboard(app);

  app.use((req, res, next) => {
    const check = async () => {
      const user = await authenticateRequest(opts.security, req.headers, req.path);
      const attrs = nonResourceAttributes(user, req.method, req.path);
      auditWhenAnswered(opts.security, res, attrs, req.path);
      await authorizeRequest(opts.security, attrs);
      res.locals.user = user;
    };
    check().then(() => next(), (err) => sendError(res, err, ctx.log));
  });

  app.get('/api', wrap((req, res) => sendJson(res, 200, coreVersions(req.headers.host ?? ''))));
  app.get('/apis', wrap((_req, res) => sendJson(res, 200, groupList(ctx.registry))));
  app.get('/openapi/v3', wrap((_req, res) => sendJson(res, 200, opts.openapi.index())));
  app.get('/openapi/v2', wrap((req, res) => {
    const v2 = opts.openapiV2;
    if (OpenApiV2.wantsProtobuf(req.headers.accept)) return void res.type(OPENAPI_V2_PROTOBUF).send(v2.protobuf);
    res.type('application/json').send(v2.json);
  }));
  app.get('/metrics', wrap(async (_req, res) => void res.type(ctx.metrics.registry.contentType).send(await ctx.metrics.registry.metrics())));
  opts.routes?.(app);
  app.use(wrap((req, res) => route(ctx, opts, req, res)));
  app.use((err: unknown, _req: Request, res: Response, _next: NextFunction) => sendError(res, err, ctx.log));
  return app;
}

async function route(ctx: ApiContext, opts: AppOptions, req: Request, res: Response): Promise<void> {
  const parts = req.path.split('/').filter(Boolean);
  if (req.method === 'GET' && parts[0] === 'openapi' && parts[1] === 'v3') {
    const doc = opts.openapi.document(parts.slice(2).join('/'));
    if (doc) return void res.type('application/json').send(doc);
  } else if (req.method === 'GET' && parts[0] === 'apis' && parts.length <= 3) {
    const body = parts.length === 2 ? group(ctx.registry, parts[1]!) : resourceList(ctx.registry, `${parts[1]}/${parts[2]}`);
    if (body) return sendJson(res, 200, body);
  } else if (req.method === 'GET' && parts[0] === 'api' && parts.length === 2) {
    const body = resourceList(ctx.registry, parts[1]!);
    if (body) return sendJson(res, 200, body);
  }
  throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
}

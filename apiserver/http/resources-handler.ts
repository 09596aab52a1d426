/**
 * The handler of every resource URL: resolves the kind, then dispatches on
 * the HTTP verb to get / list / watch / create / update / patch / delete.
 */
import type { ApiRequest as Request, ApiResponse as Response } from './context.js';
import { noteCreatedName } from '../audit/created-name.js';
import { ApiError, badRequest, methodNotAllowed } from '../errors.js';
import { groupVersion, type ResourceDefinition } from '../resources.js';
import type { RequestInfo } from '../request-info.js';
import type { Propagation } from '../rest/lifecycle.js';
import { partialList, partialObject, wantsPartialMetadata } from '../rest/partial-metadata.js';
import { parseSelection } from '../rest/selection.js';
import { toTable, wantsTable, type IncludeObject } from '../rest/table.js';
import type { KubeObject } from '../storage/codec.js';
import { managerName } from '../rest/managed-fields.js';
import { parseFieldValidation } from '../validation/validate-object.js';
import { asObject, checkIdentity, decodeBody, describe } from './body.js';
import type { ApiContext } from './context.js';
import { serveNamespaces } from './namespaces-handler.js';
import { listParams } from './list-params.js';
import { bool, dryRun, str, type Query } from './params.js';
import { patchObject } from './patch-handler.js';
import { sendJson } from './respond.js';
import { serveWatch } from './watch.js';

/** Serves one request to a resource URL. */
export async function serveResource(ctx: ApiContext, req: Request, res: Response, info: RequestInfo): Promise<void> {
  if (info.group === '' && info.plural === 'namespaces' && !info.namespace) return serveNamespaces(ctx, req, res, info);
  const def = ctx.registry.find(info.group, info.version, info.plural);
  if (!def || (info.namespace && !def.namespaced) || (info.subresource && (info.subresource !== 'status' || !def.hasStatus))) {
    throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
  }
  if (def.namespaced && info.name && !info.namespace) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
  await dispatch(ctx, req, res, def, info);
}

async function dispatch(ctx: ApiContext, req: Request, res: Response, def: ResourceDefinition, info: RequestInfo): Promise<void> {
  if (def.refusal && req.method !== 'GET' && req.method !== 'DELETE') throw methodNotAllowed(`${def.kind} is not served: ${def.refusal}`);
  const q = req.query as Query;
  const ns = info.namespace;
  const sub = info.subresource === 'status' ? 'status' : 'main';
  const write = () => ({ dryRun: dryRun(q), fieldValidation: parseFieldValidation(str(q, 'fieldValidation')), admit: req.admit, authorizeCreate: req.authorizeCreate, fieldManager: managerName(str(q, 'fieldManager'), req.headers['user-agent']) });
  switch (req.method) {
    case 'GET':
      if (info.name) return sendObject(req, res, def, 200, await ctx.lister.get(def, ns, info.name));
      if (bool(q, 'watch')) return serveWatch(ctx, req, res, def, ns, parseSelection(def, ns, q.labelSelector, q.fieldSelector));
      return list(ctx, req, res, def, ns);
    case 'POST': {
      if (info.name) throw methodNotAllowed(`POST is not supported on a named ${def.kind}; use PUT or PATCH`);
      if (def.namespaced && !ns) throw new ApiError(404, 'NotFound', 'the server could not find the requested resource');
      const body = objectBody(req, def, ns);
      // Noted before and after: a refused create is audited under the name it asked for, a generated name once known.
      noteCreatedName(res, body.metadata.name);
      const r = await ctx.store.create(def, ns, body, write());
      noteCreatedName(res, r.obj.metadata.name);
      return sendObject(req, res, def, 201, r.obj, r.warnings);
    }
    case 'PUT': {
      if (!info.name) throw methodNotAllowed(`PUT needs an object name in the URL`);
      const body = objectBody(req, def, ns);
      if (body.metadata.name !== info.name) throw badRequest(`the name of the object (${body.metadata.name}) does not match the name on the URL (${info.name})`);
      const r = await ctx.store.update(def, ns, info.name, sub, () => body, {
        ...write(),
        createIfMissing: createsOnUpdate(def),
        requireVersion: !updatesUnconditionally(def),
      });
      return sendObject(req, res, def, r.created ? 201 : 200, r.obj, r.warnings);
    }
    case 'PATCH': {
      if (!info.name) throw methodNotAllowed(`PATCH needs an object name in the URL`);
      const r = await patchObject(ctx, req, { def, ns, name: info.name, sub }, write());
      return sendObject(req, res, def, r.created ? 201 : 200, r.obj, r.warnings);
    }
    case 'DELETE':
      if (!info.name) return deleteCollection(ctx, req, res, def, ns);
      return sendObject(req, res, def, 200, await deleteOne(ctx, req, def, ns, info.name));
    default:
      throw methodNotAllowed(`${req.method} is not supported`);
  }
}

async function list(ctx: ApiContext, req: Request, res: Response, def: ResourceDefinition, ns: string | undefined): Promise<void> {
  const q = req.query as Query;
  const sel = parseSelection(def, ns, q.labelSelector, q.fieldSelector);
  const r = await ctx.lister.list(def, ns, sel, listParams(q));
  const listMeta = { resourceVersion: r.resourceVersion, ...(r.continue ? { continue: r.continue } : {}) };
  if (wantsTable(req.headers.accept)) {
    return sendJson(res, 200, toTable(def, r.items, listMeta, includeObject(q), Date.now()));
  }
  const partial = wantsPartialMetadata(req.headers.accept);
  if (partial) return sendJson(res, 200, partialList(r.items, listMeta, partial));
  sendJson(res, 200, { kind: def.listKind, apiVersion: groupVersion(def), metadata: listMeta, items: r.items });
}

async function deleteOne(ctx: ApiContext, req: Request, def: ResourceDefinition, ns: string | undefined, name: string): Promise<KubeObject> {
  const opts = deleteOptions(req);
  return ctx.store.delete(def, ns, name, opts.preconditions ?? {}, dryRun(req.query as Query, opts.dryRun), propagationOf(req, opts));
}

async function deleteCollection(ctx: ApiContext, req: Request, res: Response, def: ResourceDefinition, ns: string | undefined): Promise<void> {
  const q = req.query as Query;
  const opts = deleteOptions(req);
  const dry = dryRun(q, opts.dryRun);
  const sel = parseSelection(def, ns, q.labelSelector, q.fieldSelector);
  const r = await ctx.lister.list(def, ns, sel, { limit: 0 });
  const items: KubeObject[] = [];
  for (const obj of r.items) {
    try {
      items.push(await ctx.store.delete(def, obj.metadata.namespace, obj.metadata.name!, {}, dry, propagationOf(req, opts)));
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }
  sendJson(res, 200, { kind: def.listKind, apiVersion: groupVersion(def), metadata: { resourceVersion: r.resourceVersion }, items });
}

interface DeleteOptions {
  dryRun?: unknown;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: unknown;
  orphanDependents?: unknown;
}

const PROPAGATIONS: Propagation[] = ['Background', 'Foreground', 'Orphan'];

/** The propagationPolicy of the body or the query (Background when unset, as kube's default for these kinds); orphanDependents is its old form. */
function propagationOf(req: Request, opts: DeleteOptions): Propagation {
  const q = req.query as Query;
  const policy = opts.propagationPolicy ?? str(q, 'propagationPolicy');
  if (policy === undefined || policy === '') return opts.orphanDependents === true || bool(q, 'orphanDependents') ? 'Orphan' : 'Background';
  if (!PROPAGATIONS.includes(policy as Propagation)) throw badRequest(`propagationPolicy: Unsupported value: ${JSON.stringify(policy)}: supported values: "Orphan", "Background", "Foreground"`);
  return policy as Propagation;
}

function deleteOptions(req: Request): DeleteOptions {
  const raw = req.body as Buffer | undefined;
  if (!raw || raw.length === 0) return {};
  const body = asObject(decodeBody(raw, req.headers['content-type']));
  const pre: unknown = body.preconditions;
  if (pre !== undefined && (typeof pre !== 'object' || pre === null || Array.isArray(pre))) {
    throw badRequest('preconditions: must be an object with uid and/or resourceVersion');
  }
  for (const [f, v] of Object.entries((pre ?? {}) as Record<string, unknown>)) {
    if ((f === 'uid' || f === 'resourceVersion') && v !== undefined && v !== null && typeof v !== 'string') throw badRequest(`preconditions.${f}: must be a string, not ${describe(v)}`);
  }
  return body as DeleteOptions;
}

/** The request body as an object of `def`, with apiVersion/kind filled in and checked. */
export function objectBody(req: Request, def: ResourceDefinition, ns: string | undefined): KubeObject {
  const body = asObject(decodeBody(req.body, req.headers['content-type'])) as KubeObject;
  return checkIdentity(body, def, ns);
}

// kube's per-kind strategies: Events, Secrets and ConfigMaps may be updated without a version (last write wins; Helm
// updates its release Secrets so), and Leases and Events may be created by a PUT.
const isEvent = (def: ResourceDefinition) => def.group === '' && def.plural === 'events';
const updatesUnconditionally = (def: ResourceDefinition) => def.group === '' && ['events', 'secrets', 'configmaps'].includes(def.plural);
const createsOnUpdate = (def: ResourceDefinition) => isEvent(def) || (def.group === 'coordination.k8s.io' && def.plural === 'leases');


function includeObject(q: Query): IncludeObject {
  const v = str(q, 'includeObject') ?? 'Metadata';
  if (v !== 'None' && v !== 'Metadata' && v !== 'Object') throw badRequest(`includeObject: Unsupported value: ${JSON.stringify(v)}`);
  return v;
}

/** Sends one object, as a one-row Table when asked. */
function sendObject(req: Request, res: Response, def: ResourceDefinition, code: number, obj: KubeObject, warnings: string[] = []): void {
  if (wantsTable(req.headers.accept)) return sendJson(res, code, toTable(def, [obj], { resourceVersion: obj.metadata.resourceVersion }, includeObject(req.query as Query), Date.now()), warnings);
  const partial = wantsPartialMetadata(req.headers.accept);
  sendJson(res, code, partial ? partialObject(obj, partial) : obj, warnings);
}

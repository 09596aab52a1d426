/**
 * `/api/v1/namespaces`: a view of Clusters (see rest/namespaces.ts). Creating
 * a Namespace (`kubectl create namespace`, Helm's `--create-namespace`, a
 * v1/Namespace in a GitOps manifest) creates a Cluster of that name with
 * the default spec, which is what those tools need: a place to put objects.
 * Patching a Namespace (kubectl apply of a manifest naming one that
 * exists, kubectl label, a server-side apply) changes the labels and
 * annotations of its Cluster. Everything else about a namespace is done
 * on its Cluster.
 */
import type { ApiRequest as Request, ApiResponse as Response } from './context.js';
import { ApiError, alreadyExists, badRequest, methodNotAllowed } from '../errors.js';
import type { RequestInfo } from '../request-info.js';
import { parseSelection } from '../rest/selection.js';
import { toTable, wantsTable } from '../rest/table.js';
import type { ApiContext } from './context.js';
import { BUILTIN_NAMESPACES, NAME_LABEL } from '../rest/namespaces.js';
import { jsonPatch, mergePatch, PATCH_TYPES } from '../rest/patch.js';
import type { KubeObject } from '../storage/codec.js';
import { parseFieldValidation } from '../validation/validate-object.js';
import { asObject, decodeBody, describe, mediaType } from './body.js';
import { bool, dryRun, str, type Query } from './params.js';
import { applyConfig } from './patch-handler.js';
import { sendJson } from './respond.js';

/** Serves the namespace URLs: GET of the list and of one, POST (a new Cluster), PATCH (its labels and annotations). */
export async function serveNamespaces(ctx: ApiContext, req: Request, res: Response, info: RequestInfo): Promise<void> {
  if (req.method === 'POST' && !info.name) return createNamespace(ctx, req, res);
  if (req.method === 'PATCH' && info.name && mediaType(req.headers['content-type']) === PATCH_TYPES.apply) return applyNamespace(ctx, req, res, info.name);
  if (req.method === 'PATCH' && info.name && !BUILTIN_NAMESPACES.includes(info.name)) return patchNamespace(ctx, req, res, info.name);
  if (req.method !== 'GET') {
    const which = info.name ? `the Cluster "${info.name}"` : 'the Clusters';
    throw methodNotAllowed(`namespaces are Clusters in Cairn: ${req.method === 'DELETE' ? 'delete' : 'change'} ${which} (kind: Cluster, apiVersion: cairn.dev/v1alpha1) instead`);
  }
  if (bool(req.query, 'watch')) {
    throw methodNotAllowed('watching namespaces is not supported; watch clusters.cairn.dev instead');
  }
  await ctx.cache.waitFresh(1000);
  const all = ctx.namespaces.list();
  const def = ctx.registry.find('', 'v1', 'namespaces')!;
  const sel = parseSelection(def, undefined, req.query.labelSelector, req.query.fieldSelector);
  const items = all.filter((n) => (info.name ? n.metadata.name === info.name : sel.matches(n)));
  if (info.name && items.length === 0) throw new ApiError(404, 'NotFound', `namespaces "${info.name}" not found`, { name: info.name, kind: 'namespaces' });
  const listMeta = { resourceVersion: String(ctx.cache.revision) };
  if (wantsTable(req.headers.accept)) return sendJson(res, 200, toTable(def, items, listMeta, 'Metadata', Date.now()));
  sendJson(res, 200, info.name ? items[0] : { kind: 'NamespaceList', apiVersion: 'v1', metadata: listMeta, items });
}

// A Namespace written as the Cluster it stands for: its name, labels and annotations, and the default spec.
async function createNamespace(ctx: ApiContext, req: Request, res: Response): Promise<void> {
  const body = asObject(decodeBody(req.body, req.headers['content-type']));
  if ((body.apiVersion ?? 'v1') !== 'v1' || (body.kind ?? 'Namespace') !== 'Namespace') throw badRequest(`expected a v1 Namespace, not ${describe(body.apiVersion)} ${describe(body.kind)}`);
  const meta = asObject(body.metadata ?? {});
  const name = typeof meta.name === 'string' ? meta.name : '';
  if (BUILTIN_NAMESPACES.includes(name)) throw alreadyExists('namespaces', '', name);
  const clusterDef = ctx.registry.find('cairn.dev', 'v1alpha1', 'clusters')!;
  const cluster = { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name, labels: meta.labels, annotations: meta.annotations }, spec: {} };
  const q = req.query as Query;
  try {
    const r = await ctx.store.create(clusterDef, undefined, cluster, { dryRun: dryRun(q), fieldValidation: parseFieldValidation(str(q, 'fieldValidation')), admit: req.admit });
    sendJson(res, 201, ctx.namespaces.viewOf(r.obj));
  } catch (err) {
    if (err instanceof ApiError && err.reason === 'AlreadyExists') throw alreadyExists('namespaces', '', name);
    throw err;
  }
}

/**
 * Server-side apply of a Namespace (kubectl apply --server-side, Flux, Argo CD with ServerSideApply): applied
 * to its Cluster as that Cluster's labels and annotations under the same field manager, so ownership and
 * conflicts are the Cluster's; a Cluster that does not exist is created, as apply creates a Namespace.
 * A built-in namespace has no Cluster: an apply that asks nothing of it answers it as it is.
 */
async function applyNamespace(ctx: ApiContext, req: Request, res: Response, name: string): Promise<void> {
  const body = asObject(decodeBody(req.body, PATCH_TYPES.apply));
  if ((body.apiVersion ?? 'v1') !== 'v1' || (body.kind ?? 'Namespace') !== 'Namespace') throw badRequest(`expected a v1 Namespace, not ${describe(body.apiVersion)} ${describe(body.kind)}`);
  const meta = asObject(body.metadata ?? {});
  const { [NAME_LABEL]: _name, ...labels } = asObject(meta.labels ?? {}) as Record<string, string>;
  const annotations = meta.annotations as Record<string, string> | undefined;
  if (BUILTIN_NAMESPACES.includes(name)) {
    if (Object.keys(labels).length > 0 || annotations) throw methodNotAllowed(`the namespace "${name}" is built in and has no Cluster to carry labels or annotations`);
    return sendJson(res, 200, ctx.namespaces.list().find((n) => n.metadata.name === name));
  }
  const config = { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: meta.name ?? name, ...(Object.keys(labels).length > 0 ? { labels } : {}), ...(annotations ? { annotations } : {}) } };
  const clusterDef = ctx.registry.find('cairn.dev', 'v1alpha1', 'clusters')!;
  const q = req.query as Query;
  const r = await applyConfig(ctx, req, { def: clusterDef, ns: undefined, name, sub: 'main' }, { dryRun: dryRun(q), fieldValidation: parseFieldValidation(str(q, 'fieldValidation')), admit: req.admit, authorizeCreate: req.authorizeCreate }, config);
  sendJson(res, r.created ? 201 : 200, ctx.namespaces.viewOf(r.obj));
}

// A merge, strategic-merge or JSON patch of the Namespace view, kept to what a Namespace and its Cluster share: labels and annotations.
async function patchNamespace(ctx: ApiContext, req: Request, res: Response, name: string): Promise<void> {
  const type = mediaType(req.headers['content-type']);
  if (type !== PATCH_TYPES.merge && type !== PATCH_TYPES.strategic && type !== PATCH_TYPES.json) {
    throw new ApiError(415, 'UnsupportedMediaType', `a Namespace takes apply, merge, strategic-merge or JSON patches, not ${type || 'no content type'}`);
  }
  const patch = decodeBody(req.body, type);
  const clusterDef = ctx.registry.find('cairn.dev', 'v1alpha1', 'clusters')!;
  const q = req.query as Query;
  const r = await ctx.store.update(clusterDef, undefined, name, 'main', (cluster) => {
    const view = ctx.namespaces.viewOf(cluster);
    const next = asObject(type === PATCH_TYPES.json ? jsonPatch(view, patch) : mergePatch(view, asObject(patch))) as KubeObject;
    const { [NAME_LABEL]: _name, ...labels } = (next.metadata?.labels ?? {}) as Record<string, string>;
    const { labels: _l, annotations: _a, resourceVersion: _rv, ...kept } = cluster.metadata;
    const annotations = next.metadata?.annotations;
    return { ...cluster, metadata: { ...kept, ...(Object.keys(labels).length > 0 ? { labels } : {}), ...(annotations ? { annotations } : {}) } };
  }, { dryRun: dryRun(q), fieldValidation: parseFieldValidation(str(q, 'fieldValidation')), admit: req.admit });
  sendJson(res, 200, ctx.namespaces.viewOf(r.obj));
}

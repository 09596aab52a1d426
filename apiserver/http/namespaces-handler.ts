/**
 * `/api/v1/namespaces`: a read-only view of Clusters (see rest/namespaces.ts).
 * Namespaces are created and deleted by creating and deleting Clusters.
 */
import type { ApiRequest as Request, ApiResponse as Response } from './context.js';
import { ApiError, methodNotAllowed } from '../errors.js';
import type { RequestInfo } from '../request-info.js';
import { parseSelection } from '../rest/selection.js';
import { toTable, wantsTable } from '../rest/table.js';
import type { ApiContext } from './context.js';
import { bool } from './params.js';
import { sendJson } from './respond.js';

/** Serves GET on the namespace list and on one namespace. */
export async function serveNamespaces(ctx: ApiContext, req: Request, res: Response, info: RequestInfo): Promise<void> {
  if (req.method !== 'GET') {
    const which = info.name ? `the Cluster "${info.name}"` : 'a Cluster of the same name';
    throw methodNotAllowed(`namespaces are Clusters in Cairn: create or delete ${which} (kind: Cluster, apiVersion: cairn.dev/v1alpha1) instead`);
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

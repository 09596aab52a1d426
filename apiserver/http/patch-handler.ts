/**
 * PATCH: decodes the patch by content type and runs it through the store's
 * guaranteed-update loop. A patch pins the resourceVersion only when it
 * carries one itself (kubectl diff does), so other patches are retried on a
 * lost race instead of failing with 409.
 */
import type { ApiRequest as Request } from './context.js';
import { ApiError, badRequest } from '../errors.js';
import type { ResourceDefinition } from '../resources.js';
import { serverSideApply } from '../rest/apply.js';
import type { Subresource } from '../rest/lifecycle.js';
import { jsonPatch, mergePatch, PATCH_TYPES } from '../rest/patch.js';
import type { UpdateFn, WriteOptions, WriteResult } from '../rest/resource-store.js';
import type { KubeObject } from '../storage/codec.js';
import { asObject, checkIdentity, decodeBody, mediaType } from './body.js';
import type { ApiContext } from './context.js';
import { bool, str, type Query } from './params.js';

/** The object a PATCH addresses. */
export interface PatchTarget {
  def: ResourceDefinition;
  ns: string | undefined;
  name: string;
  sub: Subresource;
}

/** Applies the request's patch to one object. */
export async function patchObject(ctx: ApiContext, req: Request, target: PatchTarget, opts: WriteOptions): Promise<WriteResult> {
  const { def, ns, name, sub } = target;
  const type = mediaType(req.headers['content-type']);
  if (!(Object.values(PATCH_TYPES) as string[]).includes(type)) {
    throw new ApiError(415, 'UnsupportedMediaType', `the body of the request was in an unknown format - accepted media types include: ${Object.values(PATCH_TYPES).join(', ')}`);
  }
  const body = decodeBody(req.body, type);
  // Server-side apply records its own ownership (an Apply entry), not an Update.
  if (type === PATCH_TYPES.apply) return applyConfig(ctx, req, target, { ...opts, fieldManager: undefined }, body);
  let fn: UpdateFn;
  if (type === PATCH_TYPES.json) {
    fn = (cur) => {
      const next = jsonPatch(cur, body) as KubeObject;
      return finish(next, cur, next?.metadata?.resourceVersion !== cur.metadata.resourceVersion, def, ns, name);
    };
  } else {
    // merge and strategic merge: for Cairn's kinds, strategic merge is a merge patch.
    const patch = asObject(body);
    const pinned = patch.metadata?.resourceVersion !== undefined;
    fn = (cur) => finish(mergePatch(cur, patch), cur, pinned, def, ns, name);
  }
  return ctx.store.update(def, ns, name, sub, fn, opts);
}

/** Server-side apply: creates the object when absent. */
export function applyConfig(ctx: ApiContext, req: Request, target: PatchTarget, opts: WriteOptions, body: unknown): Promise<WriteResult> {
  const { def, ns, name, sub } = target;
  const q = req.query as Query;
  const manager = str(q, 'fieldManager');
  if (!manager) throw badRequest('fieldManager: Required value: is required for apply patch');
  const config = checkIdentity(asObject(body) as KubeObject, def, ns);
  if (config.metadata.name !== undefined && config.metadata.name !== name) {
    throw badRequest(`the name of the object (${config.metadata.name}) does not match the name on the URL (${name})`);
  }
  const force = bool(q, 'force');
  const now = new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');
  const fn: UpdateFn = (cur) => finish(serverSideApply(cur, config, manager, force, now, def.schema), cur, !!config.metadata.resourceVersion, def, ns, name);
  // Applying status to an object that is gone must not bring it back (kube answers 404).
  return ctx.store.update(def, ns, name, sub, fn, { ...opts, createIfMissing: sub === 'main' });
}

// A patch may not rename or retype the object; its version counts only if the client sent one.
function finish(next: unknown, cur: KubeObject, pinned: boolean, def: ResourceDefinition, ns: string | undefined, name: string): KubeObject {
  const obj = checkIdentity(asObject(next) as KubeObject, def, ns);
  if (obj.metadata.name !== name) throw badRequest(`the name of the object (${String(obj.metadata.name)}) does not match the name on the URL (${name})`);
  if (!pinned) delete obj.metadata.resourceVersion;
  else if (obj.metadata.resourceVersion === undefined) obj.metadata.resourceVersion = cur.metadata.resourceVersion;
  return obj;
}

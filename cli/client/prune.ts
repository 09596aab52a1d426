/**
 * `apply --prune -l SELECTOR`, the GitOps loop: after the input is applied,
 * delete the objects that match the selector but are no longer in the input.
 *
 * What is looked at (pruneScope):
 *  - kinds: every namespaced Cairn kind (Node, Instance, Volume, WorkItem),
 *    plus a cluster-scoped Cairn kind (Cluster) only when the input holds one
 *    — deleting a Cluster takes its whole namespace with it, so only an input
 *    that manages Clusters may prune them;
 *  - namespaces: those the input's objects live in, the namespace of every
 *    Cluster in the input, and -n when given.
 * What is never pruned (selectPrune): objects in the input, objects a
 * controller owns (an ownerReference with controller: true, e.g. the
 * WorkItems of an Instance — they go with their owner), and objects already
 * being deleted.
 */
import { isNotFound } from '../../api/client/errors.js';
import { GROUP } from '../../api/types.js';
import type { ResourceCatalog, ResourceInfo } from './catalog.js';
import type { ClientContext } from './context.js';
import { objectKey, type Target } from './targets.js';
import { listObjects, type ApiObject } from './watch.js';
import { deleteObject } from './writes.js';

/** The kinds and namespaces --prune lists. */
export interface PruneScope {
  resources: ResourceInfo[];
  namespaces: string[];
}

/** A live object and its resource. */
export interface LiveObject {
  r: ResourceInfo;
  obj: ApiObject;
}

/** Which kinds and namespaces to look in, from what was applied (see the module comment). */
export function pruneScope(applied: Target[], catalog: ResourceCatalog, explicitNamespace?: string): PruneScope {
  const inputKinds = new Set(applied.map((t) => objectKey(t.r, '', '')));
  const resources = catalog.resources.filter(
    (r) => r.group === GROUP && r.verbs.includes('list') && r.verbs.includes('delete') && (r.namespaced || inputKinds.has(objectKey(r, '', ''))),
  );
  const namespaces = new Set<string>(explicitNamespace ? [explicitNamespace] : []);
  for (const t of applied) {
    if (t.namespace) namespaces.add(t.namespace);
    if (t.r.group === GROUP && t.r.kind === 'Cluster') namespaces.add(t.name);
  }
  return { resources, namespaces: [...namespaces].sort() };
}

/** The live objects to delete: not applied, not owned by a controller, not already going. */
export function selectPrune(live: LiveObject[], applied: Set<string>): LiveObject[] {
  return live.filter(({ r, obj }) => {
    const m = obj.metadata;
    return !applied.has(objectKey(r, m.namespace, m.name)) && !controllerOwned(obj) && !m.deletionTimestamp;
  });
}

function controllerOwned(obj: ApiObject): boolean {
  const refs = obj.metadata.ownerReferences;
  return Array.isArray(refs) && refs.some((ref: { controller?: boolean }) => ref?.controller === true);
}

/** The objects of the scope that match the selector. */
export async function listPruneCandidates(ctx: ClientContext, scope: PruneScope, labelSelector: string): Promise<LiveObject[]> {
  const lists = scope.resources.flatMap((r) => (r.namespaced ? scope.namespaces : [undefined]).map((namespace) => ({ r, namespace })));
  const found = await Promise.all(lists.map(async ({ r, namespace }) => (await listObjects(ctx, r, { namespace, labelSelector })).items.map((obj) => ({ r, obj }))));
  return found.flat();
}

/** Deletes one pruned object; an object already gone counts as pruned. */
export async function pruneObject(ctx: ClientContext, { r, obj }: LiveObject, dryRun: boolean): Promise<void> {
  try {
    await deleteObject(ctx, r, obj.metadata.namespace, obj.metadata.name, dryRun);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
}

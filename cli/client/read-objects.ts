/**
 * Reading the objects a read verb's arguments name, as kubectl does: names
 * one by one, so a missing one is reported (NotFound) while the others are
 * still shown; no names means the collection, filtered by the selectors.
 * Every object carries its apiVersion and kind, as printed output needs.
 */
import { isNotFound } from '../../api/client/errors.js';
import { apiVersionOf, objectPath, type ResourceInfo } from './catalog.js';
import type { ClientContext } from './context.js';
import type { KindTarget } from './kind-args.js';
import { listObjects, type ApiObject, type Selection } from './watch.js';

/** What was read, and the NotFound errors of the names that were not there. */
export interface ReadResult<T> {
  found: T[];
  missing: unknown[];
}

/** Where a kind is listed: the namespace, or every one (-A, or a cluster-scoped kind). */
export function listNamespace(ctx: ClientContext, r: ResourceInfo): string | undefined {
  return r.namespaced && !ctx.allNamespaces ? ctx.namespace : undefined;
}

/** Reads each name; NotFound is collected, any other failure thrown. */
export async function readEach<T>(names: readonly string[], read: (name: string) => Promise<T>): Promise<ReadResult<T>> {
  const result: ReadResult<T> = { found: [], missing: [] };
  for (const name of names) {
    try {
      result.found.push(await read(name));
    } catch (err) {
      if (!isNotFound(err)) throw err;
      result.missing.push(err);
    }
  }
  return result;
}

/** The objects of a target: its names, or its collection filtered by `selectors`. */
export async function readObjects(ctx: ClientContext, t: KindTarget, selectors: Omit<Selection, 'namespace'>): Promise<ReadResult<ApiObject>> {
  const typed = (obj: ApiObject): ApiObject => ({ apiVersion: apiVersionOf(t.r), kind: t.r.kind, ...obj });
  if (t.names.length === 0) {
    const list = await listObjects(ctx, t.r, { ...selectors, namespace: listNamespace(ctx, t.r) });
    return { found: list.items.map(typed), missing: [] };
  }
  const { found, missing } = await readEach(t.names, (name) => ctx.rest.request<ApiObject>('GET', objectPath(t.r, ctx.namespace, name)));
  return { found: found.map(typed), missing };
}

/**
 * Reading objects as the server's meta.k8s.io/v1 Tables (`get`'s table
 * output): a collection page by page into one Table, or one object as a
 * one-row Table.
 */
import { objectPath, type ResourceInfo } from './catalog.js';
import type { ClientContext } from './context.js';
import { concatTables, TABLE_ACCEPT, type ServerTable } from './table-printer.js';
import { listPages, type Selection } from './watch.js';

const TABLE_HEADERS = { Accept: TABLE_ACCEPT };

/** A collection as one Table (every page; the first page's resourceVersion). */
export async function listTable(ctx: ClientContext, r: ResourceInfo, sel: Selection): Promise<ServerTable> {
  const pages = await listPages<ServerTable>(ctx, r, sel, TABLE_HEADERS);
  return { ...concatTables(pages)!, metadata: { resourceVersion: pages[0]!.metadata?.resourceVersion } };
}

/** One object as a one-row Table; throws the API's NotFound when it does not exist. */
export function getTable(ctx: ClientContext, r: ResourceInfo, namespace: string | undefined, name: string): Promise<ServerTable> {
  return ctx.rest.request<ServerTable>('GET', objectPath(r, namespace, name), { headers: TABLE_HEADERS });
}

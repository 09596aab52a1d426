/**
 * The dashboard's addresses, kept in the URL hash so the apiserver only
 * has to serve index.html: `#/`, `#/nodes`, `#/nodes/<cluster>/<name>`,
 * `#/instances/<cluster>/<name>[/logs|/console]`, `#/volumes/...`,
 * `#/failures`. Pure.
 */
export type ListPage = 'nodes' | 'instances' | 'volumes';
export type InstanceTab = 'overview' | 'logs' | 'console';

export type Route =
  | { page: 'overview' }
  | { page: 'failures' }
  | { page: 'list'; resource: ListPage }
  | { page: 'node'; namespace: string; name: string }
  | { page: 'instance'; namespace: string; name: string; tab: InstanceTab }
  | { page: 'volume'; namespace: string; name: string }
  | { page: 'not-found'; path: string };

const LISTS: readonly string[] = ['nodes', 'instances', 'volumes'];
const DETAIL = { nodes: 'node', instances: 'instance', volumes: 'volume' } as const;
const TABS: readonly string[] = ['overview', 'logs', 'console'];

/** A path segment decoded; undefined for a malformed escape (`%E0`), which decodeURIComponent throws on and once blanked the page. */
function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** The route a location hash stands for. */
export function parseRoute(hash: string): Route {
  const path = hash.replace(/^#/, '').replace(/\?.*$/, '');
  const parts = path.split('/').filter((p) => p !== '').map(decoded);
  if (parts.includes(undefined)) return { page: 'not-found', path };
  const [first, namespace, name, tab, ...rest] = parts as string[];
  if (first === undefined) return { page: 'overview' };
  if (first === 'failures' && parts.length === 1) return { page: 'failures' };
  if (!LISTS.includes(first) || rest.length > 0) return { page: 'not-found', path };
  const resource = first as ListPage;
  if (namespace === undefined) return { page: 'list', resource };
  if (name === undefined) return { page: 'not-found', path };
  if (resource === 'instances') {
    if (tab !== undefined && !TABS.includes(tab)) return { page: 'not-found', path };
    return { page: 'instance', namespace, name, tab: (tab ?? 'overview') as InstanceTab };
  }
  if (tab !== undefined) return { page: 'not-found', path };
  return { page: DETAIL[resource], namespace, name };
}

/** The hash of a list page. */
export function listHref(resource: ListPage): string {
  return `#/${resource}`;
}

/** The hash of an object's page (and tab, for instances). */
export function detailHref(resource: ListPage, namespace: string, name: string, tab?: InstanceTab): string {
  const base = `#/${resource}/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}`;
  return tab && tab !== 'overview' ? `${base}/${tab}` : base;
}

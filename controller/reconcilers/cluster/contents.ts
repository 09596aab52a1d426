/**
 * What else a Cluster's namespace holds, beside Nodes, Instances, Volumes
 * and Leases, that its deletion takes down, as kube's namespace controller
 * empties a namespace: Secrets, ConfigMaps, Roles and RoleBindings in it,
 * and the join and node Tokens bound to it. Left behind, a Cluster made
 * again under the name inherited them: the old RoleBindings gave their
 * users the new Cluster, the old Secrets were readable there, and the old
 * nodes' credentials still worked. Listed through the API only while the
 * Cluster is being deleted, and only from Cairn's own API server (it serves
 * Tokens): on Kubernetes the namespace is Kubernetes', shared with whatever
 * else runs there, and emptied by its own namespace controller.
 */
import { statusCodeOf } from '../../../api/client/errors.js';
import { eachPage } from '../../../api/client/pages.js';
import type { RestClient } from '../../../api/client/rest-client.js';

/** One object to delete, by its API path. */
export interface ClusterContent {
  kind: string;
  name: string;
  path: string;
}

interface Listed {
  items: Array<{ metadata: { name: string }; spec?: { cluster?: string } }>;
  metadata: { continue?: string };
}

const NAMESPACED: Array<{ kind: string; collection: (ns: string) => string }> = [
  { kind: 'Secret', collection: (ns) => `/api/v1/namespaces/${ns}/secrets` },
  { kind: 'ConfigMap', collection: (ns) => `/api/v1/namespaces/${ns}/configmaps` },
  { kind: 'RoleBinding', collection: (ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings` },
  { kind: 'Role', collection: (ns) => `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles` },
];
const TOKENS = '/apis/auth.cairn.dev/v1alpha1/tokens';

/**
 * Every object of one collection (page by page); undefined when the server does not serve it, or does not
 * let this controller see it (run with a role short of these kinds, it leaves them, as before, rather than
 * hold the Cluster's deletion for good).
 */
async function listAll(rest: RestClient, collection: string): Promise<Listed['items'] | undefined> {
  const items: Listed['items'] = [];
  try {
    for await (const page of eachPage<Listed>(rest, collection)) items.push(...page.items);
  } catch (err) {
    if (statusCodeOf(err) === 404 || statusCodeOf(err) === 403) return undefined;
    throw err;
  }
  return items;
}

/** What the namespace `cluster` still holds of those kinds, and the Tokens bound to it; nothing on Kubernetes. */
export async function clusterContents(rest: RestClient, cluster: string): Promise<ClusterContent[]> {
  // Asked of discovery, which every user may read: Kubernetes would refuse a list of Tokens (403), not say it has none.
  if (!(await servesTokens(rest))) return [];
  const tokens = (await listAll(rest, TOKENS)) ?? [];
  const out: ClusterContent[] = tokens.filter((t) => t.spec?.cluster === cluster).map((t) => ({ kind: 'Token', name: t.metadata.name, path: `${TOKENS}/${t.metadata.name}` }));
  for (const { kind, collection } of NAMESPACED) {
    const path = collection(cluster);
    for (const o of (await listAll(rest, path)) ?? []) out.push({ kind, name: o.metadata.name, path: `${path}/${o.metadata.name}` });
  }
  return out;
}

async function servesTokens(rest: RestClient): Promise<boolean> {
  try {
    await rest.request('GET', TOKENS.slice(0, TOKENS.lastIndexOf('/')));
    return true;
  } catch (err) {
    if (statusCodeOf(err) === 404) return false;
    throw err;
  }
}

/** Deletes one; gone already counts as done, and so does one this controller may see but not delete. */
export async function deleteContent(rest: RestClient, c: ClusterContent): Promise<void> {
  try {
    await rest.request('DELETE', c.path);
  } catch (err) {
    if (statusCodeOf(err) !== 404 && statusCodeOf(err) !== 403) throw err;
  }
}

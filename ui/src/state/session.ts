/**
 * The login session: the bearer token lives in sessionStorage (gone when
 * the tab closes, never in localStorage), and so does the chosen cluster.
 */
const TOKEN_KEY = 'cairn.token';
const CLUSTER_KEY = 'cairn.cluster';

function storage(): Storage | undefined {
  try {
    return window.sessionStorage;
  } catch {
    return undefined; // storage disabled: the session lasts as long as the page
  }
}

export function loadToken(): string | undefined {
  return storage()?.getItem(TOKEN_KEY) ?? undefined;
}

export function saveToken(token: string): void {
  storage()?.setItem(TOKEN_KEY, token);
}

export function forgetToken(): void {
  storage()?.removeItem(TOKEN_KEY);
}

/** The chosen cluster (namespace); undefined for all clusters. */
export function loadCluster(): string | undefined {
  return storage()?.getItem(CLUSTER_KEY) || undefined;
}

export function saveCluster(cluster: string | undefined): void {
  if (cluster) storage()?.setItem(CLUSTER_KEY, cluster);
  else storage()?.removeItem(CLUSTER_KEY);
}

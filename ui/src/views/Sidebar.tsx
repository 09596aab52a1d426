/** The navigation, the cluster selector, the connection state and the user. */
import { useEffect, useState } from 'preact/hooks';
import type { Cluster } from '../../../api/cluster';
import { ApiError } from '../api/http';
import { collectionPath, type KubeList } from '../api/paths';
import type { ConnectionSummary } from '../state/live';
import type { Route } from '../state/route';
import { useSession } from './session';

const NAV: { href: string; label: string; active: (r: Route) => boolean }[] = [
  { href: '#/', label: 'Overview', active: (r) => r.page === 'overview' },
  { href: '#/nodes', label: 'Nodes', active: (r) => (r.page === 'list' && r.resource === 'nodes') || r.page === 'node' },
  { href: '#/instances', label: 'Instances', active: (r) => (r.page === 'list' && r.resource === 'instances') || r.page === 'instance' },
  { href: '#/volumes', label: 'Volumes', active: (r) => (r.page === 'list' && r.resource === 'volumes') || r.page === 'volume' },
  { href: '#/failures', label: 'Failures', active: (r) => r.page === 'failures' },
];

export function Sidebar({ route }: { route: Route }) {
  const { username, logout } = useSession();
  return (
    <aside class="sidebar">
      <a class="brand" href="#/">
        Cairn
      </a>
      <ClusterSelect />
      <nav>
        {NAV.map((item) => (
          <a key={item.href} href={item.href} class={item.active(route) ? 'active' : undefined} aria-current={item.active(route) ? 'page' : undefined}>
            {item.label}
          </a>
        ))}
      </nav>
      <div class="sidebar-foot">
        <ConnectionState />
        <div class="user">
          <span data-testid="whoami" title="You are logged in as this user">
            {username}
          </span>
          <button type="button" class="link" data-testid="logout" onClick={logout}>
            Log out
          </button>
        </div>
      </div>
    </aside>
  );
}

/**
 * Picks the Cluster (namespace) the lists and the overview show; all
 * clusters by default. Clusters come and go rarely, so the list is read
 * when the page opens and again whenever the selector gets focus, rather
 * than holding one of the browser's few connections for a watch.
 */
function ClusterSelect() {
  const { api, cluster, setCluster } = useSession();
  // Undefined while loading; null when the user may not list Clusters (one bound to a single Cluster).
  const [names, setNames] = useState<string[] | null>();
  const refresh = () =>
    api.json<KubeList<Cluster>>('GET', collectionPath('clusters')).then(
      (list) => setNames(list.items.map((c) => c.metadata.name ?? '').sort()),
      (err) => setNames((known) => (err instanceof ApiError && err.status === 403 ? null : (known ?? []))),
    );
  useEffect(() => void refresh(), [api]);
  if (names === null) return <ClusterInput cluster={cluster} onChange={setCluster} />;
  // A chosen cluster stays selectable while the list loads.
  const shown = cluster && !names?.includes(cluster) ? [cluster, ...(names ?? [])] : (names ?? []);
  return (
    <label class="cluster-select">
      <span>Cluster</span>
      <select data-testid="cluster-select" value={cluster ?? ''} onFocus={() => void refresh()} onChange={(e) => setCluster(e.currentTarget.value || undefined)}>
        <option value="">All clusters</option>
        {shown.map((n) => (
          <option key={n} value={n}>
            {n}
          </option>
        ))}
      </select>
    </label>
  );
}

/** For users who may not list Clusters: type the one to look at (empty for all). */
function ClusterInput({ cluster, onChange }: { cluster: string | undefined; onChange: (c: string | undefined) => void }) {
  const [text, setText] = useState(cluster ?? '');
  const apply = () => onChange(text.trim() || undefined);
  return (
    <label class="cluster-select" title="You may not list Clusters: type the name of yours">
      <span>Cluster</span>
      <input
        data-testid="cluster-input"
        placeholder="cluster name"
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        onBlur={apply}
        onKeyDown={(e) => e.key === 'Enter' && apply()}
      />
    </label>
  );
}

/** Whether the watches are live, or reconnecting (and why). */
function ConnectionState() {
  const { hub } = useSession();
  const [summary, setSummary] = useState<ConnectionSummary>(() => hub.connection());
  useEffect(() => hub.onConnectionChange(() => setSummary(hub.connection())), [hub]);
  const ok = summary.retrying === 0;
  return (
    <div class={`connection ${ok ? 'connection-live' : 'connection-retrying'}`} data-testid="connection" title={summary.error}>
      <span class="dot" />
      {ok ? 'Live' : `Reconnecting (${summary.retrying} of ${summary.watches} watches)`}
    </div>
  );
}

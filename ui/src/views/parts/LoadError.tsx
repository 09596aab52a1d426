import type { ConnectionState } from '../../api/watch';

/**
 * Why a live collection shows nothing (or stale data): the server refused
 * (with a pointer to the cluster selector when the user may not look
 * across every cluster) or the connection is being re-established.
 */
export function LoadError({ connection, allClusters }: { connection: ConnectionState; allClusters: boolean }) {
  if (connection.state !== 'refused' && connection.state !== 'retrying') return null;
  const pickCluster = connection.state === 'refused' && connection.status === 403 && allClusters;
  return (
    <p class="banner banner-error" role="alert" data-testid="load-error">
      <span>
        {connection.state === 'retrying' ? `Reconnecting: ${connection.error}` : connection.error}
        {pickCluster && ' — you may not look across every cluster: pick yours in the sidebar.'}
      </span>
    </p>
  );
}

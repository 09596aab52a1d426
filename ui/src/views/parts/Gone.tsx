/** What a detail page shows while its object loads, or once it does not (or no longer) exist. */
export function Gone({ kind, namespace, name, synced, list }: { kind: string; namespace: string; name: string; synced: boolean; list: string }) {
  return (
    <div class="card" data-testid="not-found">
      {synced ? (
        <p>
          There is no {kind} <strong>{name}</strong> in cluster <strong>{namespace}</strong> (or it was just deleted). <a href={list}>See all {kind}s</a>.
        </p>
      ) : (
        <p class="muted">Loading…</p>
      )}
    </div>
  );
}

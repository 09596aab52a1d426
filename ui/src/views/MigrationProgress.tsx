/** The last migration of an instance as status.migration reports it, updating live through the watch. */
import type { Instance } from '../../../api/instance';
import { formatBytes } from '../state/format';
import { migrationView } from '../state/migration';
import { Pill } from './parts/Pill';

export function MigrationProgress({ instance }: { instance: Instance }) {
  const view = migrationView(instance);
  if (!view) return null;
  const m = instance.status?.migration;
  const tone = view.outcome === 'failed' ? 'bad' : view.outcome === 'succeeded' ? 'good' : 'busy';
  return (
    <section class={`card migration migration-${tone}`} data-testid="migration" data-phase={view.phase}>
      <header class="card-head">
        <h2>Migration</h2>
        <Pill word={view.phase} />
      </header>
      <p data-testid="migration-text">{view.text}</p>
      {view.hint && <p class="hint">Hint: {view.hint}</p>}
      {view.percent !== undefined && !view.outcome && (
        <div class="usage-track usage-ok wide" title={`${view.percent}% of memory copied`}>
          <span class="usage-fill" style={{ width: `${view.percent}%` }} />
        </div>
      )}
      {m?.bytesTotal !== undefined && !view.outcome && (
        <p class="muted small">
          {formatBytes(m.bytesTransferred ?? 0)} of {formatBytes(m.bytesTotal)} copied
          {m.bytesRemaining !== undefined && `, ${formatBytes(m.bytesRemaining)} left`}
        </p>
      )}
    </section>
  );
}

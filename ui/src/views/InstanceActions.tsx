/** Start, stop, restart, migrate and delete an instance, as `cairn` does them. */
import { useState } from 'preact/hooks';
import type { Instance } from '../../../api/instance';
import type { Node } from '../../../api/node';
import { deleteObject, requestMigration, restartInstance, setRunState } from '../api/actions';
import { errorText } from '../api/http';
import { deleteBlocker, migrateBlocker, restartBlocker, startBlocker, stopBlocker } from '../state/action-rules';
import { migrationTargets, targetLabel } from '../state/migration';
import { cairnQuestion } from '../state/permissions';
import { useInstanceWaiter, useLive, useScopeFor } from './hooks';
import { ActionBar } from './parts/Actions';
import { ErrorBanner } from './parts/ErrorBanner';
import { useSession } from './session';

export function InstanceActions({ instance }: { instance: Instance }) {
  const { api } = useSession();
  const ns = instance.metadata.namespace ?? '';
  const name = instance.metadata.name ?? '';
  const [migrating, setMigrating] = useState(false);
  const patch = cairnQuestion('patch', 'instances', ns);
  const migrateBlocked = migrateBlocker(instance);

  return (
    <div class="instance-actions">
      <ActionBar
        actions={[
          { id: 'start', label: 'Start', question: patch, purpose: 'Set spec.runState to Running', blocker: startBlocker(instance), run: () => setRunState(api, instance, 'Running') },
          { id: 'stop', label: 'Stop', question: patch, purpose: 'Set spec.runState to Stopped (it keeps its node)', blocker: stopBlocker(instance), run: () => setRunState(api, instance, 'Stopped') },
          { id: 'restart', label: 'Restart', question: patch, purpose: 'Restart the workload once (the cairn.dev/restartedAt annotation)', blocker: restartBlocker(instance), run: () => restartInstance(api, instance) },
          { id: 'migrate', label: 'Migrate…', question: patch, purpose: 'Move it to another node (spec.migrateTo)', blocker: migrateBlocked, run: () => setMigrating(!migrating) },
          {
            id: 'delete',
            label: 'Delete',
            danger: true,
            question: cairnQuestion('delete', 'instances', ns),
            purpose: 'Delete the instance; its node stops it first',
            blocker: deleteBlocker(instance),
            confirm: { title: `Delete instance ${name}?`, text: `Instance ${ns}/${name} will be stopped on its node and removed. This cannot be undone.`, button: 'Delete' },
            run: () => deleteObject(api, 'instances', instance),
          },
        ]}
      />
      {migrating && !migrateBlocked && <MigrateForm instance={instance} onDone={() => setMigrating(false)} />}
    </div>
  );
}

/**
 * Choose a target node and ask for the migration; progress then shows in
 * MigrationProgress. The nodes are watched only while the form is open.
 */
function MigrateForm({ instance, onDone }: { instance: Instance; onDone: () => void }) {
  const { api } = useSession();
  const ns = instance.metadata.namespace ?? '';
  const waitUntil = useInstanceWaiter(ns, instance.metadata.name ?? '');
  const nodes = useLive<Node>({ resource: 'nodes', namespace: useScopeFor(ns) });
  const targets = migrationTargets(instance, nodes.collection.items.values()).map((name) => ({ name, label: targetLabel(name, nodes.collection.items.get(`${ns}/${name}`)) }));
  const [target, setTarget] = useState(targets[0]?.name ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string>();
  // The list follows the watch: if the chosen node stops qualifying, fall back to the first one left.
  const chosen = targets.some((t) => t.name === target) ? target : (targets[0]?.name ?? '');

  async function submit(e: Event) {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await requestMigration(api, instance, chosen, waitUntil);
      onDone();
    } catch (err) {
      setError(`Migrate failed: ${errorText(err)}`);
    } finally {
      setBusy(false);
    }
  }

  return (
    <form class="migrate-form" onSubmit={submit}>
      <label>
        Move from <strong>{instance.status?.nodeName ?? 'its node'}</strong> to{' '}
        <select data-testid="migrate-target" disabled={!nodes.collection.synced} value={chosen} onChange={(e) => setTarget(e.currentTarget.value)}>
          {targets.map((t) => (
            <option key={t.name} value={t.name}>
              {t.label}
            </option>
          ))}
        </select>
      </label>
      <span class="muted small">
        {!nodes.collection.synced
          ? 'Loading the nodes…'
          : targets.length === 0
            ? 'No other node of its cluster is Ready and schedulable.'
            : instance.spec.driver === 'qemu'
              ? 'A running VM moves live when its migration mode is Live.'
              : 'A process is stopped here and started there.'}
      </span>
      <div class="buttons">
        <button type="button" onClick={onDone}>
          Cancel
        </button>
        <button type="submit" class="primary" data-testid="migrate-confirm" disabled={busy || !chosen}>
          {busy ? 'Migrating…' : 'Migrate'}
        </button>
      </div>
      <ErrorBanner message={error} onDismiss={() => setError(undefined)} />
    </form>
  );
}

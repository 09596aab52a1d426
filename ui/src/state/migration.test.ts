import { describe, expect, it } from 'vitest';
import { lastMigrationFinished, migrationInFlight, migrationTargets, migrationView, targetLabel } from './migration';
import { instance, node } from './test-fixtures';

describe('migrationTargets', () => {
  it('offers Ready, schedulable nodes of the same cluster other than the current one', () => {
    const web = instance('web', { node: 'node-a' });
    const nodes = [
      node('node-a'),
      node('node-b'),
      node('node-c', { phase: 'Unreachable', ready: false }),
      node('node-d', { unschedulable: true }),
      node('node-e', { namespace: 'other' }),
      node('node-0'),
    ];
    expect(migrationTargets(web, nodes)).toEqual(['node-0', 'node-b']);
  });
});

describe('targetLabel', () => {
  it('shows what is allocated on the node', () => {
    expect(targetLabel('node-b', node('node-b', { cpus: 4, memory: '8Gi', allocated: { cpus: 1, memory: '64Mi' } }))).toBe('node-b (cpu 1/4, memory 64 MiB/8 GiB)');
    expect(targetLabel('node-x', undefined)).toBe('node-x');
  });
});

describe('migration report', () => {
  const withMigration = (migration: NonNullable<ReturnType<typeof instance>['status']>['migration']) => {
    const i = instance('vm', { driver: 'qemu', node: 'node-a' });
    i.status = { ...i.status, migration };
    return i;
  };

  it('shows progress of a transfer as a percentage', () => {
    const i = withMigration({ phase: 'Transferring', sourceNode: 'node-a', targetNode: 'node-b', mode: 'Live', bytesTotal: 400, bytesTransferred: 100 });
    expect(migrationInFlight(i)).toBe(true);
    expect(migrationView(i)).toEqual({ phase: 'Transferring', percent: 25, text: 'Moving from node-a to node-b (live): Transferring' });
  });

  it('reports the outcome once finished', () => {
    const done = withMigration({ phase: 'Completed', targetNode: 'node-b', mode: 'Live', downtimeMs: 42, totalTimeMs: 900 });
    expect(migrationView(done)).toMatchObject({ outcome: 'succeeded', text: 'Migrated to node-b (live): downtime 42 ms, total 900 ms.' });
    expect(lastMigrationFinished(done, 'node-b')).toBe(true);
    expect(lastMigrationFinished(done, 'node-c')).toBe(false);
    const failed = withMigration({ phase: 'Failed', targetNode: 'node-b', reason: 'Timeout', message: 'took too long. Hint: raise timeoutSeconds' });
    expect(migrationView(failed)).toMatchObject({ outcome: 'failed', text: 'Migration to node-b failed (Timeout): took too long.', hint: 'raise timeoutSeconds' });
    const cold = withMigration({ phase: 'Completed', targetNode: 'node-c', mode: 'Cold' });
    expect(migrationView(cold)?.text).toBe('Migrated to node-c (cold).');
    expect(migrationInFlight(failed)).toBe(false);
  });

  it('has nothing to show without a report', () => {
    expect(migrationView(instance('web'))).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { condition, instance, node, volume } from './test-fixtures';
import { convergence, countByPhase, loadPerNode, nodeCapacity, usagePercent } from './summaries';

describe('countByPhase', () => {
  it('counts objects by status.phase, a missing phase as Pending', () => {
    const counts = countByPhase([instance('a', { phase: 'Running' }), instance('b', { phase: 'Running' }), instance('c', { phase: 'Failed' }), instance('d')]);
    expect(counts).toEqual({ Running: 2, Failed: 1, Pending: 1 });
  });
});

describe('node capacity', () => {
  it('uses the allocation the controller counted', () => {
    const c = nodeCapacity(node('a', { cpus: 4, memory: '8Gi', allocated: { cpus: 3, memory: '2Gi', instances: 2 } }), undefined);
    expect(c.cpu).toEqual({ used: 3, total: 4 });
    expect(c.memory).toEqual({ used: 2 * 2 ** 30, total: 8 * 2 ** 30 });
    expect(c.instances).toBe(2);
    expect(usagePercent(c.cpu)).toBe(75);
    expect(usagePercent(c.memory)).toBe(25);
  });

  it('falls back to the instances placed on the node until the controller counted them', () => {
    const loads = loadPerNode([
      instance('x', { node: 'a', cpus: 2, memory: '512Mi' }),
      instance('y', { node: 'a', cpus: 1, memory: '1Gi' }),
      instance('z', { node: 'b' }),
      instance('unplaced'),
      instance('elsewhere', { node: 'a', namespace: 'other' }),
    ]);
    const c = nodeCapacity(node('a'), loads.get('demo/a'));
    expect(c.cpu.used).toBe(3);
    expect(c.memory.used).toBe(1536 * 2 ** 20);
    expect(c.instances).toBe(2);
    expect(loads.get('other/a')?.instances).toBe(1);
  });

  it('reports overcommit above 100% and an unknown total as undefined', () => {
    expect(usagePercent({ used: 6, total: 4 })).toBe(150);
    expect(usagePercent({ used: 1 })).toBeUndefined();
    expect(usagePercent({ used: 0, total: 0 })).toBe(0);
  });
});

describe('convergence', () => {
  it('counts objects whose latest spec is observed and that are Ready (or Stopped as asked)', () => {
    const result = convergence(
      [node('a'), node('b', { phase: 'Draining' })],
      [
        instance('ready', { phase: 'Running', ready: true }),
        instance('stale', { phase: 'Running', ready: true, generation: 3, observed: 2 }),
        instance('stopped', { phase: 'Stopped', runState: 'Stopped', ready: false }),
        instance('starting', { phase: 'Starting', ready: false }),
      ],
      [volume('data', 'Ready', true), volume('degraded', 'Degraded', false)],
    );
    expect(result.total).toBe(8);
    expect(result.converged).toBe(4);
    expect(result.pending.map((p) => `${p.kind}/${p.name}`)).toEqual(['Node/b', 'Instance/stale', 'Instance/starting', 'Volume/degraded']);
  });

  it('does not count an object being deleted', () => {
    const doomed = instance('doomed', { phase: 'Running', ready: true });
    doomed.metadata.deletionTimestamp = '2024-05-01T12:00:00Z';
    expect(convergence([], [doomed], []).converged).toBe(0);
  });

  it('does not count a Running instance without a Ready condition', () => {
    expect(convergence([], [instance('x', { phase: 'Running', conditions: [condition('Scheduled', 'True')] })], []).converged).toBe(0);
  });
});

import { describe, expect, it } from 'vitest';
import { healState } from './heal';
import { condition, volume } from './test-fixtures';

const brick = (pendingHeals: number, splitBrain = 0) => ({ port: 24009, state: 'Running' as const, pendingHeals, splitBrain });

describe('healState', () => {
  it('sums pending heals over the bricks while healing', () => {
    const v = volume('data', 'Degraded', true, {
      replicas: [{ index: 0, brick: brick(3) }, { index: 1, brick: brick(4) }, { index: 2, brick: brick(0) }],
      conditions: [condition('Degraded', 'True', 'HealPending')],
    });
    expect(healState(v)).toEqual({ pendingHeals: 7, splitBrain: 0, healing: true, tone: 'busy', text: 'Healing: 7 entries left' });
  });

  it('puts split-brain first', () => {
    const v = volume('data', 'Degraded', true, { replicas: [{ index: 0, brick: brick(2, 1) }] });
    expect(healState(v)).toMatchObject({ splitBrain: 1, tone: 'bad' });
  });

  it('is in sync with nothing pending, and absent without bricks', () => {
    expect(healState(volume('data', 'Ready', true, { replicas: [{ index: 0, brick: brick(0) }] }))?.tone).toBe('good');
    expect(healState(volume('file', 'Ready', true, { replicas: [{ index: 0, path: '/x' }] }))).toBeUndefined();
  });
});

import { describe, expect, it } from 'vitest';
import { collectFailures, groupByReason, isFailureCondition, splitHint } from '../../../cli/status/failures';
import { condition, instance, node, volume, workItem } from './test-fixtures';

const none = { clusters: [], nodes: [], instances: [], volumes: [], workItems: [] };

describe('isFailureCondition', () => {
  it('counts a stuck Ready=False, not one on its way', () => {
    expect(isFailureCondition(condition('Ready', 'False', 'CrashLoopBackOff'))).toBe(true);
    expect(isFailureCondition(condition('Ready', 'False', 'Starting'))).toBe(false);
    expect(isFailureCondition(condition('Ready', 'True', 'Running'))).toBe(false);
  });

  it('counts Unknown only when the node stopped answering', () => {
    expect(isFailureCondition(condition('Ready', 'Unknown', 'NodeUnreachable'))).toBe(true);
    expect(isFailureCondition(condition('Ready', 'Unknown', 'Whatever'))).toBe(false);
  });

  it('ignores condition types that are not failure conditions', () => {
    expect(isFailureCondition(condition('LimitsEnforced', 'False', 'NoCgroups'))).toBe(false);
  });
});

describe('collectFailures', () => {
  it('reports one failure per reason and message, listing every condition that says it', () => {
    const msg = '0/3 nodes are available: 3 insufficient memory';
    const stuck = instance('big', { conditions: [condition('Ready', 'False', 'Unschedulable', msg), condition('Scheduled', 'False', 'Unschedulable', msg)] });
    const [f, ...rest] = collectFailures({ ...none, instances: [stuck] });
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ kind: 'Instance', name: 'big', reason: 'Unschedulable', message: msg, conditions: ['Scheduled=False', 'Ready=False'] });
    expect(f?.hint).toContain('lower spec.memory');
  });

  it('prefers the hint the controller appended to the message', () => {
    const v = volume('data', 'Degraded', false, { conditions: [condition('Ready', 'False', 'ReplicaFailed', 'replica 1 failed. Hint: free space on node-c')] });
    const [f] = collectFailures({ ...none, volumes: [v] });
    expect(f?.message).toBe('replica 1 failed.');
    expect(f?.hint).toBe('free space on node-c');
  });

  it('reports Failed WorkItems with their node, owner, error and hint', () => {
    const failed = workItem('web.node-b', 'Failed', { reason: 'NoSpace', message: 'disk full', hint: 'delete old files' });
    const [f, ...rest] = collectFailures({ ...none, workItems: [failed, workItem('ok.node-b', 'Done')] });
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ kind: 'WorkItem', node: 'node-b', reason: 'NoSpace', message: 'disk full', hint: 'delete old files', owner: 'instance web', attempts: 3 });
  });

  it('names the node of an instance and the node of a failing node', () => {
    const failures = collectFailures({
      ...none,
      nodes: [node('node-c', { ready: false })],
      instances: [instance('web', { node: 'node-a', conditions: [condition('Ready', 'False', 'Exited')] })],
    });
    expect(failures.map((f) => `${f.kind}:${f.node}:${f.reason}`)).toEqual(['Node:node-c:Test', 'Instance:node-a:Exited']);
  });
});

describe('groupByReason', () => {
  it('puts the largest group first, then orders by reason', () => {
    const base = { kind: 'Instance' as const, message: '', hint: '' };
    const groups = groupByReason([
      { ...base, name: 'a', reason: 'Exited' },
      { ...base, name: 'b', reason: 'Unschedulable' },
      { ...base, name: 'c', reason: 'Unschedulable' },
      { ...base, name: 'd', reason: 'Cancelled' },
    ]);
    expect(groups.map((g) => [g.reason, g.failures.map((f) => f.name)])).toEqual([
      ['Unschedulable', ['b', 'c']],
      ['Cancelled', ['d']],
      ['Exited', ['a']],
    ]);
  });
});

describe('splitHint', () => {
  it('splits at the last Hint:', () => {
    expect(splitHint('a. Hint: b. Hint: c')).toEqual(['a. Hint: b.', 'c']);
    expect(splitHint('no hint')).toEqual(['no hint', undefined]);
  });
});

import { describe, expect, it } from 'vitest';
import { consoleBlocker, cordonBlocker, deleteBlocker, drainBlocker, migrateBlocker, restartBlocker, startBlocker, stopBlocker, uncordonBlocker } from './action-rules';
import { availability, cairnQuestion, describeQuestion, questionKey } from './permissions';
import { instance, node } from './test-fixtures';

const patch = cairnQuestion('patch', 'instances', 'demo');

describe('availability', () => {
  it('disables an action the user may not take, saying which permission is missing', () => {
    expect(availability(false, patch, 'Stop it')).toEqual({ disabled: true, title: 'You are not allowed to patch instances in cluster demo.' });
  });

  it('disables while the review is pending', () => {
    expect(availability(undefined, patch, 'Stop it')).toEqual({ disabled: true, title: 'Checking your permissions…' });
  });

  it('disables an allowed action the object rules out, with the reason', () => {
    expect(availability(true, patch, 'Stop it', 'It is already stopped.')).toEqual({ disabled: true, title: 'It is already stopped.' });
  });

  it('enables an allowed action, titled with its purpose', () => {
    expect(availability(true, patch, 'Stop it')).toEqual({ disabled: false, title: 'Stop it' });
  });

  it('lets a missing permission win over a state blocker', () => {
    expect(availability(false, patch, 'Stop it', 'It is already stopped.').title).toContain('not allowed');
  });
});

describe('questions', () => {
  it('describes subresources and cluster-wide questions', () => {
    expect(describeQuestion(cairnQuestion('create', 'instances', 'demo', 'console'))).toBe('create instances/console in cluster demo');
    expect(describeQuestion(cairnQuestion('create', 'instances'))).toBe('create instances in every cluster');
  });

  it('keys differ by every attribute', () => {
    const keys = new Set([patch, cairnQuestion('patch', 'instances', 'prod'), cairnQuestion('delete', 'instances', 'demo'), cairnQuestion('patch', 'instances', 'demo', 'status')].map(questionKey));
    expect(keys.size).toBe(4);
  });
});

describe('action rules', () => {
  const running = instance('web', { phase: 'Running', node: 'node-a' });
  const stopped = instance('web', { phase: 'Stopped', runState: 'Stopped' });

  it('allows start only when stopped, stop and restart only when running', () => {
    expect(startBlocker(running)).toMatch(/already meant to run/);
    expect(startBlocker(stopped)).toBeUndefined();
    expect(stopBlocker(running)).toBeUndefined();
    expect(stopBlocker(stopped)).toMatch(/already stopped/);
    expect(restartBlocker(stopped)).toMatch(/start it instead/);
    expect(restartBlocker(running)).toBeUndefined();
  });

  it('blocks migration without targets, while one is under way, and for a pinned instance', () => {
    expect(migrateBlocker(running, [])).toMatch(/No other node/);
    expect(migrateBlocker(running, ['node-b'])).toBeUndefined();
    const moving = instance('web', { phase: 'Migrating' });
    moving.status = { ...moving.status, migration: { phase: 'Transferring', targetNode: 'node-c' } };
    expect(migrateBlocker(moving, ['node-b'])).toBe('A migration to node-c is under way.');
    const pinned = instance('web');
    pinned.spec.placement = { nodeName: 'node-a' };
    expect(migrateBlocker(pinned, ['node-b'])).toMatch(/pinned to node node-a/);
  });

  it('blocks every change of an object being deleted', () => {
    const doomed = instance('web', { runState: 'Stopped' });
    doomed.metadata.deletionTimestamp = '2024-05-01T12:00:00Z';
    expect(deleteBlocker(doomed)).toBe('It is being deleted.');
    expect(startBlocker(doomed)).toBe('It is being deleted.');
  });

  it('offers the console only for qemu instances', () => {
    expect(consoleBlocker(instance('vm', { driver: 'qemu' }))).toBeUndefined();
    expect(consoleBlocker(instance('p', { driver: 'process' }))).toMatch(/Only virtual machines/);
  });

  it('allows cordon, drain and uncordon according to the node spec', () => {
    const plain = node('a');
    const cordoned = node('a', { unschedulable: true });
    const draining = node('a', { unschedulable: true, drain: true });
    expect([cordonBlocker(plain), drainBlocker(plain), uncordonBlocker(plain)]).toEqual([undefined, undefined, 'It is not cordoned.']);
    expect([cordonBlocker(cordoned), drainBlocker(cordoned), uncordonBlocker(cordoned)]).toEqual(['It is already cordoned.', undefined, undefined]);
    expect(drainBlocker(draining)).toMatch(/already draining/);
    expect(uncordonBlocker(draining)).toBeUndefined();
  });
});

import { expect } from 'chai';
import type { Instance } from '../../../../api/instance.js';
import {
  instanceNodes,
  isLiveReplica,
  liveReplicaNodes,
  nodeAllocation,
  occupiesStorage,
  toNodeAllocated,
} from '../../../../controller/scheduler/index.js';
import { instance, node, snapshot, volume } from './builders.js';

const GI = 2 ** 30;
const MI = 2 ** 20;

function migrating(phase: 'Transferring' | 'Completed' | 'Failed'): Instance {
  return instance('m', { cpus: 2, memory: '1Gi' }, { nodeName: 'a', migration: { sourceNode: 'a', targetNode: 'b', phase } });
}

describe('scheduler: where objects sit', () => {
  it('an instance occupies its status.nodeName, nothing when unplaced', () => {
    expect(instanceNodes(instance('x', {}, { nodeName: 'a' }))).to.deep.equal(['a']);
    expect(instanceNodes(instance('x'))).to.deep.equal([]);
  });

  it('a migration in flight occupies both ends; a finished one only status.nodeName', () => {
    expect(instanceNodes(migrating('Transferring'))).to.deep.equal(['a', 'b']);
    expect(instanceNodes(migrating('Completed'))).to.deep.equal(['a']);
    expect(instanceNodes(migrating('Failed'))).to.deep.equal(['a']);
  });

  it('a replica is live unless Lost, Deleting or Failed, and occupies storage unless Lost', () => {
    const states = ['Pending', 'Creating', 'Ready', 'Resizing', 'Failed', 'Lost', 'Deleting', undefined] as const;
    const table = states.map((state) => [state, isLiveReplica({ index: 0, nodeName: 'a', state }), occupiesStorage({ index: 0, nodeName: 'a', state })]);
    expect(table).to.deep.equal([
      ['Pending', true, true],
      ['Creating', true, true],
      ['Ready', true, true],
      ['Resizing', true, true],
      ['Failed', false, true],
      ['Lost', false, false],
      ['Deleting', false, true],
      [undefined, true, true],
    ]);
  });

  it('an unplaced replica neither holds data nor occupies storage', () => {
    expect(isLiveReplica({ index: 0, state: 'Pending' })).to.equal(false);
    expect(occupiesStorage({ index: 0, state: 'Pending' })).to.equal(false);
  });

  it('lists the distinct nodes with live replicas in replica index order', () => {
    const v = volume('v', {}, ['c', ['a', 'Lost'], 'b', 'c']);
    v.status!.replicas!.reverse();
    expect(liveReplicaNodes(v)).to.deep.equal(['c', 'b']);
  });
});

describe('scheduler: nodeAllocation', () => {
  it('sums placed instances and replicas per node, zero for empty nodes', () => {
    const usage = nodeAllocation(
      snapshot({
        nodes: [node('a'), node('b'), node('empty')],
        instances: [
          instance('i1', { cpus: 2, memory: '1Gi' }, { nodeName: 'a' }),
          instance('i2', {}, { nodeName: 'a' }),
          instance('i3', { cpus: 3 }, { nodeName: 'b' }),
          instance('pending', { cpus: 8 }),
        ],
        volumes: [volume('v1', { size: '10Gi', replicas: 2 }, ['a', 'b']), volume('v2', { size: '5Gi' }, ['a'])],
      }),
    );
    expect(Object.fromEntries(usage)).to.deep.equal({
      a: { cpus: 3, memoryBytes: GI + 128 * MI, storageBytes: 15 * GI, instances: 2, volumeReplicas: 2 },
      b: { cpus: 3, memoryBytes: 128 * MI, storageBytes: 10 * GI, instances: 1, volumeReplicas: 1 },
      empty: { cpus: 0, memoryBytes: 0, storageBytes: 0, instances: 0, volumeReplicas: 0 },
    });
  });

  it('counts placements on nodes the snapshot does not list', () => {
    const usage = nodeAllocation(snapshot({ instances: [instance('i', {}, { nodeName: 'gone' })] }));
    expect(usage.get('gone')?.instances).to.equal(1);
  });

  it('counts an instance on both ends of a migration in flight', () => {
    const usage = nodeAllocation(snapshot({ nodes: [node('a'), node('b')], instances: [migrating('Transferring')] }));
    expect(usage.get('a')).to.include({ cpus: 2, memoryBytes: GI, instances: 1 });
    expect(usage.get('b')).to.include({ cpus: 2, memoryBytes: GI, instances: 1 });
  });

  it('Lost replicas occupy nothing; Failed and Deleting ones keep their space until removed', () => {
    const v = volume('v', { size: '1Gi', replicas: 3 }, [['a', 'Lost'], ['b', 'Failed'], ['c', 'Deleting']]);
    const usage = nodeAllocation(snapshot({ nodes: [node('a'), node('b'), node('c')], volumes: [v] }));
    expect([usage.get('a')!.storageBytes, usage.get('b')!.storageBytes, usage.get('c')!.storageBytes]).to.deep.equal([0, GI, GI]);
    expect([usage.get('a')!.volumeReplicas, usage.get('b')!.volumeReplicas]).to.deep.equal([0, 1]);
  });

  it('a replica occupies the larger of spec.size and its observed size (resizing either way)', () => {
    const growing = volume('g', { size: '2Gi' }, ['a']);
    growing.status!.replicas![0]!.size = '1Gi';
    const shrinking = volume('s', { size: '1Gi' }, ['b']);
    shrinking.status!.replicas![0]!.size = '3Gi';
    const usage = nodeAllocation(snapshot({ volumes: [growing, shrinking] }));
    expect([usage.get('a')!.storageBytes, usage.get('b')!.storageBytes]).to.deep.equal([2 * GI, 3 * GI]);
  });

  it('converts to Node.status.allocated with quantities', () => {
    expect(toNodeAllocated({ cpus: 3, memoryBytes: GI + 128 * MI, storageBytes: 0, instances: 2, volumeReplicas: 0 })).to.deep.equal({
      cpus: 3,
      memory: '1152Mi',
      storage: '0',
      instances: 2,
      volumeReplicas: 0,
    });
  });
});

import { expect } from 'chai';
import { scheduleVolumeReplicas, type ReplicaPlacement } from '../../../../controller/scheduler/index.js';
import { cluster, node, snapshot, volume } from './builders.js';

function nodesOf(result: ReplicaPlacement): string[] {
  if ('unschedulable' in result) expect.fail(`expected every replica placed, got: ${result.message}`);
  return result.nodeNames;
}

describe('scheduler: scheduleVolumeReplicas', () => {
  it('places one replica by default', () => {
    expect(nodesOf(scheduleVolumeReplicas(volume('v'), snapshot({ nodes: [node('b'), node('a')] })))).to.deep.equal(['a']);
  });

  it('spreads replicas over distinct nodes by least storage fraction after placement, then by name', () => {
    const s = snapshot({
      nodes: [node('a', { storage: '100Gi' }), node('b', { storage: '100Gi' }), node('c', { storage: '40Gi' }), node('d', { storage: '100Gi' })],
      volumes: [volume('other', { size: '30Gi' }, ['a'])],
    });
    // After placing 10Gi: a 40%, b 10%, c 25%, d 10%.
    expect(nodesOf(scheduleVolumeReplicas(volume('v', { replicas: 3 }), s))).to.deep.equal(['b', 'd', 'c']);
  });

  it('keeps live replicas where they are and places only the missing ones', () => {
    const v = volume('v', { replicas: 3 }, ['c', ['a', 'Lost']]);
    const s = snapshot({ nodes: [node('a'), node('b'), node('c'), node('d')], volumes: [v] });
    expect(nodesOf(scheduleVolumeReplicas(v, s))).to.deep.equal(['c', 'a', 'b']);
  });

  it('replaces Failed and Deleting replicas, whose files still take space on their node', () => {
    const v = volume('v', { size: '60Gi', replicas: 2 }, [['a', 'Failed'], ['b', 'Deleting']]);
    const s = snapshot({ nodes: [node('a'), node('b'), node('c')], volumes: [v] });
    expect(scheduleVolumeReplicas(v, s)).to.deep.equal({
      unschedulable: true,
      message: '1/3 nodes are available: 2 insufficient storage. 1 of 2 replicas is still missing.',
      reasons: { 'insufficient storage': 2 },
      nodeNames: ['c'],
    });
  });

  it('returns every live replica when there are more than wanted (scale-down is the Volume reconciler’s call)', () => {
    const v = volume('v', { replicas: 1 }, ['b', 'a']);
    expect(nodesOf(scheduleVolumeReplicas(v, snapshot({ nodes: [node('a'), node('b')] })))).to.deep.equal(['b', 'a']);
  });

  it('replaces a lost replica of a volume whose lowering of spec.replicas was refused: it keeps the replicas it has', () => {
    // spec.replicas lowered 3 → 2 (refused: replicas 1 and 2 exist), then replica 0's node lost and its WorkItem released.
    const v = volume('v', { replicas: 2 }, ['gone', 'b', 'c']);
    v.status!.replicas![0] = { index: 0, state: 'Pending' };
    const s = snapshot({ nodes: [node('a'), node('b'), node('c')], volumes: [v] });
    expect(nodesOf(scheduleVolumeReplicas(v, s))).to.deep.equal(['b', 'c', 'a']);
  });

  it('replaces a live replica on an excluded node and never picks an excluded node', () => {
    const v = volume('v', { replicas: 2 }, ['a', 'b']);
    const s = snapshot({ nodes: [node('a'), node('b'), node('c'), node('d')] });
    expect(nodesOf(scheduleVolumeReplicas(v, s, { excludeNodes: ['a', 'c'] }))).to.deep.equal(['b', 'd']);
  });

  it('honours spec.nodeSelector', () => {
    const s = snapshot({ nodes: [node('a'), node('b', { labels: { disk: 'ssd' } })] });
    expect(nodesOf(scheduleVolumeReplicas(volume('v', { nodeSelector: { disk: 'ssd' } }), s))).to.deep.equal(['b']);
  });

  it('spreads replicas across zones (topology.kubernetes.io/zone) before storage preference, counting kept replicas', () => {
    const zone = (name: string, z: string, storage = '100Gi') => node(name, { labels: { 'topology.kubernetes.io/zone': z }, storage });
    const nodes = [zone('a', 'z1'), zone('b', 'z1'), zone('c', 'z2', '40Gi'), zone('d', 'z3', '40Gi')];
    expect(nodesOf(scheduleVolumeReplicas(volume('v', { replicas: 3, driver: 'gluster', size: '10Gi' }), snapshot({ nodes })))).to.deep.equal(['a', 'c', 'd']);
    const kept = volume('v', { replicas: 2, driver: 'gluster', size: '10Gi' }, ['a']);
    expect(nodesOf(scheduleVolumeReplicas(kept, snapshot({ nodes: nodes.slice(0, 3), volumes: [kept] })))).to.deep.equal(['a', 'c']);
    // Without zones, storage decides as before.
    expect(nodesOf(scheduleVolumeReplicas(volume('v', { replicas: 2, driver: 'gluster', size: '10Gi' }), snapshot({ nodes: [node('a'), node('b'), node('c', { storage: '40Gi' })] })))).to.deep.equal(['a', 'b']);
  });

  it('gives gluster bricks only to nodes that do not report gluster unavailable; file replicas to any', () => {
    const without = node('a');
    without.status!.drivers = [{ name: 'gluster', available: false, message: 'glusterfsd is not installed' }];
    const s = snapshot({ nodes: [without, node('b')] });
    expect(nodesOf(scheduleVolumeReplicas(volume('v', { driver: 'gluster' }), s))).to.deep.equal(['b']);
    expect((scheduleVolumeReplicas(volume('v', { driver: 'gluster', replicas: 2 }), s) as { message?: string }).message).to.match(/^1\/2 nodes are available: 1 gluster unavailable\./);
    expect(nodesOf(scheduleVolumeReplicas(volume('v'), snapshot({ nodes: [without] })))).to.deep.equal(['a']);
  });

  it('never uses an ineligible node', () => {
    const s = snapshot({
      nodes: [node('a', { unschedulable: true }), node('b', { drain: true }), node('c', { phase: 'Unreachable' }), node('d', { ready: 'False' }), node('e')],
    });
    const r = scheduleVolumeReplicas(volume('v', { replicas: 2 }), s);
    expect(r).to.deep.equal({
      unschedulable: true,
      message: '1/5 nodes are available: 2 unschedulable, 1 not ready, 1 unreachable. 1 of 2 replicas is still missing.',
      reasons: { unschedulable: 2, 'not ready': 1, unreachable: 1 },
      nodeNames: ['e'],
    });
  });

  it('counts storage of other volumes’ replicas, but not of Lost ones, with the overcommit applied', () => {
    const others = [volume('x', { size: '60Gi' }, ['a']), volume('y', { size: '90Gi' }, [['b', 'Lost']])];
    const s = snapshot({ nodes: [node('a'), node('b', { storage: '50Gi' })], volumes: others });
    const v = volume('v', { size: '50Gi', replicas: 2 });
    expect(scheduleVolumeReplicas(v, s)).to.deep.include({ message: '1/2 nodes are available: 1 insufficient storage. 1 of 2 replicas is still missing.' });
    expect(nodesOf(scheduleVolumeReplicas(v, { ...s, cluster: cluster({ overcommit: { storage: 1.1 } }) }))).to.deep.equal(['b', 'a']);
  });

  it('reads the volume as passed, not its older copy in the snapshot', () => {
    const stale = volume('v', { size: '80Gi' }, ['a']);
    const current = volume('v', { size: '80Gi' });
    const s = snapshot({ nodes: [node('a')], volumes: [stale] });
    expect(nodesOf(scheduleVolumeReplicas(current, s))).to.deep.equal(['a']);
  });

  it('says how many nodes could take a replica, why the others cannot, and how many replicas are missing', () => {
    const v = volume('v', { replicas: 3 }, ['a']);
    const s = snapshot({ nodes: [node('a'), node('b'), node('c', { storage: '1Gi' }), node('d', { storage: '1Gi' })] });
    expect(scheduleVolumeReplicas(v, s)).to.deep.equal({
      unschedulable: true,
      message: '1/4 nodes are available: 2 insufficient storage, 1 already holds a replica. 1 of 3 replicas is still missing.',
      reasons: { 'insufficient storage': 2, 'already holds a replica': 1 },
      nodeNames: ['a', 'b'],
    });
  });

  it('reports a cluster without nodes', () => {
    expect(scheduleVolumeReplicas(volume('v', { replicas: 2 }), snapshot({}))).to.deep.equal({
      unschedulable: true,
      message: '0/0 nodes are available: no nodes registered in cluster c1. 2 of 2 replicas are still missing.',
      reasons: {},
      nodeNames: [],
    });
  });
});

import { expect } from 'chai';
import type { Instance } from '../../../../api/instance.js';
import type { Volume } from '../../../../api/volume.js';
import { scheduleInstance, type ClusterSnapshot, type InstancePlacement } from '../../../../controller/scheduler/index.js';
import { cluster, instance, node, placedOn, snapshot, volume } from './builders.js';

function nodeOf(result: InstancePlacement): string {
  if ('unschedulable' in result) expect.fail(`expected a node, got: ${result.message}`);
  return result.nodeName;
}

function messageOf(result: InstancePlacement): string {
  if (!('unschedulable' in result)) expect.fail(`expected unschedulable, got node ${result.nodeName}`);
  return result.message;
}

describe('scheduler: scheduleInstance picks the least allocated node', () => {
  it('places on the node with the lowest max(cpu, memory) fraction after placement', () => {
    const s = snapshot({
      nodes: [node('a'), node('b'), node('c')],
      instances: [instance('x', { cpus: 2 }, { nodeName: 'a' }), instance('y', { cpus: 1 }, { nodeName: 'b' })],
    });
    expect(nodeOf(scheduleInstance(instance('new'), s))).to.equal('c');
  });

  it('scores a node by its fuller resource: low cpu use does not hide high memory use', () => {
    const s = snapshot({
      nodes: [node('a', { cpus: 8, memory: '4Gi' }), node('b', { cpus: 4, memory: '8Gi' })],
      // a: cpu 1/8, memory 3Gi/4Gi → 0.78 after; b: cpu 2/4 → 0.5 after.
      instances: [instance('x', { memory: '3Gi' }, { nodeName: 'a' }), instance('y', { memory: '1Gi' }, { nodeName: 'b' })],
    });
    expect(nodeOf(scheduleInstance(instance('new', { cpus: 1, memory: '128Mi' }), s))).to.equal('b');
  });

  it('breaks score ties by fewer instances, then by node name', () => {
    const s = snapshot({
      nodes: [node('b', { cpus: 8, memory: '8Gi' }), node('a', { cpus: 4, memory: '4Gi' })],
      // Both score 1/4 after placement, but a holds two instances and b one.
      instances: [
        instance('x', { cpus: 1, memory: '1Gi' }, { nodeName: 'b' }),
        instance('z1', { cpus: 0, memory: '0' }, { nodeName: 'a' }),
        instance('z2', { cpus: 0, memory: '0' }, { nodeName: 'a' }),
      ],
    });
    expect(nodeOf(scheduleInstance(instance('new', { cpus: 1, memory: '0' }), s))).to.equal('b');
    expect(nodeOf(scheduleInstance(instance('new'), snapshot({ nodes: [node('b'), node('c'), node('a')] })))).to.equal('a');
  });

  it('does not count the instance itself (rescheduling sees its own resources as free)', () => {
    const me = instance('me', { cpus: 4 }, { nodeName: 'a' });
    const s = snapshot({ nodes: [node('a', { cpus: 4 })], instances: [me] });
    expect(nodeOf(scheduleInstance(me, s))).to.equal('a');
  });

  it('sees assumed placements overlaid by the caller', () => {
    const first = instance('first', { cpus: 3 });
    const s = snapshot({ nodes: [node('a'), node('b')], instances: [first] });
    const where = nodeOf(scheduleInstance(first, s));
    const after = { ...s, instances: [placedOn(first, where)] };
    expect(nodeOf(scheduleInstance(instance('second', { cpus: 3 }), after))).to.not.equal(where);
  });

  it('applies the default request (1 cpu, 128Mi) when spec leaves it out', () => {
    const s = snapshot({ nodes: [node('a', { cpus: 1, memory: '128Mi' })] });
    expect(nodeOf(scheduleInstance(instance('i'), s))).to.equal('a');
    const full = { ...s, instances: [instance('x', {}, { nodeName: 'a' })] };
    expect(messageOf(scheduleInstance(instance('i'), full))).to.equal('0/1 nodes are available: 1 insufficient cpu.');
  });
});

describe('scheduler: scheduleInstance constraints', () => {
  it('skips cordoned, draining, not-Ready, unreachable and deleted nodes', () => {
    const s = snapshot({
      nodes: [
        node('cordoned', { unschedulable: true }),
        node('draining', { drain: true }),
        node('notready', { ready: 'False' }),
        node('unreachable', { phase: 'Unreachable' }),
        node('deleted', { deleting: true }),
        node('ok', { cpus: 1 }),
      ],
    });
    expect(nodeOf(scheduleInstance(instance('i'), s))).to.equal('ok');
    const none = { ...s, nodes: s.nodes.slice(0, 5) };
    expect(messageOf(scheduleInstance(instance('i'), none))).to.equal(
      '0/5 nodes are available: 2 unschedulable, 1 being deleted, 1 not ready, 1 unreachable.',
    );
  });

  it('honours placement.nodeSelector', () => {
    const s = snapshot({ nodes: [node('a', { labels: { zone: 'z1' } }), node('b', { labels: { zone: 'z2' } })] });
    expect(nodeOf(scheduleInstance(instance('i', { placement: { nodeSelector: { zone: 'z2' } } }), s))).to.equal('b');
    const r = scheduleInstance(instance('i', { placement: { nodeSelector: { zone: 'z3' } } }), s);
    expect(messageOf(r)).to.equal("0/2 nodes are available: 2 didn't match node selector.");
  });

  it('places a pinned instance on its node only, even when others are emptier', () => {
    const s = snapshot({ nodes: [node('a'), node('b')], instances: [instance('x', { cpus: 3 }, { nodeName: 'b' })] });
    expect(nodeOf(scheduleInstance(instance('i', { placement: { nodeName: 'b' } }), s))).to.equal('b');
    const r = scheduleInstance(instance('i', { cpus: 2, placement: { nodeName: 'b' } }), s);
    expect(messageOf(r)).to.equal('0/2 nodes are available: 1 insufficient cpu, 1 not the pinned node.');
  });

  it('says so, with a hint, when the pinned node does not exist', () => {
    const s = snapshot({ cluster: cluster(), nodes: [node('a'), node('b')] });
    expect(messageOf(scheduleInstance(instance('i', { placement: { nodeName: 'zz' } }), s))).to.equal(
      '0/2 nodes are available: 2 not the pinned node. Pinned node zz (spec.placement.nodeName) is not registered in cluster c1; register it or change spec.placement.nodeName.',
    );
    expect(messageOf(scheduleInstance(instance('i', { migrateTo: 'zz' }), s))).to.match(/Pinned node zz \(spec\.migrateTo\) is not registered/);
  });

  it('moves to a pending spec.migrateTo, over placement.nodeName', () => {
    const i = instance('i', { migrateTo: 'b', placement: { nodeName: 'a' } }, { nodeName: 'a' });
    expect(nodeOf(scheduleInstance(i, snapshot({ nodes: [node('a'), node('b'), node('c')] })))).to.equal('b');
  });

  it('keeps instances of one anti-affinity group apart', () => {
    const group = { placement: { antiAffinityGroup: 'db' } };
    const s = snapshot({
      nodes: [node('a'), node('b', { cpus: 1 })],
      instances: [instance('db-0', group, { nodeName: 'a' }), instance('web', {}, { nodeName: 'b' })],
    });
    // b is full but a holds db-0.
    const r = scheduleInstance(instance('db-1', group), s);
    expect(messageOf(r)).to.equal('0/2 nodes are available: 1 anti-affinity group db, 1 insufficient cpu.');
    expect(nodeOf(scheduleInstance(instance('web-2', {}), s))).to.equal('a');
  });

  it('does not keep an instance away from itself, and counts a migration target as occupied', () => {
    const group = { placement: { antiAffinityGroup: 'db' } };
    const me = instance('db-0', group, { nodeName: 'a' });
    expect(nodeOf(scheduleInstance(me, snapshot({ nodes: [node('a')], instances: [me] })))).to.equal('a');
    const moving = instance('db-1', group, { nodeName: 'b', migration: { sourceNode: 'b', targetNode: 'a', phase: 'Transferring' } });
    const s = snapshot({ nodes: [node('a'), node('b'), node('c')], instances: [moving] });
    expect(nodeOf(scheduleInstance(instance('db-2', group), s))).to.equal('c');
  });

  it('goes where its volumes have live replicas, all of them', () => {
    const attach = (...names: string[]) => ({ volumes: names.map((n) => ({ name: n, volumeName: n })) });
    const volumes: Volume[] = [volume('data', { replicas: 2 }, ['a', 'b']), volume('logs', {}, ['b'])];
    const s = snapshot({ nodes: [node('a'), node('b'), node('c')], volumes });
    expect(nodeOf(scheduleInstance(instance('i', attach('data')), { ...s, instances: [instance('x', { cpus: 2 }, { nodeName: 'b' })] }))).to.equal('a');
    expect(nodeOf(scheduleInstance(instance('i', attach('data', 'logs')), s))).to.equal('b');
    const r = scheduleInstance(instance('i', attach('logs', 'data')), { ...s, nodes: [node('a'), node('c')] });
    expect(messageOf(r)).to.equal('0/2 nodes are available: 2 no replica of volume logs.');
  });

  it('may go to any node once a gluster volume is mountable, preferring nodes that hold a brick of it', () => {
    const brick = (v: Volume, i: number, address?: string) => ({ ...v.status!.replicas![i]!, path: `/b${i}`, brick: { port: 49152, ...(address ? { address } : {}) } });
    const base = volume('data', { replicas: 2, driver: 'gluster' }, ['a', ['b', 'Lost']]);
    const mountable: Volume = { ...base, status: { replicas: [brick(base, 0, '10.0.0.1'), brick(base, 1, '10.0.0.2')] } };
    const attach = { volumes: [{ name: 'd', volumeName: 'data' }] };
    const s = snapshot({ nodes: [node('a'), node('b'), node('c')], volumes: [mountable] });
    // a holds a live brick: preferred even though it is busier.
    expect(nodeOf(scheduleInstance(instance('i', attach), { ...s, instances: [instance('x', { cpus: 2 }, { nodeName: 'a' })] }))).to.equal('a');
    // Without a (its node gone), any other node fits: the data is reachable from all of them.
    expect(nodeOf(scheduleInstance(instance('i', attach), { ...s, nodes: [node('b'), node('c')] }))).to.equal('b');
    expect(nodeOf(scheduleInstance(instance('i', attach), { ...s, nodes: [node('c')] }))).to.equal('c');
    // Not mountable while a brick has no address: only its bricks' nodes, as for a local replica.
    const unaddressed: Volume = { ...base, status: { replicas: [brick(base, 0, '10.0.0.1'), brick(base, 1)] } };
    expect(messageOf(scheduleInstance(instance('i', attach), snapshot({ nodes: [node('c')], volumes: [unaddressed] })))).to.equal('0/1 nodes are available: 1 no replica of volume data.');
  });

  it('waits while a gluster volume it uses is Stopped, saying which', () => {
    const stopped = volume('data', { replicas: 1, driver: 'gluster', state: 'Stopped' }, ['a']);
    const s = snapshot({ nodes: [node('a'), node('b')], volumes: [stopped] });
    expect(messageOf(scheduleInstance(instance('i', { volumes: [{ name: 'd', volumeName: 'data' }] }), s))).to.equal('0/2 nodes are available: 2 volume data is Stopped.');
  });

  it('ignores Lost, Failed and Deleting replicas for locality', () => {
    const v = volume('data', { replicas: 3 }, [['a', 'Lost'], ['b', 'Failed'], ['c', 'Deleting']]);
    const s = snapshot({ nodes: [node('a'), node('b'), node('c')], volumes: [v] });
    expect(messageOf(scheduleInstance(instance('i', { volumes: [{ name: 'd', volumeName: 'data' }] }), s))).to.equal(
      '0/3 nodes are available: 3 no replica of volume data. Volume data has no live replica on any node yet; the instance is scheduled once one is placed.',
    );
  });

  it('explains a volume that does not exist', () => {
    const s = snapshot({ nodes: [node('a')] });
    expect(messageOf(scheduleInstance(instance('i', { volumes: [{ name: 'd', volumeName: 'nope' }] }), s))).to.equal(
      '0/1 nodes are available: 1 no replica of volume nope. Volume nope does not exist in cluster c1; create it or fix spec.volumes.',
    );
  });

  it('honours policy.maxInstancesPerNode (0 is unlimited)', () => {
    const placed = [instance('x', { cpus: 0 }, { nodeName: 'a' }), instance('y', { cpus: 0 }, { nodeName: 'a' })];
    const s = snapshot({ cluster: cluster({ maxInstancesPerNode: 2 }), nodes: [node('a')], instances: placed });
    expect(messageOf(scheduleInstance(instance('i'), s))).to.equal('0/1 nodes are available: 1 max instances per node.');
    expect(nodeOf(scheduleInstance(instance('i'), { ...s, cluster: cluster({ maxInstancesPerNode: 0 }) }))).to.equal('a');
    expect(nodeOf(scheduleInstance(placed[0]!, s))).to.equal('a');
  });

  it('needs enough free cpus and memory, with the cluster overcommit applied', () => {
    const s = snapshot({ nodes: [node('a', { cpus: 2, memory: '1Gi' })], instances: [instance('x', { cpus: 2, memory: '512Mi' }, { nodeName: 'a' })] });
    const want = instance('i', { cpus: 2, memory: '1Gi' });
    expect(messageOf(scheduleInstance(want, s))).to.equal('0/1 nodes are available: 1 insufficient cpu.');
    const cpuOk = { ...s, cluster: cluster({ overcommit: { cpu: 2 } }) };
    expect(messageOf(scheduleInstance(want, cpuOk))).to.equal('0/1 nodes are available: 1 insufficient memory.');
    const bothOk = { ...s, cluster: cluster({ overcommit: { cpu: 2, memory: 1.5 } }) };
    expect(nodeOf(scheduleInstance(want, bothOk))).to.equal('a');
  });

  it('avoids opts.excludeNodes', () => {
    const s = snapshot({ nodes: [node('a'), node('b', { cpus: 1 })] });
    expect(nodeOf(scheduleInstance(instance('i'), s, { excludeNodes: ['a'] }))).to.equal('b');
    expect(messageOf(scheduleInstance(instance('i'), s, { excludeNodes: ['a', 'b'] }))).to.equal('0/2 nodes are available: 2 excluded.');
  });
});

describe('scheduler: scheduleInstance when nothing fits', () => {
  it('counts each node once, under the first reason in the fixed check order', () => {
    const s = snapshot({
      cluster: cluster({ maxInstancesPerNode: 1 }),
      nodes: [
        node('cordoned-and-small', { unschedulable: true, cpus: 0 }),
        node('excluded-and-wrong-zone', { labels: { zone: 'z2' } }),
        node('wrong-zone-and-small', { labels: { zone: 'z2' }, cpus: 0 }),
        node('full', { labels: { zone: 'z1' } }),
        node('small', { labels: { zone: 'z1' }, cpus: 1 }),
        node('tiny', { labels: { zone: 'z1' }, cpus: 4, memory: '64Mi' }),
      ],
      instances: [instance('x', {}, { nodeName: 'full' })],
    });
    const r = scheduleInstance(instance('i', { cpus: 2, placement: { nodeSelector: { zone: 'z1' } } }), s, { excludeNodes: ['excluded-and-wrong-zone'] });
    expect(r).to.deep.equal({
      unschedulable: true,
      message:
        "0/6 nodes are available: 1 didn't match node selector, 1 excluded, 1 insufficient cpu, 1 insufficient memory, 1 max instances per node, 1 unschedulable.",
      reasons: {
        "didn't match node selector": 1,
        excluded: 1,
        'insufficient cpu': 1,
        'insufficient memory': 1,
        'max instances per node': 1,
        unschedulable: 1,
      },
    });
  });

  it('reads like the Kubernetes scheduler', () => {
    const s = snapshot({ nodes: [node('a', { memory: '1Gi' }), node('b', { memory: '1Gi' }), node('c', { unschedulable: true })] });
    const r = scheduleInstance(instance('i', { memory: '2Gi' }), s);
    expect(r).to.deep.equal({
      unschedulable: true,
      message: '0/3 nodes are available: 2 insufficient memory, 1 unschedulable.',
      reasons: { 'insufficient memory': 2, unschedulable: 1 },
    });
  });

  it('puts the selector before the pin, and the pin before anti-affinity', () => {
    const group = { antiAffinityGroup: 'g' };
    const z1 = { labels: { zone: 'z1' } };
    const s = snapshot({
      nodes: [node('wrong-zone', { labels: { zone: 'z2' } }), node('other', z1), node('pinned', { ...z1, cpus: 0 })],
      instances: ['other', 'pinned', 'wrong-zone'].map((n) => instance(`member-${n}`, { cpus: 0, placement: group }, { nodeName: n })),
    });
    const i = instance('i', { placement: { ...group, nodeName: 'pinned', nodeSelector: { zone: 'z1' } } });
    expect(scheduleInstance(i, s)).to.deep.include({
      reasons: { "didn't match node selector": 1, 'anti-affinity group g': 1, 'not the pinned node': 1 },
    });
  });

  it('then volume locality, the per-node limit, cpu and memory, in that order', () => {
    const group = { antiAffinityGroup: 'g' };
    const s = snapshot({
      cluster: cluster({ maxInstancesPerNode: 1 }),
      nodes: [
        node('member'),
        node('no-replica', { cpus: 0 }),
        node('at-limit', { cpus: 0 }),
        node('few-cpus', { cpus: 0, memory: '0' }),
        node('little-memory', { memory: '0' }),
      ],
      instances: [
        instance('m', { cpus: 0, memory: '0', placement: group }, { nodeName: 'member' }),
        instance('n', { cpus: 0, memory: '0' }, { nodeName: 'no-replica' }),
        instance('l', { cpus: 0, memory: '0' }, { nodeName: 'at-limit' }),
      ],
      volumes: [volume('v', { replicas: 4 }, ['member', 'at-limit', 'few-cpus', 'little-memory'])],
    });
    const i = instance('i', { placement: group, volumes: [{ name: 'v', volumeName: 'v' }] });
    expect(scheduleInstance(i, s)).to.deep.include({
      reasons: {
        'anti-affinity group g': 1,
        'insufficient cpu': 1,
        'insufficient memory': 1,
        'max instances per node': 1,
        'no replica of volume v': 1,
      },
    });
  });

  it('reports a cluster without nodes', () => {
    expect(scheduleInstance(instance('i'), snapshot({ cluster: cluster() }))).to.deep.equal({
      unschedulable: true,
      message: '0/0 nodes are available: no nodes registered in cluster c1.',
      reasons: {},
    });
  });

  it('stops at policy.maxInstances, counting placed instances other than this one', () => {
    const placed: Instance[] = [instance('x', {}, { nodeName: 'a' }), instance('y', {}, { nodeName: 'b' }), instance('pending')];
    const s: ClusterSnapshot = snapshot({ cluster: cluster({ maxInstances: 2 }), nodes: [node('a'), node('b'), node('c')], instances: placed });
    expect(scheduleInstance(instance('z'), s)).to.deep.equal({
      unschedulable: true,
      message:
        '0/3 nodes are available: 3 max instances in cluster. Cluster c1 already has 2 placed instances and its spec.policy.maxInstances is 2; raise the limit or delete an instance.',
      reasons: { 'max instances in cluster': 3 },
    });
    expect(nodeOf(scheduleInstance(placed[0]!, s))).to.equal('a');
    expect(nodeOf(scheduleInstance(instance('z'), { ...s, cluster: cluster({ maxInstances: 3 }) }))).to.equal('c');
  });
});

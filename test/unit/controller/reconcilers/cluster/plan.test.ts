/** planCluster: counts, totals, phase and Ready condition; finalizer and ordered deletion. */
import { expect } from 'chai';
import type { Cluster } from '../../../../../api/cluster.js';
import type { Instance, InstancePhase } from '../../../../../api/instance.js';
import { CLUSTER_FINALIZER } from '../../../../../api/names.js';
import type { Node, NodePhase } from '../../../../../api/node.js';
import type { Resources } from '../../../../../api/types.js';
import type { Volume, VolumePhase } from '../../../../../api/volume.js';
import { planCluster, type ClusterObserved } from '../../../../../controller/reconcilers/cluster/plan.js';
import { EARLIER, NOW, NOW_TEXT, NS, instance, instanceWorkItem, volume } from '../builders.js';

function theCluster(o: { deleting?: boolean; finalizers?: string[]; status?: Cluster['status'] } = {}): Cluster {
  return {
    kind: 'Cluster',
    metadata: { name: NS, generation: 4, finalizers: o.finalizers ?? [CLUSTER_FINALIZER], ...(o.deleting ? { deletionTimestamp: EARLIER } : {}) },
    spec: {},
    ...(o.status ? { status: o.status } : {}),
  };
}

function node(name: string, phase: NodePhase = 'Ready', o: { capacity?: Resources; allocatable?: Resources; allocated?: Resources; unschedulable?: boolean; drain?: boolean; deleting?: boolean } = {}): Node {
  return {
    kind: 'Node',
    metadata: { name, namespace: NS, ...(o.deleting ? { deletionTimestamp: EARLIER } : {}) },
    spec: { unschedulable: o.unschedulable, drain: o.drain },
    status: { phase, capacity: o.capacity ?? { cpus: 4, memory: '8Gi', storage: '100Gi' }, allocatable: o.allocatable, allocated: o.allocated },
  };
}

const inst = (name: string, phase?: InstancePhase, deleting = false): Instance => instance(name, {}, phase ? { phase } : undefined, { deleting });
const vol = (name: string, phase?: VolumePhase, deleting = false): Volume => volume(name, {}, phase ? { phase } : undefined, { deleting });

const observed = (p: Partial<ClusterObserved> = {}): ClusterObserved => ({ cluster: theCluster(), nodes: [], instances: [], volumes: [], workItems: [], now: NOW, ...p });

describe('planCluster', () => {
  it('adds its finalizer when missing, and only then', () => {
    expect(planCluster(observed({ cluster: theCluster({ finalizers: [] }) })).actions).to.deep.equal([{ type: 'addFinalizer' }]);
    expect(planCluster(observed()).actions).to.deep.equal([]);
  });

  it('counts nodes, instances and volumes by state', () => {
    const plan = planCluster(
      observed({
        nodes: [node('a'), node('b', 'Unreachable'), node('c', 'Ready', { unschedulable: true }), node('d', 'Draining', { drain: true }), node('e', 'NotReady')],
        instances: [inst('i1', 'Running'), inst('i2', 'Running'), inst('i3'), inst('i4', 'Scheduled'), inst('i5', 'Starting'), inst('i6', 'Pending'), inst('i7', 'Failed'), inst('i8', 'Stopped')],
        volumes: [vol('v1', 'Ready'), vol('v2', 'Degraded'), vol('v3', 'Failed'), vol('v4', 'Creating')],
      }),
    );
    expect(plan.status.counts).to.deep.equal({
      nodes: 5,
      nodesReady: 2,
      nodesUnreachable: 1,
      nodesUnschedulable: 2,
      instances: 8,
      instancesRunning: 2,
      instancesPending: 4,
      instancesFailed: 1,
      volumes: 4,
      volumesReady: 1,
      volumesDegraded: 1,
      volumesFailed: 1,
    });
  });

  it('sums capacity (allocatable where given) and allocation over nodes', () => {
    const plan = planCluster(
      observed({
        nodes: [
          node('a', 'Ready', { capacity: { cpus: 4, memory: '8Gi', storage: '100Gi' }, allocated: { cpus: 1, memory: '512Mi', storage: '10Gi' } }),
          node('b', 'Ready', { capacity: { cpus: 8, memory: '16Gi', storage: '1Ti' }, allocatable: { cpus: 6, memory: '12Gi', storage: '1Ti' }, allocated: { cpus: 2, memory: '512Mi' } }),
          node('c', 'NotReady', { capacity: {} }),
        ],
      }),
    );
    expect(plan.status.capacity).to.deep.equal({ cpus: 10, memory: '20Gi', storage: '1124Gi' });
    expect(plan.status.allocated).to.deep.equal({ cpus: 3, memory: '1Gi', storage: '10Gi' });
  });

  it('is Pending without Ready nodes, saying how to add one', () => {
    for (const nodes of [[], [node('a', 'NotReady'), node('b', 'Unreachable')]]) {
      const plan = planCluster(observed({ nodes }));
      expect(plan.status.phase).to.equal('Pending');
      expect(plan.status.message).to.contain('cairn agent');
      expect(plan.status.conditions).to.deep.equal([{ type: 'Ready', status: 'False', reason: 'NoReadyNodes', message: plan.status.message, observedGeneration: 4, lastTransitionTime: NOW_TEXT }]);
    }
  });

  it('is Ready when all is well', () => {
    const plan = planCluster(observed({ nodes: [node('a'), node('b')], instances: [inst('i', 'Running'), inst('j', 'Stopped')], volumes: [vol('v', 'Ready')] }));
    expect(plan.status.phase).to.equal('Ready');
    expect(plan.status.message).to.equal('2/2 nodes ready, 1/2 instances running');
    expect(plan.status.observedGeneration).to.equal(4);
    expect(plan.status.conditions![0]).to.include({ type: 'Ready', status: 'True', reason: 'Ready' });
  });

  it('is Degraded with a message naming each problem', () => {
    const plan = planCluster(
      observed({ nodes: [node('a'), node('b', 'Unreachable')], instances: [inst('i', 'Failed')], volumes: [vol('v', 'Degraded'), vol('w', 'Failed'), vol('x', 'Failed')] }),
    );
    expect(plan.status.phase).to.equal('Degraded');
    expect(plan.status.message).to.equal('1 node(s) unreachable, 1 instance(s) failed, 1 volume(s) degraded, 2 volume(s) failed; run `cairn failures` for details');
    expect(plan.status.conditions![0]).to.include({ type: 'Ready', reason: 'Degraded' });
    const cases: Array<[string, Partial<ClusterObserved>]> = [
      ['unreachable', { nodes: [node('a'), node('b', 'Unreachable')] }],
      ['instance(s) failed', { nodes: [node('a')], instances: [inst('i', 'Failed')] }],
      ['volume(s) degraded', { nodes: [node('a')], volumes: [vol('v', 'Degraded')] }],
    ];
    for (const [what, p] of cases) {
      const one = planCluster(observed(p));
      expect(one.status.phase, what).to.equal('Degraded');
      expect(one.status.message).to.contain(what);
    }
  });

  it('keeps lastTransitionTime while Ready stays True', () => {
    const first = planCluster(observed({ nodes: [node('a')] }));
    const second = planCluster(observed({ cluster: theCluster({ status: first.status }), nodes: [node('a'), node('b', 'Unreachable')], now: NOW + 60_000 }));
    expect(second.status.conditions![0]).to.include({ status: 'True', reason: 'Degraded', lastTransitionTime: NOW_TEXT });
  });

  describe('deletion', () => {
    const deleting = theCluster({ deleting: true });

    it('deletes Instances and Volumes first, not Nodes, and keeps the finalizer', () => {
      const plan = planCluster(observed({ cluster: deleting, nodes: [node('a')], instances: [inst('i'), inst('j', undefined, true)], volumes: [vol('v')] }));
      expect(plan.actions).to.deep.equal([
        { type: 'delete', kind: 'Instance', name: 'i' },
        { type: 'delete', kind: 'Volume', name: 'v' },
      ]);
      expect(plan.status.phase).to.equal('Deleting');
      expect(plan.status.message).to.equal('deleting 2 instance(s), 1 volume(s) and 1 node(s)');
      expect(plan.status.conditions![0]).to.include({ status: 'False', reason: 'Deleting' });
    });

    it('waits for terminating Instances and Volumes and for WorkItems before touching Nodes', () => {
      expect(planCluster(observed({ cluster: deleting, nodes: [node('a')], instances: [inst('j', undefined, true)] })).actions).to.deep.equal([]);
      expect(planCluster(observed({ cluster: deleting, nodes: [node('a')], volumes: [vol('w', undefined, true)] })).actions).to.deep.equal([]);
      const wi = instanceWorkItem(instance('gone'), 'a');
      expect(planCluster(observed({ cluster: deleting, nodes: [node('a')], workItems: [wi] })).actions).to.deep.equal([]);
    });

    it('deletes Nodes once nothing else is left, skipping those already terminating', () => {
      const plan = planCluster(observed({ cluster: deleting, nodes: [node('a'), node('b', 'Ready', { deleting: true })] }));
      expect(plan.actions).to.deep.equal([{ type: 'delete', kind: 'Node', name: 'a' }]);
    });

    it('deletes what else the namespace holds and the Tokens bound to it, then its Leases, once no Node is left, just before the finalizer', () => {
      const binding = { kind: 'RoleBinding', name: 'bob-operates', path: `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}/rolebindings/bob-operates` };
      const token = { kind: 'Token', name: 'abc123', path: '/apis/auth.cairn.dev/v1alpha1/tokens/abc123' };
      expect(planCluster(observed({ cluster: deleting, leases: ['node-a', 'instance-web'], contents: [binding, token] })).actions).to.deep.equal([
        { type: 'deleteContent', content: binding },
        { type: 'deleteContent', content: token },
        { type: 'delete', kind: 'Lease', name: 'node-a' },
        { type: 'delete', kind: 'Lease', name: 'instance-web' },
        { type: 'removeFinalizer' },
      ]);
      expect(planCluster(observed({ cluster: deleting, nodes: [node('a')], leases: ['node-a'], contents: [binding] })).actions).to.deep.equal([{ type: 'delete', kind: 'Node', name: 'a' }]);
    });

    it('keeps the finalizer until the namespace\'s contents were listed', () => {
      expect(planCluster(observed({ cluster: deleting, leases: ['node-a'] })).actions).to.deep.equal([]);
    });

    it('removes the finalizer last, when no Node is left', () => {
      expect(planCluster(observed({ cluster: deleting, contents: [] })).actions).to.deep.equal([{ type: 'removeFinalizer' }]);
      expect(planCluster(observed({ cluster: theCluster({ deleting: true, finalizers: [] }) })).actions).to.deep.equal([]);
    });
  });
});

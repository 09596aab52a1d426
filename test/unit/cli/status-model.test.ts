import { expect } from 'chai';
import { isConverged, isSettled, stateChange, stateOf, summarize } from '../../../cli/status/model.js';
import { formatDuration } from '../../../cli/flags.js';
import { cluster, cond, instance, node, objects, tooBigVolume, unschedulableInstance, volume, workItem } from './status-fixtures.js';

describe('status model', () => {
  describe('isConverged', () => {
    it('an instance whose latest generation is observed and Ready=True', () => expect(isConverged('instances', instance('web'))).to.equal(true));
    it('not an instance whose spec changed since the controller looked', () => expect(isConverged('instances', instance('web', { generation: 2 }))).to.equal(false));
    it('not an instance that is not Ready', () => expect(isConverged('instances', unschedulableInstance('big'))).to.equal(false));
    it('an instance asked to stop, once Stopped', () => {
      const stopped = instance('web', { runState: 'Stopped', phase: 'Stopped', conditions: [cond('Ready', 'False', 'Stopped')] });
      expect(isConverged('instances', stopped)).to.equal(true);
    });
    it('an instance whose run completed (exit 0 under restartPolicy Never), Stopped while runState stays Running', () => {
      const done = instance('job', { phase: 'Stopped', conditions: [cond('Ready', 'False', 'Completed')] });
      expect(isConverged('instances', done)).to.equal(true);
    });
    it('not an instance asked to stop that still runs', () => {
      expect(isConverged('instances', instance('web', { runState: 'Stopped' }))).to.equal(false);
    });
    it('not an object being deleted', () => {
      const i = instance('web');
      i.metadata.deletionTimestamp = '2024-05-01T12:00:00Z';
      expect(isConverged('instances', i)).to.equal(false);
    });
    it('a Ready node, cordoned or Drained too', () => {
      expect(isConverged('nodes', node('a'))).to.equal(true);
      expect(isConverged('nodes', node('a', { cordoned: true }))).to.equal(true);
      expect(isConverged('nodes', node('a', { phase: 'Drained' }))).to.equal(true);
    });
    it('not a Draining or Unreachable node', () => {
      expect(isConverged('nodes', node('a', { phase: 'Draining' }))).to.equal(false);
      expect(isConverged('nodes', node('a', { phase: 'Unreachable', ready: cond('Ready', 'Unknown', 'NodeLeaseExpired') }))).to.equal(false);
    });
    it('a volume with Ready=True, not a Pending one', () => {
      expect(isConverged('volumes', volume('data'))).to.equal(true);
      expect(isConverged('volumes', tooBigVolume('huge'))).to.equal(false);
    });
    it('a volume asked to stop, once Stopped with every brick stopped', () => {
      const v = volume('data');
      const stopping = { ...v, spec: { ...v.spec, state: 'Stopped' as const }, status: { ...v.status, phase: 'Stopped' as const, readyReplicas: 0 } };
      expect(isConverged('volumes', stopping)).to.equal(false);
      expect(isConverged('volumes', { ...stopping, status: { ...stopping.status, readyReplicas: v.spec.replicas ?? 1 } })).to.equal(true);
    });
  });

  describe('summarize', () => {
    const s = summarize(
      objects({
        clusters: [cluster()],
        nodes: [node('node-a', { cpus: 2 }), node('node-b', { cordoned: true })],
        instances: [instance('web', { nodeName: 'node-a' }), instance('api', { nodeName: 'node-a' }), unschedulableInstance('big')],
        volumes: [volume('data'), tooBigVolume('huge')],
        workItems: [workItem('web-1', 'node-a', 'Done')],
      }),
    );

    it('names the clusters with their phase', () => expect(s.clusters).to.deep.equal([{ name: 'demo', phase: 'Ready' }]));

    it('gives each node its phase, cordon, allocation and instance count', () => {
      expect(s.nodes[0]).to.deep.include({ name: 'node-a', phase: 'Ready', cordoned: false, instances: 2 });
      expect(s.nodes[0]!.cpu).to.deep.equal({ used: 2, total: 4, usedText: '2', totalText: '4' });
      expect(s.nodes[0]!.memory).to.deep.equal({ used: 2 ** 30, total: 4 * 2 ** 30, usedText: '1024Mi', totalText: '4Gi' });
      expect(s.nodes[1]).to.deep.include({ name: 'node-b', cordoned: true });
    });

    it('counts instances and volumes by phase', () => {
      expect(s.instances).to.deep.equal({ total: 3, byPhase: { Running: 2, Pending: 1 } });
      expect(s.volumes).to.deep.equal({ total: 2, byPhase: { Ready: 1, Pending: 1 } });
    });

    it('counts converged nodes, instances and volumes, and lists the others with their state', () => {
      expect(s.convergence.converged).to.equal(5);
      expect(s.convergence.total).to.equal(7);
      expect(s.convergence.pending).to.deep.equal([
        { kind: 'instance', namespace: 'demo', name: 'big', state: 'Pending (Unschedulable)' },
        { kind: 'volume', namespace: 'demo', name: 'huge', state: 'Pending (Unschedulable)' },
      ]);
    });

    it('lists the failing items', () => expect(s.failures.map((f) => `${f.kind}/${f.name}`)).to.deep.equal(['Instance/big', 'Volume/huge']));

    it('is not settled while something fails or has not converged', () => expect(isSettled(s)).to.equal(false));

    it('is settled when everything converged and nothing fails', () => {
      expect(isSettled(summarize(objects({ nodes: [node('a')], instances: [instance('web')], volumes: [volume('data')] })))).to.equal(true);
    });

    it('adds up the instances placed on a node (count, cpus, memory) until the controller has counted its allocation', () => {
      const bare = node('node-a');
      delete bare.status!.allocated;
      const big = instance('big', { nodeName: 'node-a' });
      big.spec.cpus = 2;
      big.spec.memory = '1Gi';
      const summary = summarize(objects({ nodes: [bare], instances: [instance('web', { nodeName: 'node-a' }), big] }));
      expect(summary.nodes[0]).to.deep.include({ instances: 2 });
      expect(summary.nodes[0]!.cpu).to.deep.include({ used: 3, total: 4 });
      expect(summary.nodes[0]!.memory).to.deep.include({ used: 1024 ** 3, usedText: '1Gi' });
    });
  });

  describe('stateOf and stateChange', () => {
    it('a phase, with the failure reason when it says more', () => {
      expect(stateOf('instances', instance('web'))).to.equal('Running');
      expect(stateOf('instances', unschedulableInstance('big'))).to.equal('Pending (Unschedulable)');
      expect(stateOf('nodes', node('a', { cordoned: true }))).to.equal('Ready,SchedulingDisabled');
      expect(stateOf('workItems', workItem('web-1', 'a', 'Failed', { reason: 'NoSpace', message: 'disk full' }))).to.equal('Failed (NoSpace)');
    });

    it('a gluster Volume healing: the entries left, so the watch logs the heal\'s progress; not a failure', () => {
      const healing = (left: number[]) => {
        const v = volume('data');
        const replicas = left.map((n, index) => ({ index, state: 'Ready' as const, brick: { port: 49152, pendingHeals: n } }));
        const conditions = [{ type: 'Degraded', status: 'True' as const, reason: 'HealPending', message: 'x', lastTransitionTime: '2024-01-01T00:00:00Z' }];
        return { ...v, status: { ...v.status, phase: 'Degraded' as const, replicas, conditions } };
      };
      expect(stateOf('volumes', healing([7, 5, 0]))).to.equal('Degraded (healing, 12 entries left)');
      expect(stateChange('volumes', healing([7, 5, 0]), healing([1, 0, 0]))).to.deep.include({ from: 'Degraded (healing, 12 entries left)', to: 'Degraded (healing, 1 entry left)' });
      expect(summarize(objects({ volumes: [healing([3])] })).failures).to.deep.equal([]);
    });

    it('Pending → Running', () => {
      const change = stateChange('instances', instance('web', { phase: 'Pending', conditions: [] }), instance('web'));
      expect(change).to.deep.equal({ kind: 'instance', namespace: 'demo', name: 'web', from: 'Pending', to: 'Running' });
    });

    it('created and deleted objects', () => {
      expect(stateChange('volumes', undefined, volume('data'))).to.deep.include({ from: undefined, to: 'Ready' });
      expect(stateChange('volumes', volume('data'), undefined)).to.deep.include({ from: 'Ready', to: undefined });
    });

    it('nothing when the state did not change (a status rewrite, a heartbeat)', () => {
      expect(stateChange('nodes', node('a'), node('a', { cpus: 1 }))).to.equal(undefined);
    });

    it('WorkItems only when they fail or recover', () => {
      expect(stateChange('workItems', workItem('web-1', 'a', 'Queued'), workItem('web-1', 'a', 'Done'))).to.equal(undefined);
      const failed = workItem('web-1', 'a', 'Failed', { reason: 'NoSpace', message: 'disk full' });
      expect(stateChange('workItems', workItem('web-1', 'a', 'InProgress'), failed)).to.deep.include({ kind: 'workitem', to: 'Failed (NoSpace)' });
      expect(stateChange('workItems', failed, workItem('web-1', 'a', 'Done'))).to.deep.include({ from: 'Failed (NoSpace)', to: 'Done' });
    });
  });

  describe('formatDuration', () => {
    for (const [ms, text] of [[120_000, '2m'], [90_500, '1m30.5s'], [5_000, '5s'], [0, '0s']] as const) {
      it(`${ms} ms → ${text}`, () => expect(formatDuration(ms)).to.equal(text));
    }
  });
});

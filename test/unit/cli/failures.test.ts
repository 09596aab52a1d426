import { expect } from 'chai';
import { collectFailures, groupByReason, isFailureCondition, PROGRESS_REASONS, splitHint } from '../../../cli/status/failures.js';
import { hintFor } from '../../../cli/status/hints.js';
import { failureReport, renderReport } from '../../../cli/status/report.js';
import { cluster, cond, instance, node, objects, tooBigVolume, unschedulableInstance, volume, workItem } from './status-fixtures.js';

describe('failures', () => {
  describe('isFailureCondition', () => {
    it('a False Ready, Scheduled or SpecAccepted with a reason that is no progress', () => {
      expect(isFailureCondition(cond('Ready', 'False', 'CrashLoopBackOff'))).to.equal(true);
      expect(isFailureCondition(cond('Scheduled', 'False', 'Unschedulable'))).to.equal(true);
      expect(isFailureCondition(cond('SpecAccepted', 'False', 'ShrinkNotSupported'))).to.equal(true);
    });
    it('not progress (being placed, started, moved, deleted)', () => {
      for (const reason of PROGRESS_REASONS) expect(isFailureCondition(cond('Ready', 'False', reason)), reason).to.equal(false);
    });
    it('an Unknown Ready because the node stopped answering, not any Unknown', () => {
      expect(isFailureCondition(cond('Ready', 'Unknown', 'NodeLeaseExpired'))).to.equal(true);
      expect(isFailureCondition(cond('Ready', 'Unknown', 'NodeUnreachable'))).to.equal(true);
      expect(isFailureCondition(cond('Ready', 'Unknown', 'Initializing'))).to.equal(false);
    });
    it('not True conditions, nor other condition types', () => {
      expect(isFailureCondition(cond('Ready', 'True', 'Running'))).to.equal(false);
      expect(isFailureCondition(cond('LimitsEnforced', 'False', 'CgroupUnavailable'))).to.equal(false);
    });
  });

  describe('collectFailures', () => {
    it('reports an unschedulable instance once, with both conditions', () => {
      const [f, ...rest] = collectFailures(objects({ instances: [unschedulableInstance('big')] }));
      expect(rest).to.have.length(0);
      expect(f).to.deep.include({ kind: 'Instance', namespace: 'demo', name: 'big', reason: 'Unschedulable', conditions: ['Scheduled=False', 'Ready=False'] });
      expect(f!.message).to.equal('0/2 nodes are available: 2 insufficient cpu.');
      expect(f!.hint).to.match(/spec\.cpus/);
    });

    it('reports a volume too big for any node by its Scheduled condition, not its Pending Ready', () => {
      const failures = collectFailures(objects({ volumes: [tooBigVolume('huge')] }));
      expect(failures).to.have.length(1);
      expect(failures[0]).to.deep.include({ kind: 'Volume', name: 'huge', reason: 'Unschedulable', conditions: ['Scheduled=False'] });
      expect(failures[0]!.hint).to.match(/spec\.size/);
    });

    it('reports a Failed WorkItem with its node, owner, attempts, and the agent\'s hint', () => {
      const w = workItem('web-1', 'node-a', 'Failed', { reason: 'NoSpace', message: 'creating replica on node node-a failed: ENOSPC', hint: 'free space under /data on node node-a' });
      const [f] = collectFailures(objects({ workItems: [w, workItem('api-1', 'node-a', 'Done')] }));
      expect(f).to.deep.equal({
        kind: 'WorkItem',
        namespace: 'demo',
        name: 'web-1',
        node: 'node-a',
        reason: 'NoSpace',
        message: 'creating replica on node node-a failed: ENOSPC',
        hint: 'free space under /data on node node-a',
        owner: 'instance web',
        attempts: 3,
        since: undefined,
      });
    });

    it('takes the hint the controller appended to a message', () => {
      const failed = instance('web', { phase: 'Failed', nodeName: 'node-a', conditions: [cond('Ready', 'False', 'CommandFailed', 'on node node-a: fallocate failed Hint: run it by hand')] });
      const [f] = collectFailures(objects({ instances: [failed] }));
      expect(f).to.deep.include({ node: 'node-a', message: 'on node node-a: fallocate failed', hint: 'run it by hand' });
    });

    it('reports an unreachable node and a cluster without Ready nodes', () => {
      const lost = node('node-b', { phase: 'Unreachable', ready: cond('Ready', 'Unknown', 'NodeLeaseExpired', 'the agent has not renewed') });
      const failures = collectFailures(objects({ clusters: [cluster({ phase: 'Pending', ready: cond('Ready', 'False', 'NoReadyNodes') })], nodes: [node('node-a'), lost] }));
      expect(failures.map((f) => [f.kind, f.name, f.reason, f.conditions])).to.deep.equal([
        ['Cluster', 'demo', 'NoReadyNodes', ['Ready=False']],
        ['Node', 'node-b', 'NodeLeaseExpired', ['Ready=Unknown']],
      ]);
    });

    it('finds nothing on a healthy cluster', () => {
      expect(collectFailures(objects({ clusters: [cluster()], nodes: [node('a')], instances: [instance('web')], volumes: [volume('data')], workItems: [workItem('web-1', 'a', 'Done')] }))).to.deep.equal([]);
    });
  });

  describe('splitHint', () => {
    it('splits at the last " Hint: "', () => expect(splitHint('a Hint: b')).to.deep.equal(['a', 'b']));
    it('leaves a message without one', () => expect(splitHint('just a message')).to.deep.equal(['just a message', undefined]));
  });

  describe('groupByReason', () => {
    it('groups by reason, the largest group first', () => {
      const failures = collectFailures(
        objects({
          instances: [unschedulableInstance('big'), instance('crash', { phase: 'Starting', conditions: [cond('Ready', 'False', 'CrashLoopBackOff', 'backoff')] })],
          volumes: [tooBigVolume('huge')],
        }),
      );
      const groups = groupByReason(failures);
      expect(groups.map((g) => [g.reason, g.failures.map((f) => f.name)])).to.deep.equal([
        ['Unschedulable', ['big', 'huge']],
        ['CrashLoopBackOff', ['crash']],
      ]);
    });
  });

  describe('hintFor', () => {
    const ctx = (message: string, kind: 'Instance' | 'Volume' = 'Instance') => ({ kind, name: 'x', namespace: 'demo', message });
    it('refines Unschedulable by the check the nodes failed', () => {
      expect(hintFor('Unschedulable', ctx('0/2 nodes are available: 2 insufficient memory.'))).to.match(/spec\.memory/);
      expect(hintFor('Unschedulable', ctx("0/2 nodes are available: 2 didn't match node selector.", 'Volume'))).to.match(/^fix the spec\.nodeSelector/);
      expect(hintFor('Unschedulable', ctx("0/2 nodes are available: 2 didn't match node selector."))).to.match(/spec\.placement\.nodeSelector/);
      expect(hintFor('Unschedulable', ctx('0/0 nodes are available: no nodes registered in cluster demo.'))).to.contain('cairn agent --cluster demo');
    });
    it('says how to start a Stopped volume an instance waits for, and how to get gluster onto nodes', () => {
      expect(hintFor('Unschedulable', ctx('0/2 nodes are available: 2 volume data is Stopped.'))).to.equal('start the volume: cairn volume start data -n demo');
      expect(hintFor('Unschedulable', ctx('0/2 nodes are available: 2 gluster unavailable.', 'Volume'))).to.match(/hack\/install-gluster\.sh/);
      expect(hintFor('SplitBrain', ctx('', 'Volume'))).to.contain('cairn volume set x cluster.favorite-child-policy=mtime -n demo');
    });
    it('takes the most frequent check, which the scheduler lists first', () => {
      expect(hintFor('Unschedulable', ctx('0/3 nodes are available: 2 insufficient storage, 1 unschedulable.', 'Volume'))).to.match(/spec\.size/);
      expect(hintFor('Unschedulable', ctx('0/3 nodes are available: 2 unschedulable, 1 insufficient storage.', 'Volume'))).to.match(/uncordon/);
    });
    it('has a hint for the controller\'s and the agent\'s reasons', () => {
      for (const reason of ['NoReadyNodes', 'NodeLeaseExpired', 'NodeUnreachable', 'InsufficientCapacity', 'ShrinkNotSupported', 'ReplicaFailed', 'Degraded', 'BrickOffline', 'QuorumLost', 'SplitBrain', 'CrashLoopBackOff', 'Exited', 'Fenced', 'LeaseHeld', 'NoSpace', 'Timeout']) {
        expect(hintFor(reason, ctx('')), reason).not.to.match(/^cairn describe/);
      }
    });
    it('names the namespace in the commands it suggests', () => {
      expect(hintFor('Unschedulable', ctx('0/2 nodes are available: 2 unschedulable.'))).to.contain('cairn uncordon NODE -n demo');
      expect(hintFor('Unschedulable', ctx('0/2 nodes are available: 2 something new.'))).to.contain('cairn get nodes -n demo');
      expect(hintFor('ReplicaFailed', ctx('', 'Volume'))).to.equal("see why on the replica's WorkItem: cairn failures -n demo, or cairn describe volume x -n demo");
      expect(hintFor('Degraded', ctx('', 'Volume'))).to.contain('cairn describe volume x -n demo');
      expect(hintFor('NodeUnreachable', ctx(''))).to.contain('cairn get nodes -n demo');
      expect(hintFor('MigrationFailed', ctx(''))).to.contain('cairn describe instance x -n demo');
      expect(hintFor('Unschedulable', { kind: 'Cluster', name: 'prod', message: '0/0 nodes are available: no nodes registered in cluster prod.' })).to.contain('cairn agent --cluster prod');
    });
    it('falls back to describe for an unknown reason', () => expect(hintFor('Mystery', ctx(''))).to.equal('cairn describe instance x -n demo shows the conditions and Events'));
  });

  describe('renderReport', () => {
    it('says so when nothing fails', () => {
      expect(renderReport(failureReport([], 'demo'))).to.deep.equal(['No failures in namespace demo.']);
      expect(renderReport(failureReport([], undefined))).to.deep.equal(['No failures in any namespace.']);
    });

    it('prints a block per reason with each item, its node, message and hint', () => {
      const w = workItem('web-1', 'node-a', 'Failed', { reason: 'NoSpace', message: 'disk full', hint: 'free space' });
      const groups = groupByReason(collectFailures(objects({ instances: [unschedulableInstance('big')], volumes: [tooBigVolume('huge')], workItems: [w] })));
      const text = renderReport(failureReport(groups, 'demo')).join('\n');
      expect(text).to.match(/^3 failures in namespace demo\n\nUnschedulable \(2\)\n  instance demo\/big\n    condition: Scheduled=False, Ready=False\n/);
      expect(text).to.contain('    message:   0/2 nodes are available: 2 insufficient storage. 1 of 1 replicas is still missing.');
      expect(text).to.contain('\nNoSpace (1)\n  workitem demo/web-1 on node node-a (instance web, 3 attempts)\n');
      expect(text).to.contain('    hint:      free space');
    });

    it('the document carries the count and the groups', () => {
      const report = failureReport(groupByReason(collectFailures(objects({ instances: [unschedulableInstance('big')] }))), 'demo');
      expect(report).to.deep.include({ kind: 'FailureReport', namespace: 'demo', count: 1 });
      expect(report.groups[0]!.reason).to.equal('Unschedulable');
    });
  });
});

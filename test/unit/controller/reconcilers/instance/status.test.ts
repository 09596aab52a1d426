/** instanceStatus and fromWorkItem: the Instance's status mirrored from its WorkItem. */
import { expect } from 'chai';
import type { Condition } from '../../../../../api/types.js';
import type { WorkItemStatus } from '../../../../../api/workitem.js';
import { formatTime as timestamp } from '../../../../../api/conditions.js';
import { fromWorkItem, instanceStatus } from '../../../../../controller/reconcilers/instance/status.js';
import { EARLIER, LOST, NOW, NOW_TEXT, instance, instanceWorkItem, nodeTable, running, unreachable } from '../builders.js';

const input = (inst = instance('web'), nodes = {}, now = NOW) => ({ instance: inst, node: nodeTable(nodes), now });
const byType = (conditions: Condition[] | undefined, type: string) => conditions!.find((c) => c.type === type)!;

describe('instance status', () => {
  describe('fromWorkItem', () => {
    const at = (status: WorkItemStatus | undefined, o: { generation?: number; runState?: 'Stopped' } = {}) => {
      const inst = instance('web', o.runState ? { runState: o.runState } : {});
      return fromWorkItem(input(inst), instanceWorkItem(inst, 'n1', { status, generation: o.generation }));
    };

    it('is Running and Ready only when the agent runs it and observed the current generation', () => {
      expect(at(running(99))).to.deep.equal({ phase: 'Running', ready: 'True', reason: 'Running', message: 'running on node n1 (pid 99)' });
      const stale = at(running(99, 1), { generation: 2 });
      expect(stale.ready).to.equal('False');
      expect(stale.reason).to.equal('Updating');
      expect(at({ ...running(), observedGeneration: undefined }).ready).to.equal('False');
    });

    it('is not Ready while the agent reports ready: false (e.g. a VM before its readiness marker)', () => {
      const r = at({ observedGeneration: 1, instance: { state: 'Running', ready: false } });
      expect(r.ready).to.equal('False');
    });

    it('is Scheduled while the agent has not reported yet', () => {
      expect(at(undefined)).to.deep.equal({ phase: 'Scheduled', ready: 'False', reason: 'Scheduled', message: 'waiting for node n1 to start it' });
      expect(at({ phase: 'Queued' }).phase).to.equal('Scheduled');
    });

    it('is Failed with the last error’s reason, message and hint', () => {
      const r = at({ phase: 'Failed', observedGeneration: 1, lastError: { reason: 'DriverUnavailable', message: 'qemu-system-x86_64 not found', hint: 'install qemu on the node' } });
      expect(r).to.deep.equal({ phase: 'Failed', ready: 'False', reason: 'DriverUnavailable', message: 'on node n1: qemu-system-x86_64 not found Hint: install qemu on the node' });
      const noHint = at({ phase: 'Failed', observedGeneration: 1, lastError: { reason: 'CommandFailed', message: 'exit 1' } });
      expect(noHint.message).to.equal('on node n1: exit 1');
    });

    it('is not Failed for a failure of an older generation: the spec that replaced it is not tried yet', () => {
      const failedBefore = { phase: 'Failed' as const, observedGeneration: 1, lastError: { reason: 'CommandFailed' as const, message: 'exit 1' } };
      expect(at(failedBefore, { generation: 2 })).to.include({ phase: 'Scheduled', ready: 'False' });
      expect(at({ ...failedBefore, instance: { state: 'Running' } }, { generation: 2 })).to.include({ phase: 'Running', ready: 'False', reason: 'Updating' });
    });

    it('is Stopped when stopped as spec.runState asks', () => {
      expect(at({ observedGeneration: 1, instance: { state: 'Stopped' } }, { runState: 'Stopped' })).to.deep.equal({
        phase: 'Stopped',
        ready: 'False',
        reason: 'Stopped',
        message: 'stopped on node n1 as spec.runState asks',
      });
      const unasked = at({ observedGeneration: 1, instance: { state: 'Stopped' } });
      expect(unasked.phase).to.equal('Stopped');
      expect(unasked.reason).to.equal('Stopped');
    });

    it('maps BackOff to CrashLoopBackOff and the other runtime states to phases', () => {
      expect(at({ observedGeneration: 1, message: 'exit code 3', instance: { state: 'BackOff' } })).to.deep.equal({
        phase: 'Starting',
        ready: 'False',
        reason: 'CrashLoopBackOff',
        message: 'backoff on node n1: exit code 3',
      });
      const table: Array<[string, string, string]> = [
        ['Pending', 'Starting', 'Pending'],
        ['Starting', 'Starting', 'Starting'],
        ['Stopping', 'Stopping', 'Stopping'],
        ['Fenced', 'Unknown', 'Fenced'],
        ['Unknown', 'Unknown', 'Unknown'],
      ];
      for (const [state, phase, reason] of table) {
        const r = at({ observedGeneration: 1, instance: { state: state as 'Pending' } });
        expect([r.phase, r.reason, r.ready], state).to.deep.equal([phase, reason, 'False']);
      }
    });

    describe('a workload that exited by itself', () => {
      type Policy = 'Always' | 'OnFailure' | 'Never';
      const exitedAt = (policy: Policy | undefined, facts: { lastExitCode?: number; lastSignal?: string }, o: { generation?: number; observed?: number; runState?: 'Stopped' } = {}) => {
        const inst = instance('web', { ...(policy ? { restartPolicy: policy } : {}), ...(o.runState ? { runState: o.runState } : {}) });
        const status: WorkItemStatus = { observedGeneration: o.observed ?? 1, phase: 'Done', message: 'from the agent', instance: { state: 'Exited', ready: false, restarts: 0, ...facts } };
        return fromWorkItem(input(inst), instanceWorkItem(inst, 'n1', { status, generation: o.generation }));
      };

      it('is Stopped, Completed, after exit 0 under Never or OnFailure (Instance CRD: Stopped for a workload that exited under those policies)', () => {
        for (const policy of ['Never', 'OnFailure'] as const) {
          expect(exitedAt(policy, { lastExitCode: 0 }), policy).to.deep.equal({
            phase: 'Stopped',
            ready: 'False',
            reason: 'Completed',
            message: `exited with status 0 on node n1; restartPolicy ${policy} does not restart it`,
          });
        }
      });

      it('writes Ready=False Completed "exited with status 0" and the exit code on the Instance', () => {
        const inst = instance('web', { restartPolicy: 'Never' });
        const w = instanceWorkItem(inst, 'n1', { status: { observedGeneration: 1, phase: 'Done', instance: { state: 'Exited', ready: false, lastExitCode: 0 } } });
        const s = instanceStatus(input(inst), { kind: 'placed', workItem: w });
        expect(s).to.include({ phase: 'Stopped', reason: 'Completed' });
        expect(byType(s.conditions, 'Ready')).to.include({ status: 'False', reason: 'Completed' });
        expect(byType(s.conditions, 'Ready').message).to.match(/^exited with status 0 on node n1\b/);
        expect(s.lastTermination).to.deep.equal({ exitCode: 0, signal: undefined });
      });

      it('is Failed, naming the exit code or signal, after any other exit under Never', () => {
        expect(exitedAt('Never', { lastExitCode: 3 })).to.deep.equal({ phase: 'Failed', ready: 'False', reason: 'Exited', message: 'exited with status 3 on node n1; restartPolicy Never does not restart it' });
        expect(exitedAt('Never', { lastExitCode: 137, lastSignal: 'SIGKILL' })).to.include({ phase: 'Failed', message: 'exited with status 137 (SIGKILL) on node n1; restartPolicy Never does not restart it' });
        expect(exitedAt('Never', {})).to.include({ phase: 'Failed', message: 'exited (status unknown) on node n1; restartPolicy Never does not restart it' });
        expect(exitedAt('Never', { lastSignal: 'SIGKILL' }).message).to.match(/^was killed by SIGKILL on node n1/);
      });

      it('is Starting, not Failed, while restartPolicy has a restart pending', () => {
        const cases: Array<[Policy | undefined, { lastExitCode?: number; lastSignal?: string }]> = [
          ['Always', { lastExitCode: 0 }],
          ['Always', { lastExitCode: 1 }],
          [undefined, { lastExitCode: 2 }],
          ['OnFailure', { lastExitCode: 1 }],
          ['OnFailure', {}],
        ];
        for (const [policy, facts] of cases) {
          const r = exitedAt(policy, facts);
          expect([r.phase, r.ready, r.reason], `${policy} ${JSON.stringify(facts)}`).to.deep.equal(['Starting', 'False', 'Restarting']);
          expect(r.message).to.match(new RegExp(`^exited .* on node n1; restartPolicy ${policy ?? 'Always'} restarts it$`));
        }
      });

      it('is on its way, not an outcome, while the report is for an older generation (a new restartToken restarts a completed run)', () => {
        expect(exitedAt('Never', { lastExitCode: 0 }, { generation: 2, observed: 1 })).to.include({ phase: 'Starting', reason: 'Updating' });
        expect(exitedAt('Never', { lastExitCode: 3 }, { generation: 2, observed: 1 })).to.include({ phase: 'Starting', reason: 'Updating' });
        expect(exitedAt('Never', { lastExitCode: 3 }, { generation: 2, observed: 1, runState: 'Stopped' })).to.include({ phase: 'Stopping', reason: 'Stopping' });
      });

      it('still reports the agent’s own failure (a Failed WorkItem) as Failed', () => {
        const inst = instance('web', { restartPolicy: 'Never' });
        const status: WorkItemStatus = { observedGeneration: 1, phase: 'Failed', lastError: { reason: 'NotFound', message: 'working directory /x does not exist on node n1' }, instance: { state: 'Exited', lastExitCode: 0 } };
        expect(fromWorkItem(input(inst), instanceWorkItem(inst, 'n1', { status }))).to.include({ phase: 'Failed', reason: 'NotFound' });
      });
    });

    it('is Unknown with Ready Unknown NodeUnreachable when the node is unreachable or lost, whatever the agent last said', () => {
      const inst = instance('web');
      for (const view of [unreachable(1000), LOST]) {
        const r = fromWorkItem(input(inst, { n1: view }), instanceWorkItem(inst, 'n1', { status: running() }));
        expect([r.phase, r.ready, r.reason]).to.deep.equal(['Unknown', 'Unknown', 'NodeUnreachable']);
      }
    });
  });

  describe('instanceStatus', () => {
    it('mirrors pid, startedAt, restarts, logPath, qemu and the last termination from the agent', () => {
      const inst = instance('web');
      const w = instanceWorkItem(inst, 'n1', {
        status: { observedGeneration: 1, instance: { state: 'Running', pid: 7, startedAt: EARLIER, restarts: 3, logPath: '/l', lastExitCode: 2, qemu: { accelerator: 'tcg' } } },
      });
      const s = instanceStatus(input(inst), { kind: 'placed', workItem: w });
      expect(s).to.include({ phase: 'Running', nodeName: 'n1', workItemName: 'web.n1', pid: 7, startedAt: EARLIER, restarts: 3, logPath: '/l', observedGeneration: 1, reason: 'Running' });
      expect(s.qemu).to.deep.equal({ accelerator: 'tcg' });
      expect(s.lastTermination).to.deep.equal({ exitCode: 2, signal: undefined });
    });

    it('keeps restarts, lastTermination and lastFailover it knew when the agent says nothing', () => {
      const inst = instance('web', {}, { restarts: 4, lastTermination: { exitCode: 1 }, lastFailover: { fromNode: 'n0', time: EARLIER } });
      const s = instanceStatus(input(inst), { kind: 'placed', workItem: instanceWorkItem(inst, 'n1') });
      expect(s.restarts).to.equal(4);
      expect(s.lastTermination).to.deep.equal({ exitCode: 1 });
      expect(s.lastFailover).to.deep.equal({ fromNode: 'n0', time: EARLIER });
    });

    it('sets observedGeneration on the status and on each condition', () => {
      const inst = instance('web', {}, undefined, { generation: 7 });
      const s = instanceStatus(input(inst), { kind: 'scheduled', nodeName: 'n1', workItemName: 'web.n1' });
      expect(s.observedGeneration).to.equal(7);
      expect(s.conditions!.map((c) => [c.type, c.observedGeneration])).to.deep.equal([
        ['Scheduled', 7],
        ['Ready', 7],
      ]);
    });

    it('moves lastTransitionTime only when a condition’s status flips', () => {
      const inst0 = instance('web');
      const w = instanceWorkItem(inst0, 'n1', { status: { observedGeneration: 1, instance: { state: 'Starting' } } });
      const t0 = instanceStatus(input(inst0, {}, NOW), { kind: 'placed', workItem: w });
      expect(byType(t0.conditions, 'Ready').lastTransitionTime).to.equal(NOW_TEXT);
      expect(byType(t0.conditions, 'Scheduled').lastTransitionTime).to.equal(NOW_TEXT);

      // Still not ready, other reason: the time stays.
      const later = NOW + 30_000;
      const backoff = instanceWorkItem(inst0, 'n1', { status: { observedGeneration: 1, instance: { state: 'BackOff' } } });
      const t1 = instanceStatus(input(instance('web', {}, t0), {}, later), { kind: 'placed', workItem: backoff });
      expect(byType(t1.conditions, 'Ready')).to.include({ status: 'False', reason: 'CrashLoopBackOff', lastTransitionTime: NOW_TEXT });

      // Ready flips to True: the time moves; Scheduled stays True and keeps its time.
      const t2 = instanceStatus(input(instance('web', {}, t1), {}, later), { kind: 'placed', workItem: instanceWorkItem(inst0, 'n1', { status: running() }) });
      expect(byType(t2.conditions, 'Ready')).to.include({ status: 'True', lastTransitionTime: timestamp(later) });
      expect(byType(t2.conditions, 'Scheduled').lastTransitionTime).to.equal(NOW_TEXT);

      // Unschedulable flips Scheduled to False.
      const t3 = instanceStatus(input(instance('web', {}, t2), {}, later + 1000), { kind: 'unschedulable', message: 'no nodes' });
      expect(byType(t3.conditions, 'Scheduled')).to.include({ status: 'False', reason: 'Unschedulable', message: 'no nodes', lastTransitionTime: timestamp(later + 1000) });
    });

    it('describes a deletion in progress', () => {
      const inst = instance('web');
      expect(instanceStatus(input(inst), { kind: 'stopping', workItem: instanceWorkItem(inst, 'n2') })).to.include({ phase: 'Stopping', reason: 'Deleting', message: 'waiting for node n2 to stop it' });
      expect(instanceStatus(input(inst), { kind: 'stopping', workItem: undefined })).to.include({ phase: 'Stopping', reason: 'Deleting', message: 'deleting' });
    });
  });

  it('timestamp is RFC 3339 at second precision', () => {
    expect(timestamp(NOW + 999)).to.equal(NOW_TEXT);
  });
});

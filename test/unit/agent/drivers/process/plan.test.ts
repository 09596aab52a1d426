/** The process driver's pure plan: runtime state and next step for each combination of desired and observed state. */
import { expect } from 'chai';
import { planInstance, type PlanInput } from '../../../../../agent/drivers/process/plan.js';
import type { ProcessState } from '../../../../../agent/drivers/process/state.js';

const state = (over: Partial<ProcessState> = {}): ProcessState => ({
  version: 1, pid: 42, startTicks: 7, bootId: 'b', startedAt: 0, restarts: 0, backoffCount: 0, specHash: 'h', stopped: false, limitsEnforced: false, limitsMessage: '', ...over,
});
const input = (over: Partial<PlanInput> = {}): PlanInput => ({ spec: { runState: 'Running' }, specHash: 'h', state: state(), running: true, now: 100_000, ...over });

describe('process instance plan', () => {
  it('starts an instance never started, and leaves one that should not run alone', () => {
    expect(planInstance(input({ state: undefined, running: false }))).to.deep.include({ state: 'Pending', action: 'start' });
    expect(planInstance(input({ state: undefined, running: false, spec: { runState: 'Stopped' } }))).to.deep.equal({ state: 'Stopped', message: 'stopped' });
  });

  it('keeps a running instance, stops it for runState Stopped, restarts it for a new token or spec', () => {
    expect(planInstance(input())).to.deep.equal({ state: 'Running', message: 'running as pid 42' });
    expect(planInstance(input({ spec: { runState: 'Stopped' } }))).to.deep.include({ state: 'Running', action: 'stop' });
    expect(planInstance(input({ spec: { runState: 'Running', restartToken: 't1' } }))).to.deep.include({ action: 'restart', backoffCount: 0, message: 'restart requested (restartToken changed)' });
    expect(planInstance(input({ specHash: 'other' }))).to.deep.include({ action: 'restart', message: 'spec changed: restarting to apply it' });
  });

  it('restarts a running instance whose gluster mount lost its client, or was mounted again after it started; not one started after', () => {
    const restart = { state: 'Running', action: 'restart', backoffCount: 0, message: 'the glusterfs client of a volume it uses died: restarting on a new mount' };
    expect(planInstance(input({ mounts: { lost: true } }))).to.deep.equal(restart);
    expect(planInstance(input({ state: state({ startedAt: 1000 }), mounts: { lost: false, remountedAt: 2000 } }))).to.deep.equal(restart);
    expect(planInstance(input({ state: state({ startedAt: 3000 }), mounts: { lost: false, remountedAt: 2000 } }))).to.deep.equal({ state: 'Running', message: 'running as pid 42' });
    expect(planInstance(input({ mounts: { lost: true }, spec: { runState: 'Stopped' } }))).to.deep.include({ action: 'stop' });
  });

  it('asks to record an exit it has not recorded yet, whatever the desired state', () => {
    for (const runState of ['Running', 'Stopped'] as const) {
      expect(planInstance(input({ running: false, observedExitCode: 3, spec: { runState } }))).to.deep.equal({ state: 'Exited', action: 'recordExit', message: 'exited with status 3' });
    }
    expect(planInstance(input({ running: false })).message).to.equal('exited (status unknown)');
  });

  it('applies restartPolicy and backoff to a recorded exit', () => {
    const exited = (code: number, policy: 'Always' | 'OnFailure' | 'Never', now = 100_000) =>
      planInstance(input({ running: false, now, state: state({ startedAt: 90_000, exit: { code, signal: code === 137 ? 'SIGKILL' : undefined, at: 100_000 } }), spec: { runState: 'Running', restartPolicy: policy } }));
    expect(exited(1, 'Never')).to.deep.include({ state: 'Exited', message: 'exited with status 1; restartPolicy Never does not restart it' });
    expect(exited(0, 'OnFailure')).to.not.have.property('action');
    expect(exited(137, 'OnFailure')).to.deep.include({ state: 'BackOff', requeueAfterMs: 1000, message: 'exited with status 137 (SIGKILL); restarting in 1 s (backoff)' });
    expect(exited(0, 'Always', 101_000)).to.deep.include({ state: 'Exited', action: 'restart', backoffCount: 1 });
  });

  it('reports a clean exit under Never or OnFailure as a fact (Exited, status 0) with nothing left to do; the controller decides the phase', () => {
    for (const restartPolicy of ['Never', 'OnFailure'] as const) {
      const p = planInstance(input({ running: false, state: state({ exit: { code: 0, at: 100_000 } }), spec: { runState: 'Running', restartPolicy } }));
      expect(p, restartPolicy).to.deep.equal({ state: 'Exited', message: `exited with status 0; restartPolicy ${restartPolicy} does not restart it` });
    }
    const always = planInstance(input({ running: false, now: 100_500, state: state({ startedAt: 90_000, exit: { code: 0, at: 100_000 } }), spec: { runState: 'Running', restartPolicy: 'Always' } }));
    expect(always).to.deep.include({ state: 'BackOff', requeueAfterMs: 500 });
  });

  it('restarts an exited instance at once when its spec or token changed', () => {
    const p = planInstance(input({ running: false, specHash: 'new', state: state({ exit: { code: 1, at: 100_000 } }), spec: { runState: 'Running', restartPolicy: 'Never' } }));
    expect(p).to.deep.include({ action: 'restart', backoffCount: 0 });
  });

  it('marks a dead instance stopped, keeps a stopped one stopped, and starts it again on runState Running', () => {
    expect(planInstance(input({ running: false, state: state({ exit: { code: 0, at: 1 } }), spec: { runState: 'Stopped' } }))).to.deep.include({ state: 'Stopped', action: 'stop' });
    expect(planInstance(input({ running: false, state: state({ stopped: true }), spec: { runState: 'Stopped' } }))).to.deep.equal({ state: 'Stopped', message: 'stopped' });
    expect(planInstance(input({ running: false, state: state({ stopped: true, exit: { code: 143, at: 1 } }), spec: { runState: 'Running', restartPolicy: 'Never' } }))).to.deep.include({ state: 'Stopped', action: 'start' });
  });
});

/** workItemStatus: the WorkItem status the agent writes from a driver's observation. */
import { expect } from 'chai';
import type { WorkItem } from '../../../api/workitem.js';
import { workItemStatus } from '../../../agent/status.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const item = (restartPolicy: 'Always' | 'OnFailure' | 'Never'): WorkItem => ({
  metadata: { namespace: 'c1', name: 'web.n1', generation: 2 },
  spec: { nodeName: 'n1', type: 'InstanceRuntime', owner: { kind: 'Instance', name: 'web' }, instance: { driver: 'process', runState: 'Running', restartPolicy, cpus: 1, memory: '1Mi', process: { command: ['true'] } } },
  status: { observedGeneration: 2, phase: 'InProgress', attempts: 1 },
});

describe('agent WorkItem status', () => {
  it('reports a workload that exited by itself as facts (Done, state Exited, exit status), never as a failed operation', () => {
    for (const restartPolicy of ['Never', 'OnFailure'] as const) {
      const message = `exited with status 0; restartPolicy ${restartPolicy} does not restart it`;
      const s = workItemStatus(item(restartPolicy), { phase: 'Done', message, observation: { converged: true, message, instance: { state: 'Exited', ready: false, restarts: 0, lastExitCode: 0 } } }, NOW);
      expect(s, restartPolicy).to.deep.include({ phase: 'Done', message, observedGeneration: 2, attempts: 0 });
      expect(s.instance).to.deep.equal({ state: 'Exited', ready: false, restarts: 0, lastExitCode: 0 });
      expect(s).to.not.have.property('lastError');
      expect(s.conditions!.find((c) => c.type === 'Ready')).to.include({ status: 'False', message });
    }
  });

  it('keeps a non-zero exit status as a fact too', () => {
    const message = 'exited with status 3; restartPolicy Never does not restart it';
    const s = workItemStatus(item('Never'), { phase: 'Done', message, observation: { converged: true, message, instance: { state: 'Exited', ready: false, lastExitCode: 3 } } }, NOW);
    expect(s).to.deep.include({ phase: 'Done' });
    expect(s.instance).to.include({ state: 'Exited', lastExitCode: 3 });
    expect(s).to.not.have.property('lastError');
  });
});

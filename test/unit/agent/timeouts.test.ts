/** Default operation timeouts per action, the grace period of stops, and the WorkItem's own timeout. */
import { expect } from 'chai';
import type { WorkItem } from '../../../api/workitem.js';
import { operationTimeoutMs } from '../../../agent/operations/timeouts.js';

const instance = (grace?: number, timeoutSeconds?: number): WorkItem => ({
  metadata: { namespace: 'c1', name: 'w' },
  spec: { nodeName: 'n1', type: 'InstanceRuntime', owner: { kind: 'Instance', name: 'i' }, ...(timeoutSeconds ? { timeoutSeconds } : {}), instance: { driver: 'process', runState: 'Running', cpus: 1, memory: '1Mi', ...(grace !== undefined ? { terminationGracePeriodSeconds: grace } : {}) } },
});
const replica: WorkItem = { metadata: { namespace: 'c1', name: 'r' }, spec: { nodeName: 'n1', type: 'VolumeReplica', owner: { kind: 'Volume', name: 'v' }, volumeReplica: { volumeName: 'v', index: 0, size: '1Mi' } } };

describe('operation timeouts', () => {
  it('defaults per action, adding the grace period to what stops a process', () => {
    expect(operationTimeoutMs(instance(), 'ensure', 'start')).to.equal(30_000);
    expect(operationTimeoutMs(instance(), 'ensure')).to.equal(30_000);
    expect(operationTimeoutMs(instance(), 'ensure', 'stop')).to.equal(40_000);
    expect(operationTimeoutMs(instance(60), 'ensure', 'restart')).to.equal(90_000);
    expect(operationTimeoutMs(instance(0), 'remove')).to.equal(120_000);
    expect(operationTimeoutMs(replica, 'ensure')).to.equal(600_000);
    expect(operationTimeoutMs(replica, 'ensure', 'resize')).to.equal(600_000);
    expect(operationTimeoutMs(replica, 'remove')).to.equal(120_000);
  });

  it('lets spec.timeoutSeconds win', () => {
    expect(operationTimeoutMs(instance(60, 5), 'ensure', 'stop')).to.equal(5_000);
  });

  it('keeps within the longest timer Node keeps (a longer one fires at once: the operation was killed as timed out)', () => {
    expect(operationTimeoutMs(instance(undefined, 3_000_000), 'ensure')).to.equal(2 ** 31 - 1);
  });
});

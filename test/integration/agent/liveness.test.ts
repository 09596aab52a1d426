/**
 * The agent's liveness sweep against real processes: which WorkItems it hands
 * back for a full reconcile. A pid alone is not an identity (pids are
 * recycled): a live process under a reported pid that is not the reported
 * process counts as dead.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { WorkItem } from '../../../api/workitem.js';
import { staleWorkItems } from '../../../agent/liveness.js';
import { readProcStat, startTimeIso } from '../../../agent/drivers/process/proc.js';
import { instanceItem } from './helpers.js';

function reportedRunning(name: string, pid: number, processStartTime?: string): WorkItem {
  return { ...instanceItem(name, { command: ['sleep'] }), status: { instance: { state: 'Running', ready: true, restarts: 0, pid, ...(processStartTime ? { processStartTime } : {}) } } } as WorkItem;
}

function reportedBrick(name: string, pid: number): WorkItem {
  return {
    metadata: { namespace: 'c1', name },
    spec: { nodeName: 'n1', type: 'VolumeReplica', owner: { kind: 'Volume', name: 'v' } },
    status: { volumeReplica: { path: '/nonexistent', brick: { state: 'Running', port: 24009, pid } } },
  } as WorkItem;
}

describe('agent liveness sweep (real processes)', () => {
  it('passes over a running instance, and hands back one whose pid is gone or is another process by now', async () => {
    const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
    try {
      const started = startTimeIso(readProcStat(child.pid!)!.startTicks);
      const items = [
        reportedRunning('same', child.pid!, started),
        reportedRunning('without-start-time', child.pid!),
        reportedRunning('recycled', child.pid!, new Date(Date.parse(started) - 60_000).toISOString()),
      ];
      expect(staleWorkItems(items)).to.deep.equal(['c1/wi-recycled']);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    expect(staleWorkItems([reportedRunning('gone', child.pid!)])).to.deep.equal(['c1/wi-gone']);
  });

  it('hands back a brick whose pid now belongs to a process that is not a glusterfsd', () => {
    expect(staleWorkItems([reportedBrick('brick', process.pid)])).to.deep.equal(['c1/brick']);
  });
});

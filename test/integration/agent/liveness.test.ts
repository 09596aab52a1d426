/**
 * The agent's liveness sweep against real processes: which WorkItems it hands
 * back for a full reconcile. A pid alone is not an identity (pids are
 * recycled): a live process under a reported pid that started at another
 * time than the one first seen there counts as dead.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import type { WorkItem } from '../../../api/workitem.js';
import { SeenProcesses, staleWorkItems } from '../../../agent/liveness.js';
import { readProcStat } from '../../../agent/drivers/process/proc.js';
import { instanceItem } from './helpers.js';

function reportedRunning(name: string, pid: number): WorkItem {
  return { ...instanceItem(name, { command: ['sleep'] }), status: { instance: { state: 'Running', ready: true, restarts: 0, pid } } } as WorkItem;
}

function reportedBrick(name: string, pid: number): WorkItem {
  return {
    metadata: { namespace: 'c1', name },
    spec: { nodeName: 'n1', type: 'VolumeReplica', owner: { kind: 'Volume', name: 'v' } },
    status: { volumeReplica: { path: '/nonexistent', brick: { state: 'Running', port: 24009, pid } } },
  } as WorkItem;
}

describe('agent liveness sweep (real processes)', () => {
  it('passes over a running process, and hands back one whose pid is gone or is another process by now', async () => {
    const child = spawn('sleep', ['1000'], { stdio: 'ignore' });
    const seen = new SeenProcesses();
    try {
      const items = [reportedRunning('web', child.pid!), reportedBrick('brick', child.pid!)];
      expect(staleWorkItems(items, seen), 'first seen').to.deep.equal([]);
      expect(staleWorkItems(items, seen), 'the same processes').to.deep.equal([]);
      // The pid recycled: what was first seen under it started at another time.
      const recycled = new SeenProcesses();
      const ticks = readProcStat(child.pid!)!.startTicks;
      (recycled as unknown as { seen: Map<string, { pid: number; startTicks: number }> }).seen.set('c1/wi-web', { pid: child.pid!, startTicks: ticks - 100 });
      expect(staleWorkItems([reportedRunning('web', child.pid!)], recycled)).to.deep.equal(['c1/wi-web']);
    } finally {
      child.kill('SIGKILL');
      await once(child, 'exit');
    }
    expect(staleWorkItems([reportedRunning('web', child.pid!)], seen), 'gone').to.deep.equal(['c1/wi-web']);
  });
});

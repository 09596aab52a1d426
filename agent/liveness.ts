/**
 * A cheap sweep that notices dead instances and gluster bricks between
 * reconciles: every few seconds it reads /proc/<pid>/stat of each running
 * process the agent reported (microseconds each) and enqueues only the
 * WorkItems whose process is gone or a zombie. Full reconciles of healthy instances are
 * then rare, which is what keeps an agent with hundreds of instances idle.
 */
import type { WorkItem } from '../api/workitem.js';
import { isLive, readProcStat } from './drivers/process/proc.js';
import { keyOf } from './local-store.js';

/** The pid the agent last reported running for a WorkItem: its instance's, or its brick's. */
function reportedPid(w: WorkItem): number | undefined {
  const s = w.status;
  if (s?.instance?.state === 'Running') return s.instance.pid;
  if (s?.volumeReplica?.brick?.state === 'Running') return s.volumeReplica.brick.pid;
  return undefined;
}

/** WorkItems whose reported process (an instance, a brick) is no longer alive. */
export function deadProcesses(items: readonly WorkItem[]): string[] {
  return items.filter((w) => {
    const pid = reportedPid(w);
    return pid !== undefined && !isLive(readProcStat(pid));
  }).map(keyOf);
}

/** Runs the sweep every intervalMs; returns its timer. */
export function startLivenessSweep(items: () => readonly WorkItem[], enqueue: (key: string) => void, intervalMs: number): NodeJS.Timeout {
  const timer = setInterval(() => deadProcesses(items()).forEach(enqueue), intervalMs);
  timer.unref();
  return timer;
}

/**
 * A cheap sweep that notices dead instances between reconciles: every few
 * seconds it reads /proc/<pid>/stat of each running instance the agent
 * reported (microseconds each) and enqueues only the WorkItems whose
 * process is gone or a zombie. Full reconciles of healthy instances are
 * then rare, which is what keeps an agent with hundreds of instances idle.
 */
import type { WorkItem } from '../api/workitem.js';
import { isLive, readProcStat } from './drivers/process/proc.js';
import { keyOf } from './local-store.js';

/** WorkItems whose reported instance process is no longer alive. */
export function deadInstances(items: readonly WorkItem[]): string[] {
  return items
    .filter((w) => w.spec.type === 'InstanceRuntime' && w.status?.instance?.state === 'Running' && w.status.instance.pid)
    .filter((w) => !isLive(readProcStat(w.status!.instance!.pid!)))
    .map(keyOf);
}

/** Runs the sweep every intervalMs; returns its timer. */
export function startLivenessSweep(items: () => readonly WorkItem[], enqueue: (key: string) => void, intervalMs: number): NodeJS.Timeout {
  const timer = setInterval(() => deadInstances(items()).forEach(enqueue), intervalMs);
  timer.unref();
  return timer;
}

/**
 * A cheap sweep that notices dead instances and gluster bricks between
 * reconciles: every few seconds it reads /proc/<pid>/stat of each running
 * process the agent reported (microseconds each) and enqueues only the
 * WorkItems whose process is gone, a zombie or another process by now, or whose brick's count of
 * pending heals moved (one readdir per brick), so a heal's progress reaches
 * the Volume's status. Full reconciles of healthy instances are then rare,
 * which is what keeps an agent with hundreds of instances idle.
 */
import type { WorkItem } from '../api/workitem.js';
import { isLive, readProcStat, startTimeIso } from './drivers/process/proc.js';
import { isBrickProcess, pendingHeals } from './drivers/volume/gluster-brick.js';
import { keyOf } from './local-store.js';

/**
 * Whether the process the agent last reported running for a WorkItem (its instance's, or its brick's)
 * still runs. A live pid is not enough: pids are recycled, so an instance's must have the start time the
 * agent reported, and a brick's must still be a glusterfsd.
 */
function reportedProcessRuns(w: WorkItem): boolean {
  const instance = w.status?.instance;
  if (instance?.state === 'Running' && instance.pid !== undefined) {
    const stat = readProcStat(instance.pid);
    return isLive(stat) && (instance.processStartTime === undefined || startTimeIso(stat.startTicks) === instance.processStartTime);
  }
  const brick = w.status?.volumeReplica?.brick;
  if (brick?.state === 'Running' && brick.pid !== undefined) return isLive(readProcStat(brick.pid)) && isBrickProcess(brick.pid);
  return true;
}

function healsMoved(w: WorkItem): boolean {
  const brick = w.status?.volumeReplica?.brick;
  const path = w.spec.volumeReplica?.brick?.path;
  return brick?.state === 'Running' && path !== undefined && (brick.pendingHeals ?? 0) !== pendingHeals(path).count;
}

/** WorkItems whose reported process (an instance, a brick) is no longer alive, or whose brick's heal count moved. */
export function staleWorkItems(items: readonly WorkItem[]): string[] {
  return items.filter((w) => {
    return !reportedProcessRuns(w) || healsMoved(w);
  }).map(keyOf);
}

/** How often the sweep looks at instances, and at bricks. */
export interface SweepIntervals {
  instancesMs: number;
  bricksMs: number;
}

/**
 * Runs the sweep; returns its timers. Bricks get their own, shorter interval: a node has a few, and a
 * dead one leaves its Volume degraded until it runs again. Instances, which may be hundreds, are read
 * less often.
 */
export function startLivenessSweep(items: () => readonly WorkItem[], enqueue: (key: string) => void, every: SweepIntervals): NodeJS.Timeout[] {
  const sweep = (type: WorkItem['spec']['type'], ms: number) =>
    setInterval(() => staleWorkItems(items().filter((w) => w.spec.type === type)).forEach(enqueue), ms).unref();
  return [sweep('InstanceRuntime', every.instancesMs), sweep('VolumeReplica', every.bricksMs)];
}

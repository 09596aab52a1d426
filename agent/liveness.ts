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
import { isLive, readProcStat } from './drivers/process/proc.js';
import { owedSignature, pendingHeals } from './drivers/volume/gluster-brick.js';
import { keyOf } from './local-store.js';
import { guardedInterval } from '../runtime/guarded-interval.js';

/** The pid the agent last reported running for a WorkItem: its instance's, or its brick's. */
function reportedPid(w: WorkItem): number | undefined {
  const s = w.status;
  if (s?.instance?.state === 'Running') return s.instance.pid;
  if (s?.volumeReplica?.brick?.state === 'Running') return s.volumeReplica.brick.pid;
  return undefined;
}

/**
 * The start of each reported process as the sweep first saw it (in clock ticks since boot, which no
 * wall-clock step moves), by WorkItem key. A live pid is not enough: pids are recycled, and a process
 * under a reported pid that started at another time is another process.
 */
export class SeenProcesses {
  private readonly seen = new Map<string, { pid: number; startTicks: number }>();

  /** Whether the process `pid` reported for `key` still runs: alive, and the one seen under it before. */
  runs(key: string, pid: number): boolean {
    const stat = readProcStat(pid);
    if (!isLive(stat)) return false;
    const before = this.seen.get(key);
    if (before?.pid === pid) return before.startTicks === stat.startTicks;
    this.seen.set(key, { pid, startTicks: stat.startTicks });
    return true;
  }

  /** Forgets the WorkItems not in `keys` (gone, or reporting no process). */
  keepOnly(keys: ReadonlySet<string>): void {
    for (const key of this.seen.keys()) if (!keys.has(key)) this.seen.delete(key);
  }
}

/** Whether the brick's heals changed since its report: their count, or whom they blame (the controller releases a lost brick on that), at the same count too. */
function healsMoved(w: WorkItem): boolean {
  const brick = w.status?.volumeReplica?.brick;
  const path = w.spec.volumeReplica?.brick?.path;
  if (brick?.state !== 'Running' || path === undefined) return false;
  const now = pendingHeals(path);
  return (brick.pendingHeals ?? 0) !== now.count || owedSignature(brick) !== owedSignature(now);
}

/** WorkItems whose reported process (an instance, a brick) is no longer alive, or whose brick's heal count moved. */
export function staleWorkItems(items: readonly WorkItem[], seen: SeenProcesses): string[] {
  const reported = new Set<string>();
  const stale = items.filter((w) => {
    const pid = reportedPid(w);
    if (pid !== undefined) reported.add(keyOf(w));
    return (pid !== undefined && !seen.runs(keyOf(w), pid)) || healsMoved(w);
  });
  seen.keepOnly(reported);
  return stale.map(keyOf);
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
export function startLivenessSweep(items: () => readonly WorkItem[], enqueue: (key: string) => void, every: SweepIntervals, onError: (err: unknown) => void): NodeJS.Timeout[] {
  const sweep = (type: WorkItem['spec']['type'], ms: number) => {
    const seen = new SeenProcesses();
    return guardedInterval(() => staleWorkItems(items().filter((w) => w.spec.type === type), seen).forEach(enqueue), ms, onError);
  };
  return [sweep('InstanceRuntime', every.instancesMs), sweep('VolumeReplica', every.bricksMs)];
}

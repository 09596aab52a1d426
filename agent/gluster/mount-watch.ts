/**
 * Noticing dead gluster mounts: every few seconds the agent looks for
 * mounts on its node that still have users but whose glusterfs client died
 * (killed, OOM), which leaves every call on the mount failing with
 * ENOTCONN, and enqueues the WorkItems of the instances using each. Their
 * driver then restarts them (gluster-mount.ts mountHealth), mounting the
 * volume afresh in the operation's worker. Only /proc and the run dirs are
 * read here: the agent's own loop never touches a FUSE mount, which could
 * block it.
 */
import { glusterVolfile, type WorkItem } from '../../api/workitem.js';
import { deadMounts } from '../drivers/volume/gluster-mount.js';
import { keyOf } from '../local-store.js';
import { guardedInterval } from '../../runtime/guarded-interval.js';

/** The instance WorkItems that use gluster volume `volumeName` of `namespace`. */
export function usersOf(items: readonly WorkItem[], namespace: string, volumeName: string): string[] {
  return items.filter((w) => w.metadata.namespace === namespace && glusterVolfile(w, volumeName) !== undefined).map(keyOf);
}

type DeadMount = ReturnType<typeof deadMounts>[number];

/**
 * The mounts of `deadNow` not dead at the last look; `reported` (what was dead then) becomes `deadNow`.
 * A mount is reported once until it is seen alive again: its users' retries then go through the work
 * queue's backoff. Enqueued at every look, a mount that keeps failing (bricks away) was tried again every
 * second, and a stopped instance's was reconciled every second for good.
 */
export function newlyDead(reported: Set<string>, deadNow: readonly DeadMount[]): DeadMount[] {
  const key = (m: DeadMount) => `${m.namespace}/${m.volumeName}`;
  const fresh = deadNow.filter((m) => !reported.has(key(m)));
  reported.clear();
  for (const m of deadNow) reported.add(key(m));
  return fresh;
}

/** Starts the look every intervalMs; returns its timer. */
export function startMountWatch(dataDir: string, items: () => readonly WorkItem[], enqueue: (key: string) => void, intervalMs: number, onError: (err: unknown) => void): NodeJS.Timeout {
  const reported = new Set<string>();
  return guardedInterval(() => {
    for (const { namespace, volumeName } of newlyDead(reported, deadMountsNow(dataDir))) usersOf(items(), namespace, volumeName).forEach(enqueue);
  }, intervalMs, onError);
}

// A mount detached meanwhile (an operation worker removes its run dir) vanishes between two reads: this
// round sees nothing of it, and the next one looks again, without a warning.
function deadMountsNow(dataDir: string): ReturnType<typeof deadMounts> {
  try {
    return deadMounts(dataDir);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw err;
  }
}

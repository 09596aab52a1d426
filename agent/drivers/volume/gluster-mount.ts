/**
 * FUSE mounts of gluster Volumes for the instances on this node (issue 14,
 * docs/volumes.md): one mount per volume per node, at
 * <dataDir>/mounts/<namespace>/<volume>, shared by every instance attaching
 * it and unmounted after the last one leaves. The users are files, one per
 * instance, in <dataDir>/gluster/<namespace>/mount-<volume>/users/, next to
 * the client's volfile, pidfile and log: the count survives agent restarts,
 * and the glusterfs client, which daemonizes, outlives the worker that
 * mounted it. Operations run in concurrent workers, so attach and detach of
 * one volume hold mount-<volume>.lock beside that directory (O_EXCL, holding
 * the taker's pid, so a lock left by a dead worker is broken).
 *
 * A mount fetches its volfile from the agent's volfile server
 * (agent/gluster/volfile-server.ts), which tells it when a brick moved: the
 * mount then switches to the new graph under its running instances. The
 * last graph served to it stays in client.vol, the server's fallback. When
 * a mount's client dies, its instances restart (the agent notices within
 * seconds: agent/gluster/mount-watch.ts), and the first to attach again
 * mounts it afresh and records when, so the others restart on it too.
 */
import { randomBytes } from 'node:crypto';
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import type { WorkItem, WorkItemGlusterMount } from '../../../api/workitem.js';
import { OperationError } from '../../operations/errors.js';
import type { OperationContext } from '../driver.js';
import { volfileKey, volfileSocket } from '../../gluster/volfile-server.js';
import { ownerKey, safeName } from '../paths.js';
import { commandLine, isLive, readProcStat } from '../process/proc.js';

const run = promisify(execFile);
const LOCK_WAIT_MS = 30_000;
const MOUNT_WAIT_MS = 20_000;

/** The folder of a mount's users, in its run dir: a run dir holding it is a mount's. */
const MOUNT_USERS_DIR = 'users';
/** What a brick's run dir holds (gluster-brick.ts): its filesystem image (or the one mkfs is making) and volfile. */
const BRICK_FILES = ['brick.img', 'brick.img.tmp', 'brick.vol'];
/**
 * The mount of volume `x-0` and brick 0 of volume `mount-x` have one run dir, gluster/<namespace>/mount-x-0:
 * each refuses the other's, as the last user out of the mount deletes its run dir, a brick's image with it.
 */
export const SHARED_RUN_DIR_HINT = 'rename one of the two volumes (a volume name starting with "mount-" collides)';

/** Whether a run dir is a mount's (one of its users is recorded there). */
export function holdsMount(runDir: string): boolean {
  return fs.existsSync(path.join(runDir, MOUNT_USERS_DIR));
}

function holdsBrick(runDir: string): boolean {
  return BRICK_FILES.some((f) => fs.existsSync(path.join(runDir, f)));
}

/** Where a gluster Volume is mounted on this node: what its instances get (CAIRN_VOLUME_<NAME>). */
export function glusterMountDir(dataDir: string, namespace: string, volumeName: string): string {
  return path.join(dataDir, 'mounts', safeName('metadata.namespace', namespace), safeName('volume name', volumeName));
}

/** Where the mount's run files are: its client volfile, pidfile, log and users. */
export function mountRunDir(dataDir: string, namespace: string, volumeName: string): string {
  return path.join(dataDir, 'gluster', safeName('metadata.namespace', namespace), `mount-${safeName('volume name', volumeName)}`);
}

/**
 * Whether something is mounted at `dir`. /proc/self/mounts names mount points by their real path (a
 * data dir reached through a symlink is listed resolved) with space, tab, newline and backslash as
 * octal escapes. The parent is resolved, not `dir` itself, which a dead FUSE client makes unreadable.
 */
export function isMountPoint(dir: string): boolean {
  let real: string;
  try {
    real = path.join(fs.realpathSync(path.dirname(dir)), path.basename(dir));
  } catch {
    return false; // no parent, so nothing can be mounted there
  }
  const unescape = (p: string) => p.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
  return fs.readFileSync('/proc/self/mounts', 'utf8').split('\n').some((l) => unescape(l.split(' ')[1] ?? '') === real);
}

/** Unmounts (lazily) every mount stacked at `dir`: a retry after a crash may have mounted over a mount left behind. */
export async function unmountAll(dir: string): Promise<void> {
  for (let i = 0; i < 16 && isMountPoint(dir); i++) await run('umount', ['-l', dir]);
  if (isMountPoint(dir)) throw new Error(`${dir} is still a mount point after 16 unmounts`);
}

/**
 * Removes a mount point's directory once nothing is mounted there. Recursive removal through a mount
 * still there would delete the volume's files on every brick, so it first checks that the directory
 * is on its parent's filesystem (it throws, and the step is retried, otherwise).
 */
export function removeMountPoint(dir: string): void {
  if (!fs.existsSync(path.dirname(dir))) return;
  let onParent: boolean;
  try {
    onParent = !isMountPoint(dir) && fs.statSync(dir).dev === fs.statSync(path.dirname(dir)).dev;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw new Error(`cannot tell whether ${dir} is still mounted: ${(err as Error).message}`);
  }
  if (!onParent) throw new Error(`${dir} is still mounted; it is not removed`);
  fs.rmSync(dir, { recursive: true, force: true });
}

/** Runs `fn` holding the lock of the volume whose run files are in `dir`. */
async function withLock<T>(dir: string, fn: () => Promise<T>, signal: AbortSignal): Promise<T> {
  fs.mkdirSync(path.dirname(dir), { recursive: true, mode: 0o700 });
  const lock = `${dir}.lock`;
  for (const deadline = Date.now() + LOCK_WAIT_MS; ; ) {
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      const holder = lockHolder(lock);
      if (holder && !isLive(readProcStat(holder))) breakStaleLock(lock, holder);
      else if (Date.now() > deadline) throw new OperationError('Timeout', `the mount lock ${lock} is held by pid ${holder}`, 'another operation on this volume hangs; see the agent log');
      else await new Promise((r) => setTimeout(r, 25));
      signal.throwIfAborted();
    }
  }
  try {
    return await fn();
  } finally {
    if (lockHolder(lock) === process.pid) fs.rmSync(lock, { force: true });
  }
}

function lockHolder(lock: string): number {
  try {
    return Number(fs.readFileSync(lock, 'utf8') || 0);
  } catch {
    return 0;
  }
}

/**
 * Removes the lock a dead process left. Two waiters may both see it dead: removed by name, the second
 * would remove the lock the first had just taken, and both would hold it. Moved aside instead, it is
 * broken by one waiter only; a lock taken anew in between (a live holder) is put back.
 */
function breakStaleLock(lock: string, deadHolder: number): void {
  const aside = `${lock}.stale.${process.pid}.${randomBytes(4).toString('hex')}`;
  try {
    fs.renameSync(lock, aside);
  } catch {
    return; // another waiter broke it first, or it was let go
  }
  try {
    if (lockHolder(aside) !== deadHolder) fs.linkSync(aside, lock);
  } catch {
    // the name was taken again meanwhile: that lock stands
  } finally {
    fs.rmSync(aside, { force: true });
  }
}

/** Whether the mount answers; a client that died leaves a mount point that fails with ENOTCONN. */
export function answers(dir: string): boolean {
  try {
    fs.statSync(dir);
    return true;
  } catch {
    return false;
  }
}

/** Mounts the volume at `dir` with the client volfile, and waits until it answers. */
async function mount(namespace: string, volumeName: string, m: Pick<WorkItemGlusterMount, 'volume' | 'volfile'>, dir: string, rd: string, ctx: OperationContext): Promise<void> {
  const volfile = path.join(rd, 'client.vol');
  fs.writeFileSync(`${volfile}.tmp`, m.volfile);
  fs.renameSync(`${volfile}.tmp`, volfile);
  fs.mkdirSync(dir, { recursive: true });
  const log = path.join(rd, 'client.log');
  try {
    // From the agent's volfile server, not -f: it tells the mount when a brick moved, and the mount switches graphs.
    const server = ['-s', volfileSocket(ctx.dataDir), '--volfile-server-transport', 'unix', '--volfile-id', volfileKey(namespace, volumeName)];
    await run('glusterfs', ['--process-name', 'fuse', ...server, '-p', path.join(rd, 'client.pid'), '-l', log, dir], { signal: ctx.signal });
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') throw new OperationError('DriverUnavailable', `glusterfs is not installed on node ${ctx.nodeName}`, `install glusterfs-client on node ${ctx.nodeName} (hack/install-gluster.sh)`);
    throw new OperationError('CommandFailed', `mounting gluster volume ${m.volume} at ${dir} on node ${ctx.nodeName} failed: ${(err as Error).message}`, `see ${log} on node ${ctx.nodeName}`, { cause: err });
  }
  if (!(await waitForMount(dir, ctx.signal))) {
    await unmountAll(dir).catch(() => undefined);
    throw new OperationError('Timeout', `gluster volume ${m.volume} mounted at ${dir} on node ${ctx.nodeName} does not answer`, `its bricks may be down or unreachable from node ${ctx.nodeName}; see the Volume's status and ${log}`);
  }
  ctx.log.info('gluster volume mounted', { volume: m.volume, dir });
}

/** Waits until a FUSE mount at `dir` is up and answers; false when it does not in time. */
export async function waitForMount(dir: string, signal: AbortSignal): Promise<boolean> {
  for (const deadline = Date.now() + MOUNT_WAIT_MS; !(isMountPoint(dir) && answers(dir)); ) {
    if (Date.now() > deadline) return false;
    signal.throwIfAborted();
    await new Promise((r) => setTimeout(r, 100));
  }
  return true;
}

/** Refuses a mount whose run dir is a brick's (SHARED_RUN_DIR_HINT). */
function refuseBrickRunDir(rd: string, namespace: string, volumeName: string, ctx: OperationContext): void {
  if (!holdsBrick(rd)) return;
  throw new OperationError('InvalidSpec', `the mount of volume ${namespace}/${volumeName} on node ${ctx.nodeName} would share its run dir ${rd} with a brick of volume ${namespace}/mount-${volumeName.replace(/-\d+$/, '')}`, SHARED_RUN_DIR_HINT);
}

/** Makes `user` a user of the volume's mount on this node, mounting it first if need be; returns the mount directory. */
export async function attachGluster(namespace: string, volumeName: string, m: WorkItemGlusterMount, user: string, ctx: OperationContext): Promise<string> {
  const dir = glusterMountDir(ctx.dataDir, namespace, volumeName);
  const rd = mountRunDir(ctx.dataDir, namespace, volumeName);
  refuseBrickRunDir(rd, namespace, volumeName, ctx);
  await withLock(rd, async () => {
    fs.mkdirSync(path.join(rd, MOUNT_USERS_DIR), { recursive: true, mode: 0o700 });
    fs.writeFileSync(path.join(rd, MOUNT_USERS_DIR, user), '');
    // Its client must run too: the root of a mount whose client was just killed still stats for a moment
    // (the kernel's attribute cache), and a restart then started the instance on the dead mount again.
    if (isMountPoint(dir) && clientRuns(rd) && answers(dir)) return;
    // Still listed but not answering, or its client gone: the instances using it are on a dead mount.
    const again = isMountPoint(dir);
    await unmountAll(dir);
    await mount(namespace, volumeName, m, dir, rd, ctx);
    if (again) {
      fs.writeFileSync(path.join(rd, REMOUNTED_FILE), String(ctx.now()));
      ctx.log.warn('gluster volume mounted again: its glusterfs client had died', { volume: m.volume, dir });
    }
  }, ctx.signal);
  return dir;
}

/** Drops `user` from the volume's mount on this node; the last user out unmounts it and removes its files. */
async function detachGluster(namespace: string, volumeName: string, user: string, ctx: OperationContext): Promise<void> {
  const dir = glusterMountDir(ctx.dataDir, namespace, volumeName);
  const rd = mountRunDir(ctx.dataDir, namespace, volumeName);
  if (!fs.existsSync(rd) || holdsBrick(rd)) return;
  await withLock(rd, async () => {
    fs.rmSync(path.join(rd, MOUNT_USERS_DIR, user), { force: true });
    if (fs.existsSync(path.join(rd, MOUNT_USERS_DIR)) && fs.readdirSync(path.join(rd, MOUNT_USERS_DIR)).length > 0) return;
    await unmountAll(dir);
    stopClient(path.join(rd, 'client.pid'));
    // Lazily unmounted, so the directory is empty now even while the client finishes.
    removeMountPoint(dir);
    fs.rmSync(rd, { recursive: true, force: true });
    ctx.log.info('gluster volume unmounted: its last user left', { volume: volumeName, dir });
  }, ctx.signal);
}

/** A lazily unmounted client exits once idle; one still running after that is told to go. */
export function stopClient(pidfile: string): void {
  const pid = Number(fs.existsSync(pidfile) ? fs.readFileSync(pidfile, 'utf8').trim() : 0);
  try {
    if (pid && commandLine(pid)?.some((a) => a.includes(pidfile))) process.kill(pid, 'SIGTERM');
  } catch {
    // Gone already.
  }
}

/** In a mount's run dir: when it was last mounted again after its client died (epoch ms). */
const REMOUNTED_FILE = 'remounted';

/** Whether the mount's glusterfs client runs: its pidfile's process, started with this very pidfile. */
function clientRuns(rd: string): boolean {
  const pidfile = path.join(rd, 'client.pid');
  try {
    const pid = Number(fs.readFileSync(pidfile, 'utf8').trim());
    return isLive(readProcStat(pid)) && commandLine(pid)?.some((a) => a.includes(pidfile)) === true;
  } catch {
    return false;
  }
}

/** The mounts on this node that have users but whose glusterfs client is gone (every call on them fails with ENOTCONN). */
export function deadMounts(dataDir: string): { namespace: string; volumeName: string }[] {
  const root = path.join(dataDir, 'gluster');
  const dead: { namespace: string; volumeName: string }[] = [];
  for (const namespace of fs.existsSync(root) ? fs.readdirSync(root) : []) {
    const parent = path.join(root, namespace);
    if (!fs.statSync(parent).isDirectory()) continue;
    for (const e of fs.readdirSync(parent).filter((x) => x.startsWith('mount-') && !x.endsWith('.lock'))) {
      const rd = path.join(parent, e);
      const users = path.join(rd, MOUNT_USERS_DIR);
      if (fs.existsSync(users) && fs.readdirSync(users).length > 0 && !clientRuns(rd)) dead.push({ namespace, volumeName: e.slice('mount-'.length) });
    }
  }
  return dead;
}

/**
 * What an instance's gluster mounts on this node say about its run: `lost` while one it uses has no
 * client any more, `remountedAt` the latest time one was made again after that. Either way its working
 * directory and open files are on a dead mount, and only a new run sees the new one.
 */
export function mountHealth(item: WorkItem, dataDir: string): { lost: boolean; remountedAt?: number } {
  const { namespace, name } = ownerKey(item);
  let lost = false;
  let latest = 0;
  for (const v of (item.spec.instance?.volumes ?? []).filter((x) => x.gluster)) {
    const rd = mountRunDir(dataDir, namespace, v.volumeName);
    if (fs.existsSync(path.join(rd, MOUNT_USERS_DIR, name)) && !clientRuns(rd)) lost = true;
    latest = Math.max(latest, Number(readOr(path.join(rd, REMOUNTED_FILE), '')) || 0);
  }
  return { lost, ...(latest > 0 ? { remountedAt: latest } : {}) };
}

function readOr(file: string, fallback: string): string {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return fallback;
  }
}

/** Drops `user` from every gluster mount of the namespace it uses on this node (whatever the spec says now: a volume detached since still counts it). */
export async function detachAllGluster(namespace: string, user: string, ctx: OperationContext): Promise<void> {
  const parent = path.join(ctx.dataDir, 'gluster', safeName('metadata.namespace', namespace));
  const entries = fs.existsSync(parent) ? fs.readdirSync(parent) : [];
  for (const e of entries.filter((x) => x.startsWith('mount-') && !x.endsWith('.lock'))) {
    if (fs.existsSync(path.join(parent, e, MOUNT_USERS_DIR, user))) await detachGluster(namespace, e.slice('mount-'.length), user, ctx);
  }
}

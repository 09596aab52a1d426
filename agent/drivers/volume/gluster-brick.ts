/**
 * The `gluster` volume replica driver (issue 14, docs/volumes.md): replica
 * <index> of a Volume is a GlusterFS brick, one glusterfsd run from the
 * volfile the controller generated, no glusterd. Its data is the directory
 * <dataDir>/bricks/<namespace>/<volume>-<index> (spec.brick.path must name
 * exactly that: a WorkItem can never make the agent touch another
 * directory), its run files (volfile, pidfile, log)
 * <dataDir>/gluster/<namespace>/<volume>-<index>/.
 *
 * glusterfsd daemonizes in its own session once its graph is up, so a brick
 * outlives the worker that started it and the agent, and a restarted agent
 * re-adopts it through its pidfile (checked against /proc, so a reused pid
 * is never taken for the brick). Before the first start the brick root gets
 * `.glusterfs` (the index needs it) and the volume id as the xattr
 * trusted.glusterfs.volume-id; a root already stamped with another id is
 * refused, so a brick never joins a second volume. Once every brick of the
 * volume is placed, the spec also carries the self-heal daemon's volfile,
 * and the agent runs one (glusterfs --process-name=glustershd) next to the
 * brick: it heals what the bricks' indices list whenever a brick returns.
 * A changed volfile restarts the brick (or only the daemon); another brick's join (as glusterd's
 * replace-brick restarts every daemon) and a heal that stopped moving restart the daemon, which crawls
 * when it starts; a Stopped volume stops both and keeps the
 * data; remove() stops them and deletes the data unless reclaimPolicy is Retain.
 */
import { execFile, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { brickDataPath } from '../../../api/names.js';
import { formatQuantity, parseQuantity } from '../../../api/quantity.js';
import type { NodeDriver } from '../../../api/node.js';
import type { WorkItem, WorkItemBrickSpec, WorkItemBrickStatus, WorkItemOwedEntry } from '../../../api/workitem.js';
import { classify, OperationError } from '../../operations/errors.js';
import type { Driver, DriverEnv, Observation, OperationContext } from '../driver.js';
import { ownerKey, safeName } from '../paths.js';
import { commandLine } from '../process/proc.js';
import { ensureBrickFilesystem, fullyAllocated, removeBrickFilesystem, usableBytes } from './brick-filesystem.js';
import { holdsMount, isMountPoint, removeMountPoint, SHARED_RUN_DIR_HINT, stopClient, unmountAll, waitForMount } from './gluster-mount.js';

const run = promisify(execFile);
const STOP_GRACE_MS = 5_000;
const XATTR = 'trusted.glusterfs.volume-id';
/** GF_CLIENT_PID_ADD_REPLICA_MOUNT: the only client pid AFR (GlusterFS 10) lets set trusted.replace-brick. */
const ADD_REPLICA_MOUNT_PID = -12;
/** In the run dir: the brick's filesystem image (brick-filesystem.ts). */
const IMAGE_FILE = 'brick.img';
/** In the run dir: when the brick joined its volume (joinOnce, joinedAt). */
const JOINED_FILE = 'joined';
/** In the run dir: the uid of the WorkItem whose brick joined (joinedAt). Apart from JOINED_FILE, which agents before it read whole. */
const JOINED_BY_FILE = 'joined.by';
/** In the run dir: what the running self-heal daemon started for (selfHealStartKey). */
const SHD_STARTED_FOR_FILE = 'shd.started-for';
/** In a brick's run dir: where the join mounts the whole volume for a moment (joinOnce). */
const JOIN_MOUNT = 'join-mount';

/** The brick of a gluster WorkItem and where its run files go, checked. */
function brickTarget(item: WorkItem, dataDir: string): { brick: WorkItemBrickSpec; runDir: string; what: string } {
  const spec = item.spec.volumeReplica;
  if (item.spec.type !== 'VolumeReplica' || !spec?.brick) {
    throw new OperationError('InvalidSpec', `WorkItem ${item.metadata.name ?? ''} has no brick`, 'the controller sets spec.volumeReplica.brick for driver gluster');
  }
  const { namespace } = ownerKey(item);
  const leaf = `${safeName('volume name', spec.volumeName)}-${spec.index}`;
  const expected = brickDataPath(path.resolve(dataDir), namespace, spec.volumeName, spec.index);
  if (spec.brick.path !== expected) {
    throw new OperationError('InvalidSpec', `brick path ${spec.brick.path} of volume ${spec.volumeName} is not ${expected}`, 'the controller derives brick paths from the node\'s data dir (Node status.dataDir); recreate the WorkItem');
  }
  return { brick: spec.brick, runDir: path.join(dataDir, 'gluster', namespace, leaf), what: `brick ${spec.index} of volume ${spec.volumeName}` };
}

/**
 * When this WorkItem's brick joined its volume. The join is the WorkItem's: a run dir kept by reclaimPolicy
 * Retain and taken up by a later replica of the same index on this node holds data from before, which the
 * others would take to be in sync had it not joined again. remove() drops the marker when it keeps the data,
 * and a marker naming another WorkItem does not count; one naming none (written before markers named their
 * WorkItem) counts for any.
 */
function joinedAt(runDir: string, item: WorkItem): string | undefined {
  const at = readText(path.join(runDir, JOINED_FILE))?.trim();
  const by = readText(path.join(runDir, JOINED_BY_FILE))?.trim();
  return at && (!by || by === item.metadata.uid) ? at : undefined;
}

/** Records the join of the WorkItem's brick; its WorkItem first, so that a join half recorded counts for none. */
function recordJoin(runDir: string, item: WorkItem, at: string): void {
  const uid = item.metadata.uid;
  if (uid) fs.writeFileSync(path.join(runDir, JOINED_BY_FILE), uid);
  else fs.rmSync(path.join(runDir, JOINED_BY_FILE), { force: true });
  fs.writeFileSync(path.join(runDir, JOINED_FILE), at);
}

/** A gluster process of the brick: glusterfsd itself, or the self-heal daemon (a glusterfs client) next to it. */
type Role = 'brick' | 'shd';
const PROGRAM: Record<Role, string> = { brick: 'glusterfsd', shd: 'glusterfs' };

const files = (runDir: string, role: Role = 'brick') => ({ volfile: path.join(runDir, `${role}.vol`), pidfile: path.join(runDir, `${role}.pid`), log: path.join(runDir, `${role}.log`) });

/** The pid of the role's process when it runs (the pidfile's process, running this very volfile). */
function runningPid(runDir: string, role: Role = 'brick'): number | undefined {
  const { volfile, pidfile } = files(runDir, role);
  try {
    const pid = Number(fs.readFileSync(pidfile, 'utf8').trim());
    const cmdline = commandLine(pid) ?? [];
    return cmdline.some((a) => a.endsWith(PROGRAM[role])) && cmdline.includes(volfile) ? pid : undefined;
  } catch {
    return undefined;
  }
}

function readText(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/** At most this many index entries are inspected per count; any beyond are counted as pending. */
const MAX_INSPECTED = 2_000;
/** How long the one getfattr over a brick's index entries may block the agent. */
const GETFATTR_TIMEOUT_MS = 1_000;
/** Room for its dump of MAX_INSPECTED entries (a few hundred bytes each). */
const GETFATTR_MAX_BUFFER = 8 * 1024 * 1024;
/** At most this many owed entries are reported (WorkItem status owed). */
const MAX_REPORTED = 100;

/** What a brick's index says about heals it holds for other bricks (WorkItem status: pendingHeals, owed, owedTo, uninspected). */
export interface PendingHeals {
  count: number;
  owed: WorkItemOwedEntry[];
  owedTo: number[];
  uninspected: number;
}

/**
 * Entries this brick holds that another brick is owed (what `gluster volume heal info` counts, less
 * "possibly undergoing heal"): entries of its xattrop index whose file blames another brick with a
 * non-zero trusted.afr.<volume>-client-<i>. The index alone would count every file being written:
 * AFR lists a file there for the length of each write (marking it trusted.afr.dirty), which is not a
 * heal. Reads the index, then one getfattr over its entries when there are any.
 */
export function pendingHeals(brickPath: string): PendingHeals {
  let entries: string[];
  try {
    entries = fs.readdirSync(path.join(brickPath, '.glusterfs', 'indices', 'xattrop')).filter((f) => !f.startsWith('xattrop'));
  } catch {
    return summarizeOwed([], 0);
  }
  if (entries.length === 0) return summarizeOwed([], 0);
  const files = entries.slice(0, MAX_INSPECTED).map((gfid) => path.join(brickPath, '.glusterfs', gfid.slice(0, 2), gfid.slice(2, 4), gfid));
  // On the agent's event loop (the liveness sweep runs it every second, per brick): a slow brick filesystem must
  // not hold the node lease's renewals up for long. Cut short (or its output past maxBuffer), it would under-report
  // what is owed: nothing counts as inspected then. (A getfattr stuck in the kernel on a hung filesystem cannot be
  // killed at all; nor can the readdir above be bounded: that needs this count off the event loop.)
  const res = spawnSync('getfattr', ['--absolute-names', '-d', '-m', '^trusted\\.afr\\.', '-e', 'hex', ...files], { encoding: 'utf8', timeout: GETFATTR_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: GETFATTR_MAX_BUFFER });
  if (res.error || res.signal) return summarizeOwed([], entries.length);
  return summarizeOwed(blamedBricks(res.stdout ?? ''), Math.max(0, entries.length - MAX_INSPECTED));
}

/**
 * The report of the owed entries found and of the index entries left uninspected: the first entries
 * (for split-brain), and every brick any of them blames. The controller may release a lost brick only
 * when another brick missed none of its writes, which the capped list alone could not tell.
 */
export function summarizeOwed(owed: WorkItemOwedEntry[], uninspected: number): PendingHeals {
  const owedTo = [...new Set(owed.flatMap((e) => e.bricks))].sort((a, b) => a - b);
  return { count: owed.length + uninspected, owed: owed.slice(0, MAX_REPORTED), owedTo, uninspected };
}

/**
 * The files in getfattr's dump that carry a non-zero pending count against another brick
 * (trusted.afr.<volume>-client-<i>; trusted.afr.dirty is not one), each with those bricks' indexes.
 */
export function blamedBricks(dump: string): WorkItemOwedEntry[] {
  const owed: WorkItemOwedEntry[] = [];
  for (const block of dump.split(/^# file: /m).slice(1)) {
    const gfid = /([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\s*$/m.exec(block.split('\n')[0] ?? '')?.[1];
    const bricks = [...block.matchAll(/^trusted\.afr\.[^=]*-client-(\d+)=0x(?!0+$)[0-9a-f]+$/gm)].map((m) => Number(m[1]));
    if (gfid && bricks.length > 0) owed.push({ gfid, bricks: bricks.sort((a, b) => a - b) });
  }
  return owed;
}

/** The bytes the brick must hold: the WorkItem's size. */
function sizeBytes(item: WorkItem): number {
  const spec = item.spec.volumeReplica!;
  try {
    return parseQuantity(spec.size);
  } catch (err) {
    throw new OperationError('InvalidSpec', `size of volume ${spec.volumeName}: ${(err as Error).message}`, 'fix spec.size of the Volume', { cause: err });
  }
}

/** The size status of the brick's filesystem: spec.size once it holds that much; unset while it is not mounted. */
function sizeStatus(item: WorkItem, brickPath: string, mounted: boolean): { size?: string; sizeBytes?: number; sized: boolean } {
  if (!mounted) return { sized: false };
  const usable = usableBytes(brickPath);
  const sized = usable >= sizeBytes(item);
  return { size: sized ? item.spec.volumeReplica!.size : formatQuantity(usable), sizeBytes: usable, sized };
}

/**
 * What the brick owes the others, read from its filesystem whether or not glusterfsd runs: a brick stopped
 * with its volume still holds writes the others missed, and its report must go on saying so, or the
 * controller takes another brick for a good copy and releases this one when its node is lost. Its image
 * there but not mounted (a stopped volume's node after a reboot): unknown, one entry uninspected, which
 * blames every other brick. Undefined while it has no filesystem yet, so no data.
 */
export function healRecord(brickPath: string, mounted: boolean, hasImage: boolean): PendingHeals | undefined {
  if (mounted) return pendingHeals(brickPath);
  return hasImage ? summarizeOwed([], 1) : undefined;
}

/** What a brick's report says of whom its heals blame, as one string: a change at the same count is a change too. */
export function owedSignature(h: Pick<WorkItemBrickStatus, 'owed' | 'owedTo' | 'uninspected'>): string {
  return `${(h.owed ?? []).map((e) => `${e.gfid}:${e.bricks.join('.')}`).join(',')}|${(h.owedTo ?? []).join(',')}|${h.uninspected ?? 0}`;
}

/** The owed fields of a brick's status, each left out when empty. */
function owedStatus(h: PendingHeals): Pick<WorkItemBrickStatus, 'owed' | 'owedTo' | 'uninspected'> {
  return { ...(h.owed.length ? { owed: h.owed } : {}), ...(h.owedTo.length ? { owedTo: h.owedTo } : {}), ...(h.uninspected ? { uninspected: h.uninspected } : {}) };
}

function view(item: WorkItem, dataDir: string): Observation {
  const { brick, runDir, what } = brickTarget(item, dataDir);
  const pid = runningPid(runDir);
  const current = readText(files(runDir).volfile) === brick.volfile;
  const shd = runningPid(runDir, 'shd');
  const shdRight = selfHealAsSpecified(brick, runDir);
  const joined = joinedAt(runDir, item);
  const mounted = isMountPoint(brick.path);
  const image = path.join(runDir, IMAGE_FILE);
  const { sized, ...size } = sizeStatus(item, brick.path, mounted);
  const state = pid ? ('Running' as const) : ('Stopped' as const);
  const heals = healRecord(brick.path, mounted, !mounted && fs.existsSync(image));
  const status = { volumeReplica: { path: brick.path, ...size, brick: { state, port: brick.port, selfHeal: shd ? ('Running' as const) : ('Stopped' as const), ...(pid ? { pid, pendingHeals: heals!.count } : {}), ...(heals ? owedStatus(heals) : {}), ...(joined ? { joinedAt: joined } : {}) } } };
  if (brick.stopped) return pid || shd ? { converged: false, action: 'stop', message: `${what} is stopping (the volume is Stopped)`, ...status } : { converged: true, message: `${what} is stopped (the volume is Stopped); its data stays`, ...status };
  if (!pid) return { converged: false, action: 'start', message: `${what} is not running`, ...status };
  if (!current) return { converged: false, action: 'restart', message: `${what} runs an older volfile`, ...status };
  if (!sized) return { converged: false, action: 'resize', message: `the filesystem of ${what} is growing to ${item.spec.volumeReplica!.size}`, ...status };
  if (item.spec.volumeReplica!.allocation === 'preallocated' && !fullyAllocated(image)) {
    return { converged: false, action: 'resize', message: `the filesystem image of ${what} is being preallocated`, ...status };
  }
  if (!shdRight) return { converged: false, action: 'start', message: `the self-heal daemon of ${what} is not as its spec says`, ...status };
  if (!joined && brick.clientVolfile) return { converged: false, action: 'start', message: `${what} runs and has yet to join its volume`, ...status };
  return { converged: true, message: `${what} runs (pid ${pid}, port ${brick.port}, ${item.spec.volumeReplica!.size})`, ...status };
}

async function observe(item: WorkItem, env: DriverEnv): Promise<Observation> {
  return view(item, env.dataDir);
}

/** The value of a brick root's trusted.glusterfs.volume-id, as getfattr -e hex shows and setfattr -v takes: the UUID's 16 bytes. */
export function volumeIdXattr(volumeId: string): string {
  return `0x${volumeId.replace(/-/g, '').toLowerCase()}`;
}

/**
 * Stamps the volume id on the brick root, or checks the one there: a brick belongs to one volume only. A
 * brick that has joined its volume keeps the id for good (as glusterd refuses to start a brick without
 * it): a root without it now was emptied or replaced, and starting it would serve an empty brick the
 * others take to be in sync.
 */
async function stampVolumeId(brick: WorkItemBrickSpec, node: string, joined: boolean): Promise<void> {
  const want = volumeIdXattr(brick.volumeId);
  const have = await run('getfattr', ['--absolute-names', '-e', 'hex', '-n', XATTR, brick.path]).then(
    (r) => new RegExp(`^${XATTR}=(0x[0-9a-f]+)$`, 'im').exec(r.stdout)?.[1]?.toLowerCase(),
    (err: { code?: string; stderr?: string }) => {
      if (err.code === 'ENOENT') throw new OperationError('DriverUnavailable', `getfattr is not installed on node ${node}`, `install the attr package on node ${node} (hack/install-gluster.sh)`);
      if (/No such attribute/i.test(err.stderr ?? '')) return undefined;
      throw new OperationError('DriverUnavailable', `cannot read extended attributes of ${brick.path} on node ${node}: ${(err.stderr ?? '').trim()}`, 'put the agent\'s data dir on a filesystem with trusted.* xattrs (ext4, xfs) and run the agent as root');
    },
  );
  if (have === want) return;
  if (!have && joined) {
    throw new OperationError('NotFound', `brick ${brick.path} on node ${node} lost its data: its root no longer carries the volume id (${XATTR}) it has had since it joined (emptied, or its disk replaced)`, `delete this WorkItem (cairn delete workitem NAME): the controller places a new brick, which joins and is healed in full from the others. Restarting it as it is would serve an empty brick the others take to be in sync`);
  }
  if (have) {
    throw new OperationError('InvalidSpec', `${brick.path} on node ${node} is a brick of another volume (volume id ${have}, not ${want})`, `remove or move ${brick.path} if that volume is gone; a brick never joins a second volume`);
  }
  await run('setfattr', ['-n', XATTR, '-v', want, brick.path]);
}

/** Writes the role's volfile and starts its process, which returns once it is up (or failed: its log's error says why). */
async function start(role: Role, volfile: string, brick: WorkItemBrickSpec, runDir: string, ctx: OperationContext): Promise<void> {
  const f = files(runDir, role);
  fs.writeFileSync(`${f.volfile}.tmp`, volfile);
  fs.renameSync(`${f.volfile}.tmp`, f.volfile);
  fs.rmSync(f.pidfile, { force: true });
  const args = role === 'brick' ? ['--brick-name', brick.path] : ['--process-name=glustershd'];
  try {
    await run(PROGRAM[role], ['-f', f.volfile, '-p', f.pidfile, '-l', f.log, ...args], { signal: ctx.signal });
  } catch (err) {
    throw startError(err as NodeJS.ErrnoException, role, brick, f.log, ctx.nodeName);
  }
  ctx.log.info(`${role === 'brick' ? 'brick' : 'self-heal daemon'} started`, { path: brick.path, port: brick.port, pid: runningPid(runDir, role) });
}

/** Why a gluster process did not start, from its exit and its log's errors. */
function startError(err: NodeJS.ErrnoException, role: Role, brick: WorkItemBrickSpec, log: string, node: string): OperationError {
  if (err.code === 'ENOENT') return new OperationError('DriverUnavailable', `${PROGRAM[role]} is not installed on node ${node}`, `install glusterfs-server on node ${node} (hack/install-gluster.sh); glusterd is not needed`);
  // The first error of the last start names the cause; the ones after it ("init failed") only follow from it.
  const errors = (readText(log) ?? '').split('\n').filter((l) => /\] E \[/.test(l)).map((l) => l.replace(/^.*?\] E \[[^\]]*\] /, ''));
  const last = errors.find((e) => /Address already in use|Extended attribute not supported|doesn't exist|volume-id/i.test(e)) ?? errors.pop() ?? '';
  const what = `${role === 'brick' ? 'glusterfsd' : 'the self-heal daemon'} for brick ${brick.path} on node ${node} failed to start: ${last || err.message}`;
  if (/Address already in use/i.test(last)) return new OperationError('CommandFailed', what, `port ${brick.port} on node ${node} is taken by another process; free it, or delete this WorkItem so the controller places the brick on another port`);
  if (/Extended attribute not supported/i.test(last)) return new OperationError('DriverUnavailable', what, 'put the agent\'s data dir on a filesystem with extended attributes (ext4, xfs)');
  return new OperationError('CommandFailed', what, `see ${log} on node ${node}`);
}

/** SIGTERM, then SIGKILL after STOP_GRACE_MS; resolves once the role's process is gone. */
async function stop(role: Role, runDir: string, ctx: OperationContext): Promise<void> {
  const pid = runningPid(runDir, role);
  if (!pid) return;
  process.kill(pid, 'SIGTERM');
  for (const deadline = Date.now() + STOP_GRACE_MS; runningPid(runDir, role) && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
  if (runningPid(runDir, role)) process.kill(pid, 'SIGKILL');
  for (let i = 0; i < 100 && runningPid(runDir, role); i++) await new Promise((r) => setTimeout(r, 20));
  const name = role === 'brick' ? 'glusterfsd' : 'the self-heal daemon';
  // Still there (stuck in the kernel, D state): a remove must not take its data away under it.
  if (runningPid(runDir, role)) throw new OperationError('Timeout', `${name} (pid ${pid}) did not exit 2 s after SIGKILL`, `see ps -o stat,wchan -p ${pid} on the node; it is retried`);
  ctx.log.info(`${role === 'brick' ? 'brick' : 'self-heal daemon'} stopped`, { pid });
}

/**
 * What makes the self-heal daemon start again, besides its volfile: it crawls its brick's index when it
 * starts and otherwise only every heal-timeout, so another brick's join (peerJoins) and the controller's
 * request after a heal stopped moving (recrawl) each restart it.
 */
function selfHealStartKey({ peerJoins, recrawl }: Pick<WorkItemBrickSpec, 'peerJoins' | 'recrawl'>): string {
  return `${peerJoins ?? ''}\n${recrawl ?? ''}`;
}

/** Whether the self-heal daemon runs exactly when the spec has its volfile, runs that one, and started for the spec's start key. */
function selfHealAsSpecified(brick: WorkItemBrickSpec, runDir: string): boolean {
  const running = runningPid(runDir, 'shd');
  if (!brick.shdVolfile) return !running;
  // A daemon started before its run dir kept this counts as started for neither.
  const startedFor = readText(path.join(runDir, SHD_STARTED_FOR_FILE)) ?? selfHealStartKey({});
  return !!running && readText(files(runDir, 'shd').volfile) === brick.shdVolfile && startedFor === selfHealStartKey(brick);
}

/** Runs the self-heal daemon as the spec says, restarting it on a new volfile or start key. */
async function ensureSelfHeal(brick: WorkItemBrickSpec, runDir: string, ctx: OperationContext): Promise<void> {
  if (!selfHealAsSpecified(brick, runDir)) await restartSelfHeal(brick, runDir, ctx);
}

/** Starts the self-heal daemon anew from the spec, so that it crawls at once; stops it when the spec has none. */
async function restartSelfHeal(brick: WorkItemBrickSpec, runDir: string, ctx: OperationContext): Promise<void> {
  await stop('shd', runDir, ctx);
  if (!brick.shdVolfile) return;
  await start('shd', brick.shdVolfile, brick, runDir, ctx);
  fs.writeFileSync(path.join(runDir, SHD_STARTED_FOR_FILE), selfHealStartKey(brick));
}

/**
 * A new brick starts empty while the others hold the data, and AFR heals only what their indices list.
 * So once, when the volume's layout is known, the agent mounts the client volfile as glusterd's
 * add-brick mount would (client pid -12, which AFR requires for this) and sets the virtual xattr trusted.replace-brick to
 * this brick's client name: AFR marks the root on every other brick as owed to this one, and the
 * self-heal daemons then copy the whole tree onto it (glusterd's replace-brick does the same). For a
 * volume created empty this heals nothing. A marker file in the run dir makes it once per WorkItem: the caller
 * asks only for a brick not joined yet (joinedAt).
 */
async function joinOnce(item: WorkItem, brick: WorkItemBrickSpec, runDir: string, ctx: OperationContext): Promise<void> {
  if (!brick.clientVolfile) return;
  const index = item.spec.volumeReplica!.index;
  const mnt = path.join(runDir, JOIN_MOUNT);
  const volfile = path.join(runDir, 'join.vol');
  fs.writeFileSync(volfile, brick.clientVolfile);
  await releaseJoinMount(runDir);
  fs.mkdirSync(mnt, { recursive: true });
  try {
    await run('glusterfs', [`--client-pid=${ADD_REPLICA_MOUNT_PID}`, '-f', volfile, '-l', path.join(runDir, 'join.log'), '-p', path.join(runDir, 'join.pid'), mnt], { signal: ctx.signal });
    if (!(await waitForMount(mnt, ctx.signal))) throw new Error('the volume does not answer on a mount');
    await run('setfattr', ['-n', 'trusted.replace-brick', '-v', `${brick.volume}-client-${index}`, mnt]);
  } catch (err) {
    const detail = (err as { stderr?: string }).stderr?.trim() || (err as Error).message;
    throw new OperationError('CommandFailed', `brick ${brick.path} on node ${ctx.nodeName} could not ask the other bricks to heal onto it: ${detail}`, 'the other bricks must run and be reachable from this node (see the Volume\'s status); the agent retries');
  } finally {
    await releaseJoinMount(runDir);
  }
  recordJoin(runDir, item, new Date(ctx.now()).toISOString());
  // The others' daemons restart on the join (their peerJoins changes); this one too, for its own index.
  await restartSelfHeal(brick, runDir, ctx);
  ctx.log.info('brick joined its volume: the others heal onto it', { path: brick.path, index });
}

/**
 * Unmounts the join's client from the run dir, stops it and removes its mount point: also one left by a
 * join cut short (its worker killed, the agent dead), which a recursive delete of the run dir would
 * otherwise go through and delete every file of the volume on the other bricks.
 */
async function releaseJoinMount(runDir: string): Promise<void> {
  const mnt = path.join(runDir, JOIN_MOUNT);
  await unmountAll(mnt);
  stopClient(path.join(runDir, 'join.pid'));
  removeMountPoint(mnt);
}

async function ensure(item: WorkItem, ctx: OperationContext): Promise<Observation> {
  const { brick, runDir, what } = brickTarget(item, ctx.dataDir);
  try {
    const before = view(item, ctx.dataDir);
    if (before.converged) return before;
    if (brick.stopped) {
      await stop('shd', runDir, ctx);
      await stop('brick', runDir, ctx);
      return view(item, ctx.dataDir);
    }
    if (holdsMount(runDir)) throw new OperationError('InvalidSpec', `${what} on node ${ctx.nodeName} would share its run dir ${runDir} with the mount of another volume`, SHARED_RUN_DIR_HINT);
    fs.mkdirSync(runDir, { recursive: true, mode: 0o700 });
    await ensureBrickFilesystem(path.join(runDir, IMAGE_FILE), brick.path, sizeBytes(item), item.spec.volumeReplica!.allocation ?? 'sparse', ctx, async () => {
      await stop('shd', runDir, ctx);
      await stop('brick', runDir, ctx);
    });
    fs.mkdirSync(path.join(brick.path, '.glusterfs'), { recursive: true, mode: 0o755 });
    const joined = !!joinedAt(runDir, item);
    await stampVolumeId(brick, ctx.nodeName, joined);
    if (before.action === 'restart') await stop('brick', runDir, ctx);
    if (!runningPid(runDir)) await start('brick', brick.volfile, brick, runDir, ctx);
    await ensureSelfHeal(brick, runDir, ctx);
    if (!joined) await joinOnce(item, brick, runDir, ctx);
  } catch (err) {
    throw classify(err, { doing: `starting ${what}`, node: ctx.nodeName, path: brick.path });
  }
  return view(item, ctx.dataDir);
}

async function remove(item: WorkItem, ctx: OperationContext): Promise<void> {
  let target: ReturnType<typeof brickTarget>;
  try {
    target = brickTarget(item, ctx.dataDir);
  } catch (err) {
    // ensure() refused this spec before touching anything, so there is nothing to undo.
    if (err instanceof OperationError && err.reason === 'InvalidSpec') return ctx.log.info('nothing to remove: the brick spec was never valid', { error: err.message });
    throw err;
  }
  const { brick, runDir, what } = target;
  // ensure() refused a run dir that is another volume's mount's: nothing of the brick is there, and the mount's files stay.
  if (holdsMount(runDir)) return ctx.log.info('nothing to remove: the brick\'s run dir is a mount\'s', { runDir });
  try {
    await releaseJoinMount(runDir);
    await stop('shd', runDir, ctx);
    await stop('brick', runDir, ctx);
    // Retain keeps the filesystem mounted on the brick directory, and its image, so the data stays where it was;
    // not the join, which was this WorkItem's: a later replica here holds data from before, and joins again.
    if (item.spec.volumeReplica?.reclaimPolicy === 'Retain') {
      for (const f of [JOINED_FILE, JOINED_BY_FILE]) fs.rmSync(path.join(runDir, f), { force: true });
      return ctx.log.info('brick data retained (reclaimPolicy Retain)', { path: brick.path, image: path.join(runDir, IMAGE_FILE) });
    }
    await removeBrickFilesystem(path.join(runDir, IMAGE_FILE), brick.path, ctx);
    fs.rmSync(runDir, { recursive: true, force: true });
    fs.rmSync(brick.path, { recursive: true, force: true });
    ctx.log.info('brick deleted', { path: brick.path });
  } catch (err) {
    throw classify(err, { doing: `deleting ${what}`, node: ctx.nodeName, path: brick.path });
  }
}

/** Whether this node can run bricks: glusterfsd and the attr tools, with glusterfsd's version. */
export async function probeGluster(): Promise<NodeDriver> {
  const version = await run('glusterfsd', ['--version']).then((r) => /glusterfs (\S+)/.exec(r.stdout)?.[1], () => undefined);
  const attr = await run('setfattr', ['--version']).then(() => true, () => false);
  if (version && attr) return { name: 'gluster', available: true, version };
  return { name: 'gluster', available: false, message: `${version ? 'setfattr (attr)' : 'glusterfsd'} is not installed: install glusterfs-server, glusterfs-client and attr (hack/install-gluster.sh); glusterd is not needed` };
}

/** The gluster brick driver. */
export const glusterBrickDriver: Driver = { name: 'gluster', observe, ensure, remove };

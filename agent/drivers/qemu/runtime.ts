/**
 * The `qemu` instance driver's runtime: a VM is a qemu process supervised
 * exactly like a process instance (process.ts: the detached shim, exit
 * file, fencing watchdog, cgroup, restart policy, re-adoption), with what
 * differs for a VM:
 * - the command line comes from the spec (command.ts);
 * - after launch the worker waits for qemu's pid file and QMP socket and
 *   records qemu's own pid and start time, so a restarted agent re-adopts
 *   the very VM it started (state.json + pid start time + QMP), never a
 *   second one;
 * - a graceful stop is QMP system_powerdown, then QMP quit, then SIGKILL;
 * - ready means QMP query-status says running and, when the spec names a
 *   readiness marker, that marker appeared on the serial console since
 *   this run started (a VM that arrived by live migration is ready when it
 *   runs: its marker was printed on the source).
 * Live migration adds steps on top (migration.ts).
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Accelerator } from '../../../api/cluster.js';
import { parseQuantity } from '../../../api/quantity.js';
import type { WorkItem, WorkItemInstanceSpec, WorkItemInstanceStatus } from '../../../api/workitem.js';
import { OperationError } from '../../operations/errors.js';
import type { DriverEnv, OperationContext } from '../driver.js';
import { graceMs } from '../driver.js';
import { isRunning, memoryOf, type LiveView, type Prepared, type Runtime } from '../process/driver.js';
import { resolveCommand } from '../process/launch.js';
import { LOG_FILE, type ProcessState, type VmRecord } from '../process/state.js';
import { isSameProcess } from '../process/state.js';
import { stopInstance, type StopOutcome } from '../process/stop.js';
import { bootId, readProcStat } from '../process/proc.js';
import { sizeFile } from '../volume/fallocate.js';
import { CONSOLE_SOCKET, qemuArgs, type VmDisk, type VmPaths } from './command.js';
import { qmpExchange } from './qmp.js';

/** The qemu binary the driver runs. */
export const QEMU_BINARY = 'qemu-system-x86_64';
/** Memory the cgroup allows qemu beyond the guest's RAM (qemu's own code, device and migration buffers). */
const QEMU_OVERHEAD_BYTES = 256 * 1024 * 1024;
/** The image a VM keeps inside a gluster volume attached to it. */
const SHARED_DISK_FILE = 'disk.img';
/** How long a launched qemu may take to write its pid file and open its QMP sockets. */
const STARTUP_TIMEOUT_MS = 15_000;
/** How much of a stop's grace period is left for QMP quit before SIGKILL (at most half the grace). */
const QUIT_WAIT_MS = 3_000;
/** How much of the console log after the run's start is searched for the readiness marker. */
const MARKER_SEARCH_BYTES = 1024 * 1024;

/** The VM files of an instance directory. */
export function vmPaths(dir: string): VmPaths {
  return { consoleLog: path.join(dir, LOG_FILE), consoleSocket: path.join(dir, CONSOLE_SOCKET), qmpSocket: path.join(dir, 'qmp.sock'), controlSocket: path.join(dir, 'qmp-control.sock'), pidFile: path.join(dir, 'qemu.pid') };
}

/** The instance slice of a qemu WorkItem, checked. */
export function qemuSpec(item: WorkItem): WorkItemInstanceSpec & { qemu: NonNullable<WorkItemInstanceSpec['qemu']> } {
  const spec = item.spec.instance;
  if (item.spec.type !== 'InstanceRuntime' || !spec || spec.driver !== 'qemu') {
    throw new OperationError('InvalidSpec', `WorkItem ${item.metadata.name ?? ''} is not a qemu instance`, 'the controller should set spec.type InstanceRuntime and spec.instance.driver qemu');
  }
  const q = spec.qemu ?? {};
  if (!q.kernel && !q.bootDisk) {
    throw new OperationError('InvalidSpec', `instance ${item.spec.owner.name} has neither spec.qemu.kernel nor spec.qemu.bootDisk`, "set spec.qemu.kernel (with initrd and cmdline) or spec.qemu.bootDisk, or the Cluster's spec.driverDefaults.qemu");
  }
  memoryOf(item);
  return { ...spec, qemu: q };
}

/** Hash of what a running VM was started with; the migration section is not part of it (it moves the VM, it does not change it). */
function hashOf(item: WorkItem, volumes: Record<string, string>): string {
  const { cpus, memory, qemu } = qemuSpec(item);
  return createHash('sha256').update(JSON.stringify({ cpus, memory, qemu, volumes })).digest('hex').slice(0, 16);
}

/** The accelerator a VM runs with on this node. */
export function chooseAccelerator(choice: string | undefined, probed: Accelerator | undefined, node: string): Accelerator {
  if (choice === 'tcg') return 'tcg';
  if (choice === 'kvm') {
    if (probed !== 'kvm') throw new OperationError('DriverUnavailable', `accelerator kvm was asked for, but KVM does not run guests on node ${node}`, 'set spec.qemu.accelerator auto or tcg, or run the VM on a node whose status.accelerator is kvm');
    return 'kvm';
  }
  return probed ?? 'tcg';
}

/** The VM's disk inside a gluster volume (the volume's mount directory on this node). */
export function sharedDiskPath(mountDir: string): string {
  return path.join(mountDir, SHARED_DISK_FILE);
}

function disksOf(item: WorkItem, volumes: Record<string, string>): VmDisk[] {
  return (item.spec.instance?.volumes ?? []).map((v) => {
    const readOnly = v.readOnly ?? false;
    return v.gluster ? { name: v.name, path: sharedDiskPath(volumes[v.name]!), readOnly, shared: true } : { name: v.name, path: volumes[v.name]!, readOnly };
  });
}

/** Creates the disk image of each gluster attachment at first use: sparse, the volume's size. */
async function createSharedDisks(item: WorkItem, volumes: Record<string, string>, ctx: OperationContext): Promise<void> {
  for (const v of item.spec.instance?.volumes ?? []) {
    if (!v.gluster) continue;
    const file = sharedDiskPath(volumes[v.name]!);
    if (fs.existsSync(file)) continue;
    await sizeFile(`${file}.tmp`, parseQuantity(v.gluster.size), 'sparse', ctx.nodeName, ctx.signal);
    fs.renameSync(`${file}.tmp`, file);
  }
}

function checkFile(file: string | undefined, field: string, node: string): void {
  if (file && !fs.existsSync(file)) throw new OperationError('NotFound', `${field} ${file} does not exist on node ${node}`, `put it at that path on node ${node} (hack/build-test-guest.sh builds a test guest) or fix ${field}`);
}

/** Prepares the launch of the VM; `incoming` starts it as a paused migration target. */
export async function prepareVm(item: WorkItem, ctx: OperationContext, base: Omit<Prepared, 'cwd' | 'env' | 'argv' | 'memoryBytes'>, incoming?: VmRecord['incoming']): Promise<Prepared> {
  const spec = qemuSpec(item);
  const q = spec.qemu;
  checkFile(q.kernel, 'spec.qemu.kernel', ctx.nodeName);
  checkFile(q.initrd, 'spec.qemu.initrd', ctx.nodeName);
  checkFile(q.bootDisk?.path, 'spec.qemu.bootDisk.path', ctx.nodeName);
  const env = { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' };
  let program: string;
  try {
    program = resolveCommand(QEMU_BINARY, env.PATH, base.dir, ctx.nodeName);
  } catch (err) {
    throw new OperationError('DriverUnavailable', `${QEMU_BINARY} is not installed on node ${ctx.nodeName}`, "install Debian's qemu-system-x86 package on the node (hack/build-test-guest.sh does)", { cause: err });
  }
  const accelerator = chooseAccelerator(q.accelerator, ctx.accelerator, ctx.nodeName);
  const memoryBytes = memoryOf(item);
  const paths = vmPaths(base.dir);
  await fs.promises.mkdir(base.dir, { recursive: true, mode: 0o700 });
  await createSharedDisks(item, base.volumes, ctx);
  const logOffset = fs.statSync(paths.consoleLog, { throwIfNoEntry: false })?.size ?? 0;
  const argv = [program, ...qemuArgs({ instance: `${base.namespace}/${base.name}`, spec, memoryBytes, accelerator, disks: disksOf(item, base.volumes), paths, incoming: incoming !== undefined })];
  const vm: VmRecord = { accelerator, logOffset, ...(incoming ? { incoming } : {}) };
  // Removed at launch, not now: the VM this one replaces may still run, and stops gracefully over its QMP socket.
  const staleFiles = [paths.qmpSocket, paths.controlSocket, paths.consoleSocket, paths.pidFile];
  return { ...base, cwd: base.dir, env, argv, memoryBytes: memoryBytes + QEMU_OVERHEAD_BYTES, extra: { vm }, staleFiles };
}

function tailOf(file: string, bytes = 2000): string {
  try {
    const text = fs.readFileSync(file, 'utf8');
    return text.slice(-bytes).trim();
  } catch {
    return '';
  }
}

function readPidFile(file: string): number | undefined {
  const text = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '';
  const pid = Number(text);
  return text && Number.isSafeInteger(pid) && pid > 0 ? pid : undefined;
}

/** Waits for qemu's pid file and QMP socket; records qemu's pid and start time. */
async function launched(p: Prepared, state: ProcessState, ctx: OperationContext): Promise<ProcessState> {
  const paths = vmPaths(p.dir);
  const deadline = Date.now() + STARTUP_TIMEOUT_MS;
  for (;;) {
    const pid = readPidFile(paths.pidFile);
    if (pid !== undefined && fs.existsSync(paths.controlSocket)) {
      const stat = readProcStat(pid);
      if (stat) return { ...state, vm: { ...state.vm!, pid, startTicks: stat.startTicks } };
    }
    if (!isRunning(state)) {
      throw new OperationError('CommandFailed', `qemu exited right after it started on node ${ctx.nodeName}: ${tailOf(paths.consoleLog) || 'no output'}`, 'fix the qemu section of the Instance (the console log above has qemu\'s message)');
    }
    if (Date.now() > deadline) throw new OperationError('Timeout', `qemu did not open its QMP socket within ${STARTUP_TIMEOUT_MS} ms on node ${ctx.nodeName}`, 'the node may be overloaded; the agent retries');
    await sleep(50, undefined, { signal: ctx.signal });
  }
}

/** The VM's qemu process is alive and is the one state.json recorded. */
export function vmAlive(state: ProcessState): boolean {
  const vm = state.vm;
  if (!isRunning(state)) return false;
  if (vm?.pid === undefined || vm.startTicks === undefined) return true;
  return isSameProcess({ pid: vm.pid, startTicks: vm.startTicks, bootId: state.bootId }, readProcStat(vm.pid), bootId());
}

async function waitStopped(state: ProcessState, ms: number, signal: AbortSignal): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (!isRunning(state)) return true;
    await sleep(50, undefined, { signal });
  }
  return !isRunning(state);
}

/**
 * Stops the VM within its grace period: ACPI power-down, QMP quit for the last QUIT_WAIT_MS of the
 * grace (at most half of it), then SIGKILL of the shim's group. Every QMP exchange counts against the
 * grace, so a qemu that stalls on its socket cannot stretch a stop: a fence stop has 2 s before the
 * node's lease runs out.
 */
async function stop(state: ProcessState, item: WorkItem, ctx: OperationContext, dir: string): Promise<StopOutcome> {
  if (!isRunning(state)) return 'gone';
  const grace = graceMs(item);
  const deadline = Date.now() + grace;
  const quitAt = deadline - Math.min(QUIT_WAIT_MS, grace / 2);
  const control = vmPaths(dir).controlSocket;
  const askBy = (command: string, until: number) =>
    qmpExchange(control, command, until - Date.now()).then(
      () => true,
      (err: Error) => (ctx.log.warn(`QMP ${command} failed`, { error: err.message }), false),
    );
  if ((await askBy('system_powerdown', quitAt)) && (await waitStopped(state, quitAt - Date.now(), ctx.signal))) return 'asked';
  if ((await askBy('quit', deadline)) && (await waitStopped(state, deadline - Date.now(), ctx.signal))) return 'asked';
  return stopInstance(state, 0, ctx.signal);
}

function markerSeen(file: string, offset: number, marker: string): boolean {
  let fd: number;
  try {
    fd = fs.openSync(file, 'r');
  } catch {
    return false;
  }
  try {
    const buf = Buffer.alloc(MARKER_SEARCH_BYTES);
    const n = fs.readSync(fd, buf, 0, buf.length, offset);
    return buf.subarray(0, n).includes(marker);
  } finally {
    fs.closeSync(fd);
  }
}

/** How long a status read may wait for qemu, greeting and answer together. */
const QMP_STATUS_MS = 1500;

/** QMP run state of a live VM, or 'unknown' when its socket does not answer (in time). */
export async function qmpState(dir: string): Promise<string> {
  return qmpExchange<{ status: string }>(vmPaths(dir).qmpSocket, 'query-status', QMP_STATUS_MS).then(
    (answer) => answer.status,
    () => 'unknown',
  );
}

/** The status fields of a VM. */
export function vmStatus(state: ProcessState, dir: string, runState: string): Partial<WorkItemInstanceStatus> {
  const paths = vmPaths(dir);
  return {
    ...(state.vm?.pid !== undefined ? { pid: state.vm.pid } : {}),
    logPath: paths.consoleLog,
    qemu: { ...(state.vm ? { accelerator: state.vm.accelerator } : {}), qmpState: runState, consoleLogPath: paths.consoleLog, qmpSocketPath: paths.qmpSocket },
  };
}

/** Once a run's readiness marker was seen: the run's identity, kept beside state.json. */
const BOOTED_FILE = 'booted';
/** How often a VM whose readiness marker is overdue is looked at again (each look is two QMP connections and a console read). */
const OVERDUE_LOOK_MS = 10_000;

/**
 * Whether this run printed its readiness marker. Remembered in a file once seen: log rotation truncates
 * the console log under the run's offset, after which the marker was never found again and a VM that
 * had booted stayed not ready (and could not be migrated) until it restarted.
 */
function bootSeen(dir: string, state: ProcessState, marker: string): boolean {
  const latch = path.join(dir, BOOTED_FILE);
  const run = `${state.pid}/${state.startTicks}`;
  if ((fs.existsSync(latch) ? fs.readFileSync(latch, 'utf8') : '') === run) return true;
  if (!markerSeen(vmPaths(dir).consoleLog, state.vm?.logOffset ?? 0, marker)) return false;
  fs.writeFileSync(latch, run);
  return true;
}

async function look(item: WorkItem, state: ProcessState, dir: string, env: DriverEnv): Promise<LiveView> {
  const runState = await qmpState(dir);
  const q = item.spec.instance?.qemu;
  const marker = q?.readinessMarker;
  const booted = !marker || state.vm?.incoming !== undefined || bootSeen(dir, state, marker);
  const ready = runState === 'running' && booted;
  const timeoutSeconds = q?.readinessTimeoutSeconds ?? 120;
  const overdue = env.now() - state.startedAt > timeoutSeconds * 1000;
  let message: string | undefined;
  if (runState !== 'running') message = `qemu pid ${state.vm?.pid ?? state.pid} is ${runState}`;
  // Overdue, the message stays the same from look to look: one status write, not one a second.
  else if (!booted) message = overdue ? `readiness marker "${marker}" not seen on the console within ${timeoutSeconds} s: see ${vmPaths(dir).consoleLog}` : `booting: waiting for "${marker}" on the serial console`;
  else message = `VM running as qemu pid ${state.vm?.pid ?? '?'} (${state.vm?.accelerator ?? 'tcg'})`;
  return { ready, message, instance: vmStatus(state, dir, runState), ...(ready ? {} : { requeueAfterMs: overdue ? OVERDUE_LOOK_MS : 500 }) };
}

/** The qemu runtime for supervisedDriver. */
export const qemuRuntime: Runtime = {
  specOf: qemuSpec,
  hashOf,
  prepare: (item, ctx, base) => prepareVm(item, ctx, base),
  launched,
  stop,
  look,
};

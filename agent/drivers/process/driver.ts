/**
 * The `process` instance driver: an Instance's command as a real, detached
 * process (see launch.ts) that survives agent restarts and is
 * re-adopted from state.json by (pid, start time, boot id). observe() reads
 * state.json, /proc and the exit file; ensure() carries out planInstance()'s
 * step (start, restart, stop, record an exit); remove() stops the instance
 * and deletes its directory. Nothing is kept in memory: every call starts
 * from the files, which is what makes re-adoption after a crash work.
 * A restart resolves the new command, working dir and volumes before it
 * stops the old process, so a spec that cannot start never takes a running
 * instance down. `restarts` counts every restart (by policy, restartToken or
 * spec change), not a first start or a start after runState Stopped.
 * ensure()/remove() run in workers, one at a time per instance.
 *
 * The same supervision serves VMs: supervisedDriver(runtime) takes what
 * differs between a process and a qemu VM (the command, how to stop it
 * gracefully, what "ready" means) as a Runtime; qemu.ts is the other one.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkItem, WorkItemInstanceSpec, WorkItemInstanceStatus } from '../../../api/workitem.js';
import { parseQuantity } from '../../../api/quantity.js';
import { OperationError } from '../../operations/errors.js';
import { prepareCgroup, removeCgroup } from './cgroup.js';
import { graceMs, type Driver, type DriverEnv, type Observation, type OperationContext } from '../driver.js';
import { instanceDir, ownerKey, replicaPath } from '../paths.js';
import { attachGluster, detachAllGluster, glusterMountDir, mountHealth } from '../volume/gluster-mount.js';
import { instanceEnv, launch, resolveCommand, specHash } from './launch.js';
import { planInstance, type Plan } from './plan.js';
import { EXIT_FILE, isSameProcess, LOG_FILE, readExit, readState, writeState, type ExitRecord, type ProcessState } from './state.js';
import { killLeftovers, stopInstance, type StopOutcome } from './stop.js';
import { bootId, readProcStat, startTimeIso } from './proc.js';

/** The instance slice of a process WorkItem, checked. */
export function processSpec(item: WorkItem): WorkItemInstanceSpec & { process: NonNullable<WorkItemInstanceSpec['process']> } {
  const spec = item.spec.instance;
  if (item.spec.type !== 'InstanceRuntime' || !spec || spec.driver !== 'process') {
    throw new OperationError('InvalidSpec', `WorkItem ${item.metadata.name ?? ''} is not a process instance`, 'the controller should set spec.type InstanceRuntime and spec.instance.driver process');
  }
  if (!spec.process || spec.process.command.length === 0 || !spec.process.command[0]) {
    throw new OperationError('InvalidSpec', `instance ${item.spec.owner.name} has no command`, 'set spec.process.command of the Instance');
  }
  memoryOf(item);
  return spec as WorkItemInstanceSpec & { process: NonNullable<WorkItemInstanceSpec['process']> };
}

export function memoryOf(item: WorkItem): number {
  try {
    return parseQuantity(item.spec.instance!.memory);
  } catch (err) {
    throw new OperationError('InvalidSpec', `memory of instance ${item.spec.owner.name}: ${(err as Error).message}`, 'fix spec.memory of the Instance', { cause: err });
  }
}

/** Where each attached volume is on this node, by attachment name: a gluster volume's mount directory, else the local replica file. */
export function volumePaths(item: WorkItem, dataDir: string, namespace: string): Record<string, string> {
  const paths: Record<string, string> = {};
  for (const v of item.spec.instance?.volumes ?? []) {
    if (v.gluster) paths[v.name] = glusterMountDir(dataDir, namespace, v.volumeName);
    else if (v.path) paths[v.name] = v.path;
    else if (v.replicaIndex !== undefined) paths[v.name] = replicaPath(dataDir, namespace, v.volumeName, v.replicaIndex);
    else throw new OperationError('InvalidSpec', `volume ${v.name} of instance ${item.spec.owner.name} has no replica on node ${item.spec.nodeName} and no gluster mount`, 'wait until the Volume has all its replicas placed (see its status); the controller then fills spec.instance.volumes[]');
  }
  return paths;
}

/** Signal name of an exit status of 128+n, if it is one. */
export function signalOf(code: number | undefined): string | undefined {
  if (code === undefined || code <= 128) return undefined;
  return Object.entries(os.constants.signals).find(([, n]) => n === code - 128)?.[0];
}

/** The signal a stop records: the one that ended the run; none when the instance shut itself down on request (a VM's ACPI power-down). */
function stopSignal(outcome: StopOutcome, code: number | undefined): string | undefined {
  if (outcome === 'SIGKILL') return 'SIGKILL';
  return signalOf(code) ?? (outcome === 'SIGTERM' ? 'SIGTERM' : undefined);
}

function exitRecord(code: number | undefined, at: number, signal = signalOf(code)): ExitRecord {
  return { ...(code !== undefined ? { code } : {}), ...(signal ? { signal } : {}), at };
}

/**
 * The exit to report as lastExitCode/lastSignal: the recorded end of the current run, else the status its
 * shim wrote, else — only while the current run is alive — how the run before it ended. A run that ended
 * without an exit file has an unknown status: the previous run's would be a false fact (a clean 0 read as a
 * completion by the controller).
 */
export function reportedExit(state: ProcessState | undefined, running: boolean, observedExitCode?: number): ExitRecord | undefined {
  if (state?.exit) return state.exit;
  if (observedExitCode !== undefined) return exitRecord(observedExitCode, 0);
  return running ? state?.previousExit : undefined;
}

/** What a runtime adds to an observation of a live instance. */
export interface LiveView {
  ready: boolean;
  instance?: Partial<WorkItemInstanceStatus>;
  message?: string;
  requeueAfterMs?: number;
}

function toObservation(plan: Plan, state: ProcessState | undefined, running: boolean, dir: string, observedExitCode?: number, live?: LiveView): Observation {
  const exit = reportedExit(state, running, observedExitCode);
  const requeueAfterMs = plan.requeueAfterMs ?? (running ? live?.requeueAfterMs : undefined);
  return {
    converged: plan.action === undefined,
    ...(plan.action ? { action: plan.action } : {}),
    message: (running && plan.action === undefined && live?.message) || plan.message,
    ...(requeueAfterMs !== undefined ? { requeueAfterMs } : {}),
    instance: {
      state: plan.state,
      ready: running && (live?.ready ?? true),
      logPath: path.join(dir, LOG_FILE),
      restarts: state?.restarts ?? 0,
      ...(running && state ? { pid: state.pid, processStartTime: startTimeIso(state.startTicks) } : {}),
      ...(state ? { startedAt: new Date(state.startedAt).toISOString(), limitsEnforced: state.limitsEnforced } : {}),
      ...(exit?.code !== undefined ? { lastExitCode: exit.code } : {}),
      ...(exit?.signal ? { lastSignal: exit.signal } : {}),
      ...(running ? live?.instance : {}),
    },
    conditions: state
      ? [{ type: 'LimitsEnforced', status: state.limitsEnforced ? 'True' : 'False', reason: state.limitsEnforced ? 'CgroupLimits' : 'CgroupUnavailable', message: state.limitsMessage }]
      : [],
  };
}

/** Everything start() needs, resolved and checked before anything running is touched. */
export interface Prepared {
  namespace: string;
  name: string;
  dir: string;
  spec: WorkItemInstanceSpec;
  volumes: Record<string, string>;
  cwd: string;
  env: Record<string, string>;
  argv: string[];
  /** The cgroup's memory limit. */
  memoryBytes: number;
  /** Runtime.hashOf() of what is launched. */
  specHash: string;
  /** Extra fields for state.json (the runtime's own record). */
  extra?: Partial<ProcessState>;
  /**
   * Files of an earlier run the launch must not find (a VM's sockets and pid file), removed just before
   * it: a restart prepares before it stops the running copy, which still needs them to stop gracefully.
   */
  staleFiles?: string[];
}

/** What differs between a supervised process and a supervised VM. */
export interface Runtime {
  /** The instance slice of `item`, checked (InvalidSpec otherwise). */
  specOf(item: WorkItem): WorkItemInstanceSpec;
  /** Hash of what the running workload was started with; a change restarts it. */
  hashOf(item: WorkItem, volumes: Record<string, string>): string;
  /** The command to launch, resolved and checked. */
  prepare(item: WorkItem, ctx: OperationContext, base: Omit<Prepared, 'cwd' | 'env' | 'argv' | 'memoryBytes'>): Promise<Prepared>;
  /** After the launch: wait until the workload is up and complete its record. */
  launched?(p: Prepared, state: ProcessState, ctx: OperationContext): Promise<ProcessState>;
  /** Stops it gracefully within the grace period, then by force. */
  stop(state: ProcessState, item: WorkItem, ctx: OperationContext, dir: string): Promise<StopOutcome>;
  /** Looks at a live workload (ready, extra status). */
  look?(item: WorkItem, state: ProcessState, dir: string, env: DriverEnv): Promise<LiveView>;
}

/** Supervised instances run under a process shim; their record is state.json in the instance dir. */
export function isRunning(state: ProcessState | undefined): boolean {
  return state !== undefined && isSameProcess(state, readProcStat(state.pid), bootId());
}

async function observeWith(rt: Runtime, item: WorkItem, env: DriverEnv): Promise<Observation> {
  const spec = rt.specOf(item);
  const { namespace, name } = ownerKey(item);
  const dir = instanceDir(env.dataDir, namespace, name);
  const state = readState(dir);
  const running = isRunning(state);
  const observedExitCode = state && !running && !state.exit ? readExit(dir, state.pid)?.code : undefined;
  const hash = rt.hashOf(item, volumePaths(item, env.dataDir, namespace));
  const plan = planInstance({ spec, specHash: hash, state, running, observedExitCode, mounts: mountHealth(item, env.dataDir), now: env.now() });
  const live = running && state && rt.look ? await rt.look(item, state, dir, env) : undefined;
  return toObservation(plan, state, running, dir, observedExitCode, live);
}

/** Mounts the instance's gluster volumes on this node (it becomes one of each mount's users) and checks its local replicas exist. */
async function attachVolumes(item: WorkItem, volumes: Record<string, string>, ctx: OperationContext): Promise<void> {
  const { namespace, name } = ownerKey(item);
  for (const v of item.spec.instance?.volumes ?? []) {
    if (v.gluster) await attachGluster(namespace, v.volumeName, v.gluster, name, ctx);
    else if (!fs.existsSync(volumes[v.name]!)) throw new OperationError('NotFound', `replica ${volumes[v.name]} of volume ${v.name} is not on node ${ctx.nodeName}`, 'wait until the Volume is Ready on this node, or fix the attachment');
  }
}

async function basePrepared(rt: Runtime, item: WorkItem, ctx: OperationContext): Promise<Prepared> {
  const spec = rt.specOf(item);
  const { namespace, name } = ownerKey(item);
  const volumes = volumePaths(item, ctx.dataDir, namespace);
  await attachVolumes(item, volumes, ctx);
  return rt.prepare(item, ctx, { namespace, name, dir: instanceDir(ctx.dataDir, namespace, name), spec, volumes, specHash: rt.hashOf(item, volumes) });
}

async function start(rt: Runtime, p: Prepared, ctx: OperationContext, prior: Pick<ProcessState, 'restarts' | 'backoffCount' | 'previousExit'>): Promise<ProcessState> {
  await fs.promises.mkdir(p.dir, { recursive: true });
  // Named after the node too: nodes that share a machine (the demo, the tests) share its cgroup tree.
  const cgroup = await prepareCgroup(ctx.cgroupRoot, `${ctx.nodeName}_${p.namespace}_${p.name}`, { cpus: p.spec.cpus, memoryBytes: p.memoryBytes });
  ctx.signal.throwIfAborted();
  const cgroupProcs = cgroup.dir ? { cgroupProcs: path.join(cgroup.dir, 'cgroup.procs') } : {};
  const logPath = path.join(p.dir, LOG_FILE);
  const logOffset = fs.statSync(logPath, { throwIfNoEntry: false })?.size ?? 0;
  for (const f of p.staleFiles ?? []) fs.rmSync(f, { force: true });
  const { pid, startTicks } = launch({ argv: p.argv, env: p.env, cwd: p.cwd, logPath, exitPath: path.join(p.dir, EXIT_FILE), ...(ctx.fenceFile ? { fencePath: ctx.fenceFile } : {}), ...cgroupProcs });
  let state: ProcessState = {
    version: 1, pid, startTicks, bootId: bootId(), startedAt: ctx.now(), logOffset, ...prior,
    ...(p.spec.restartToken !== undefined ? { restartToken: p.spec.restartToken } : {}),
    specHash: p.specHash, stopped: false,
    limitsEnforced: cgroup.enforced, limitsMessage: cgroup.message, ...(cgroup.dir ? { cgroup: cgroup.dir } : {}),
    ...p.extra,
  };
  writeState(p.dir, state);
  ctx.log.info('instance started', { instance: `${p.namespace}/${p.name}`, pid, restarts: prior.restarts, limitsEnforced: cgroup.enforced });
  if (rt.launched) writeState(p.dir, (state = await rt.launched(p, state, ctx)));
  return state;
}

async function stop(rt: Runtime, dir: string, state: ProcessState, item: WorkItem, ctx: OperationContext): Promise<ProcessState> {
  const outcome = await rt.stop(state, item, ctx, dir);
  await killLeftovers(state);
  if (outcome === 'gone') return state;
  const code = outcome === 'SIGKILL' ? 137 : readExit(dir, state.pid)?.code;
  ctx.log.info('instance stopped', { pid: state.pid, signal: outcome, exitCode: code });
  return { ...state, exit: exitRecord(code, ctx.now(), stopSignal(outcome, code)) };
}

async function ensureWith(rt: Runtime, item: WorkItem, ctx: OperationContext): Promise<Observation> {
  const spec = rt.specOf(item);
  const { namespace } = ownerKey(item);
  const dir = instanceDir(ctx.dataDir, namespace, item.spec.owner.name);
  let state = readState(dir);
  let running = isRunning(state);
  if (state && !running && !state.stopped && !state.exit) {
    const exit = readExit(dir, state.pid);
    // The exit's own time (a clock behind the file's counts as now): backoff and the 10-minute reset count from it.
    state = { ...state, exit: exitRecord(exit?.code, Math.min(exit?.atMs ?? Infinity, ctx.now())) };
    writeState(dir, state);
    await killLeftovers(state);
  }
  const volumes = volumePaths(item, ctx.dataDir, namespace);
  const plan = planInstance({ spec, specHash: rt.hashOf(item, volumes), state, running, mounts: mountHealth(item, ctx.dataDir), now: ctx.now() });
  if (plan.action === 'stop' && state) {
    state = { ...(running ? await stop(rt, dir, state, item, ctx) : state), stopped: true };
    writeState(dir, state);
  } else if (plan.action === 'restart' && state) {
    const prepared = await basePrepared(rt, item, ctx);
    if (running) writeState(dir, (state = await stop(rt, dir, state, item, ctx)));
    state = await start(rt, prepared, ctx, { restarts: state.restarts + 1, backoffCount: plan.backoffCount ?? 0, ...(state.exit ? { previousExit: state.exit } : {}) });
  } else if (plan.action === 'start') {
    state = await start(rt, await basePrepared(rt, item, ctx), ctx, { restarts: state?.restarts ?? 0, backoffCount: 0, ...(state?.exit ? { previousExit: state.exit } : {}) });
  }
  return observeWith(rt, item, ctx);
}

async function removeWith(rt: Runtime, item: WorkItem, ctx: OperationContext): Promise<void> {
  const { namespace, name } = ownerKey(item);
  const dir = instanceDir(ctx.dataDir, namespace, name);
  const state = readState(dir);
  if (state && isRunning(state)) await rt.stop(state, item, ctx, dir);
  if (state) await killLeftovers(state);
  if (state?.cgroup) {
    await removeCgroup(state.cgroup).catch((err: Error) => ctx.log.warn('cannot remove the instance cgroup', { cgroup: state.cgroup, error: err.message }));
  }
  // The instance leaves its gluster mounts on this node; the last user of one unmounts it.
  await detachAllGluster(namespace, name, ctx);
  await fs.promises.rm(dir, { recursive: true, force: true });
  ctx.log.info('instance removed', { instance: `${namespace}/${name}` });
}

/** The building blocks of a supervised driver, for runtimes that add steps of their own (qemu's migration). */
export const supervised = { observe: observeWith, ensure: ensureWith, remove: removeWith, start, stop, basePrepared };

/** A driver that supervises what `rt` launches. */
export function supervisedDriver(name: string, rt: Runtime): Driver {
  return { name, observe: (item, env) => observeWith(rt, item, env), ensure: (item, ctx) => ensureWith(rt, item, ctx), remove: (item, ctx) => removeWith(rt, item, ctx) };
}

const processRuntime: Runtime = {
  specOf: processSpec,
  hashOf: (item, volumes) => specHash(item.spec.instance!, volumes),
  async prepare(item, ctx, base) {
    const spec = processSpec(item);
    const cwd = spec.process.workingDir ?? '/';
    const st = await fs.promises.stat(cwd).catch(() => undefined);
    if (!st?.isDirectory()) throw new OperationError('NotFound', `working directory ${cwd} does not exist on node ${ctx.nodeName}`, `create ${cwd} on node ${ctx.nodeName} or fix spec.process.workingDir`);
    const env = instanceEnv(spec, { instance: base.name, cluster: base.namespace, node: ctx.nodeName }, base.volumes);
    const program = resolveCommand(spec.process.command[0]!, env.PATH!, cwd, ctx.nodeName);
    return { ...base, cwd, env, argv: [program, ...spec.process.command.slice(1), ...(spec.process.args ?? [])], memoryBytes: memoryOf(item) };
  },
  stop: (state, item, ctx) => stopInstance(state, graceMs(item), ctx.signal),
};

/** The process instance driver. */
export const processDriver: Driver = supervisedDriver('process', processRuntime);

/**
 * The `process` instance driver: an Instance's command as a real, detached
 * process (see process-launch.ts) that survives agent restarts and is
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
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkItem, WorkItemInstanceSpec } from '../../api/workitem.js';
import { parseQuantity } from '../../api/quantity.js';
import { OperationError } from '../operations/errors.js';
import { prepareCgroup, removeCgroup } from './cgroup.js';
import type { Driver, DriverEnv, Observation, OperationContext } from './driver.js';
import { fenceDeadlinePath, instanceDir, ownerKey, replicaPath } from './paths.js';
import { instanceEnv, launch, resolveCommand, specHash } from './process-launch.js';
import { planInstance, type Plan } from './process-plan.js';
import { EXIT_FILE, isSameProcess, LOG_FILE, readExitCode, readState, writeState, type ExitRecord, type ProcessState } from './process-state.js';
import { stopInstance } from './process-stop.js';
import { bootId, readProcStat, startTimeIso } from './proc.js';

/** Default terminationGracePeriodSeconds of an Instance. */
export const DEFAULT_GRACE_SECONDS = 10;

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

function memoryOf(item: WorkItem): number {
  try {
    return parseQuantity(item.spec.instance!.memory);
  } catch (err) {
    throw new OperationError('InvalidSpec', `memory of instance ${item.spec.owner.name}: ${(err as Error).message}`, 'fix spec.memory of the Instance', { cause: err });
  }
}

/** Grace period of the instance's stop in ms. */
export function graceMs(item: WorkItem): number {
  return (item.spec.instance?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS) * 1000;
}

/** The replica path of each attached volume, by attachment name. */
export function volumePaths(item: WorkItem, dataDir: string, namespace: string): Record<string, string> {
  const paths: Record<string, string> = {};
  for (const v of item.spec.instance?.volumes ?? []) {
    if (v.path) paths[v.name] = v.path;
    else if (v.replicaIndex !== undefined) paths[v.name] = replicaPath(dataDir, namespace, v.volumeName, v.replicaIndex);
    else throw new OperationError('InvalidSpec', `volume ${v.name} of instance ${item.spec.owner.name} has neither path nor replicaIndex`, 'the controller should fill spec.instance.volumes[].replicaIndex');
  }
  return paths;
}

/** Signal name of an exit status of 128+n, if it is one. */
export function signalOf(code: number | undefined): string | undefined {
  if (code === undefined || code <= 128) return undefined;
  return Object.entries(os.constants.signals).find(([, n]) => n === code - 128)?.[0];
}

function exitRecord(code: number | undefined, at: number, signal = signalOf(code)): ExitRecord {
  return { ...(code !== undefined ? { code } : {}), ...(signal ? { signal } : {}), at };
}

function isRunning(state: ProcessState | undefined): boolean {
  return state !== undefined && isSameProcess(state, readProcStat(state.pid), bootId());
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

function toObservation(plan: Plan, state: ProcessState | undefined, running: boolean, dir: string, observedExitCode?: number): Observation {
  const exit = reportedExit(state, running, observedExitCode);
  return {
    converged: plan.action === undefined,
    ...(plan.action ? { action: plan.action } : {}),
    message: plan.message,
    ...(plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : {}),
    instance: {
      state: plan.state,
      ready: running,
      logPath: path.join(dir, LOG_FILE),
      restarts: state?.restarts ?? 0,
      ...(running && state ? { pid: state.pid, processStartTime: startTimeIso(state.startTicks) } : {}),
      ...(state ? { startedAt: new Date(state.startedAt).toISOString(), limitsEnforced: state.limitsEnforced } : {}),
      ...(exit?.code !== undefined ? { lastExitCode: exit.code } : {}),
      ...(exit?.signal ? { lastSignal: exit.signal } : {}),
    },
    conditions: state
      ? [{ type: 'LimitsEnforced', status: state.limitsEnforced ? 'True' : 'False', reason: state.limitsEnforced ? 'CgroupLimits' : 'CgroupUnavailable', message: state.limitsMessage }]
      : [],
  };
}

async function observe(item: WorkItem, env: DriverEnv): Promise<Observation> {
  const spec = processSpec(item);
  const { namespace, name } = ownerKey(item);
  const dir = instanceDir(env.dataDir, namespace, name);
  const state = readState(dir);
  const running = isRunning(state);
  const observedExitCode = state && !running && !state.exit ? readExitCode(dir, state.pid) : undefined;
  const hash = specHash(spec, volumePaths(item, env.dataDir, namespace));
  const plan = planInstance({ spec, specHash: hash, state, running, observedExitCode, now: env.now() });
  return toObservation(plan, state, running, dir, observedExitCode);
}

async function checkPaths(cwd: string, volumes: Record<string, string>, node: string): Promise<void> {
  const st = await fs.promises.stat(cwd).catch(() => undefined);
  if (!st?.isDirectory()) throw new OperationError('NotFound', `working directory ${cwd} does not exist on node ${node}`, `create ${cwd} on node ${node} or fix spec.process.workingDir`);
  for (const [name, p] of Object.entries(volumes)) {
    if (!fs.existsSync(p)) throw new OperationError('NotFound', `replica ${p} of volume ${name} is not on node ${node}`, 'wait until the Volume is Ready on this node, or fix the attachment');
  }
}

/** Everything start() needs, resolved and checked before anything running is touched. */
interface Prepared {
  namespace: string;
  name: string;
  dir: string;
  spec: WorkItemInstanceSpec;
  volumes: Record<string, string>;
  cwd: string;
  env: Record<string, string>;
  argv: string[];
  memoryBytes: number;
}

async function prepare(item: WorkItem, ctx: OperationContext): Promise<Prepared> {
  const spec = processSpec(item);
  const { namespace, name } = ownerKey(item);
  const volumes = volumePaths(item, ctx.dataDir, namespace);
  const cwd = spec.process.workingDir ?? '/';
  await checkPaths(cwd, volumes, ctx.nodeName);
  const env = instanceEnv(spec, { instance: name, cluster: namespace, node: ctx.nodeName }, volumes);
  const program = resolveCommand(spec.process.command[0]!, env.PATH!, cwd, ctx.nodeName);
  const argv = [program, ...spec.process.command.slice(1), ...(spec.process.args ?? [])];
  return { namespace, name, dir: instanceDir(ctx.dataDir, namespace, name), spec, volumes, cwd, env, argv, memoryBytes: memoryOf(item) };
}

async function start(p: Prepared, ctx: OperationContext, prior: Pick<ProcessState, 'restarts' | 'backoffCount' | 'previousExit'>): Promise<ProcessState> {
  await fs.promises.mkdir(p.dir, { recursive: true });
  const cgroup = await prepareCgroup(ctx.cgroupRoot, `${p.namespace}_${p.name}`, { cpus: p.spec.cpus, memoryBytes: p.memoryBytes });
  ctx.signal.throwIfAborted();
  const cgroupProcs = cgroup.dir ? { cgroupProcs: path.join(cgroup.dir, 'cgroup.procs') } : {};
  const { pid, startTicks } = launch({ argv: p.argv, env: p.env, cwd: p.cwd, logPath: path.join(p.dir, LOG_FILE), exitPath: path.join(p.dir, EXIT_FILE), fencePath: fenceDeadlinePath(ctx.dataDir, p.namespace, p.name), ...cgroupProcs });
  const state: ProcessState = {
    version: 1, pid, startTicks, bootId: bootId(), startedAt: ctx.now(), ...prior,
    ...(p.spec.restartToken !== undefined ? { restartToken: p.spec.restartToken } : {}),
    specHash: specHash(p.spec, p.volumes), stopped: false,
    limitsEnforced: cgroup.enforced, limitsMessage: cgroup.message, ...(cgroup.dir ? { cgroup: cgroup.dir } : {}),
  };
  writeState(p.dir, state);
  ctx.log.info('instance started', { instance: `${p.namespace}/${p.name}`, pid, restarts: prior.restarts, limitsEnforced: cgroup.enforced });
  return state;
}

async function stop(dir: string, state: ProcessState, item: WorkItem, ctx: OperationContext): Promise<ProcessState> {
  const outcome = await stopInstance(state, graceMs(item), ctx.signal);
  if (outcome === 'gone') return state;
  const code = outcome === 'SIGKILL' ? 137 : readExitCode(dir, state.pid);
  ctx.log.info('instance stopped', { pid: state.pid, signal: outcome, exitCode: code });
  return { ...state, exit: exitRecord(code, ctx.now(), outcome === 'SIGKILL' ? 'SIGKILL' : (signalOf(code) ?? 'SIGTERM')) };
}

async function ensure(item: WorkItem, ctx: OperationContext): Promise<Observation> {
  const spec = processSpec(item);
  const { namespace } = ownerKey(item);
  const dir = instanceDir(ctx.dataDir, namespace, item.spec.owner.name);
  let state = readState(dir);
  let running = isRunning(state);
  if (state && !running && !state.stopped && !state.exit) {
    state = { ...state, exit: exitRecord(readExitCode(dir, state.pid), ctx.now()) };
    writeState(dir, state);
  }
  const hash = specHash(spec, volumePaths(item, ctx.dataDir, namespace));
  const plan = planInstance({ spec, specHash: hash, state, running, now: ctx.now() });
  if (plan.action === 'stop' && state) {
    state = { ...(running ? await stop(dir, state, item, ctx) : state), stopped: true };
    writeState(dir, state);
  } else if (plan.action === 'restart' && state) {
    const prepared = await prepare(item, ctx);
    if (running) writeState(dir, (state = await stop(dir, state, item, ctx)));
    state = await start(prepared, ctx, { restarts: state.restarts + 1, backoffCount: plan.backoffCount ?? 0, ...(state.exit ? { previousExit: state.exit } : {}) });
  } else if (plan.action === 'start') {
    state = await start(await prepare(item, ctx), ctx, { restarts: state?.restarts ?? 0, backoffCount: 0, ...(state?.exit ? { previousExit: state.exit } : {}) });
  }
  running = isRunning(state);
  return toObservation(planInstance({ spec, specHash: hash, state, running, now: ctx.now() }), state, running, dir);
}

async function remove(item: WorkItem, ctx: OperationContext): Promise<void> {
  const { namespace, name } = ownerKey(item);
  const dir = instanceDir(ctx.dataDir, namespace, name);
  const state = readState(dir);
  if (state) await stopInstance(state, graceMs(item), ctx.signal);
  if (state?.cgroup) {
    await removeCgroup(state.cgroup).catch((err: Error) => ctx.log.warn('cannot remove the instance cgroup', { cgroup: state.cgroup, error: err.message }));
  }
  await fs.promises.rm(dir, { recursive: true, force: true });
  ctx.log.info('instance removed', { instance: `${namespace}/${name}` });
}

/** The process instance driver. */
export const processDriver: Driver = { name: 'process', observe, ensure, remove };

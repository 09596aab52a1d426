/**
 * The qemu driver: the supervised qemu runtime (qemu.ts) plus the agent's
 * side of live migration (docs/migration.md). A WorkItem's
 * spec.instance.migration gives this node's role:
 * - Target: `listen` starts qemu paused with -incoming defer, exports the
 *   attached disks over NBD and calls migrate-incoming on a port it picks;
 *   when qemu reports the incoming state loaded (run state paused), `resume`
 *   (run only once the agent holds the fencing lease) stops the NBD server
 *   and runs cont.
 * - Source: `migrate` mirrors each local disk into the target's NBD export
 *   and, once every mirror is ready, starts the memory transfer (a disk on a
 *   gluster volume is the same file on both nodes: nothing to mirror); observe() reports
 *   query-migrate's figures; `finishMigration` completes the mirrors and quits
 *   qemu once the transfer completed (the agent then hands the lease over);
 *   `abortMigration` cancels a transfer that failed, timed out or is no
 *   longer asked for, leaving the guest running here.
 * Every step is recorded in state.json (vm.incoming / vm.outgoing), so a
 * restarted agent resumes the protocol where it was.
 */
import net from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkItem, WorkItemMigrationSpec, WorkItemMigrationStatus } from '../../../api/workitem.js';
import { OperationError } from '../../operations/errors.js';
import type { DriverAction, DriverEnv, Observation, OperationContext } from '../driver.js';
import { instanceDir, ownerKey } from '../paths.js';
import { supervised } from '../process/driver.js';
import { readState, writeState, type OutgoingRecord, type ProcessState } from '../process/state.js';
import { prepareVm, qemuRuntime, vmAlive, vmPaths } from './runtime.js';
import { diskNodeName } from './command.js';
import { withQmp, type QmpClient } from './qmp.js';

/** How often a migration in flight is looked at. */
const POLL_MS = 200;
/** qemu's max-bandwidth for "unlimited" (bytes/s). */
const UNLIMITED_BANDWIDTH = 100 * 1024 ** 3;

interface QueryMigrate {
  status?: string;
  'total-time'?: number;
  downtime?: number;
  'error-desc'?: string;
  ram?: { transferred?: number; remaining?: number; total?: number };
}

function stateDir(item: WorkItem, dataDir: string): string {
  const { namespace, name } = ownerKey(item);
  return instanceDir(dataDir, namespace, name);
}

/** Indices of the disks a migration mirrors: local replicas; a gluster volume's disk is the same file on both nodes. */
function mirroredDisks(item: WorkItem): number[] {
  return (item.spec.instance?.volumes ?? []).flatMap((v, i) => (v.gluster ? [] : [i]));
}

// Millisecond precision (RFC 3339 allows fractions): the controller computes downtime from both sides' times.
function time(ms: number | undefined): string | undefined {
  return ms === undefined ? undefined : new Date(ms).toISOString();
}

/** A free TCP port on `address` (the kernel's pick; qemu binds it right after). */
async function freePort(address: string): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, address, resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

// ---------------------------------------------------------------- target side

/** The target side of migration `m`; `m.peerNodeName` is unknown once the controller made the WorkItem ordinary. */
async function observeTarget(item: WorkItem, m: Pick<WorkItemMigrationSpec, 'id'> & { peerNodeName?: string }, env: DriverEnv): Promise<Observation> {
  const dir = stateDir(item, env.dataDir);
  const state = readState(dir);
  const incoming = state?.vm?.incoming;
  const base: WorkItemMigrationStatus = { id: m.id, role: 'Target' };
  if (!state || incoming?.id !== m.id) {
    return { converged: false, action: 'listen', message: `preparing to receive the instance from node ${m.peerNodeName ?? '?'}`, migration: { ...base, phase: 'Preparing' } };
  }
  const endpoint = { address: incoming.address, port: incoming.port, ...(incoming.nbdPort ? { nbdPort: incoming.nbdPort } : {}) };
  if (incoming.resumedAt !== undefined) {
    const obs = await supervised.observe(qemuRuntime, item, env);
    return { ...obs, migration: { ...base, ...endpoint, phase: 'Completed', finishedAt: time(incoming.resumedAt) } };
  }
  if (!vmAlive(state)) {
    const message = `qemu exited on node ${item.spec.nodeName} before the incoming migration completed`;
    return { converged: true, message, instance: { state: 'Exited', ready: false }, migration: { ...base, ...endpoint, phase: 'Failed', message } };
  }
  const obs = await supervised.observe(qemuRuntime, item, env);
  const runState = obs.instance?.qemu?.qmpState ?? 'unknown';
  if (runState === 'paused') {
    return { ...obs, converged: false, action: 'resume', message: 'incoming migration complete: resuming the guest once this node holds the fencing lease', migration: { ...base, ...endpoint, phase: 'Transferring' } };
  }
  return { ...obs, converged: true, requeueAfterMs: POLL_MS, message: `listening on ${incoming.address}:${incoming.port} for node ${m.peerNodeName ?? '?'} (qemu ${runState})`, migration: { ...base, ...endpoint, phase: 'Listening' } };
}

/** Starts qemu as a paused migration target and makes it listen. */
async function listen(item: WorkItem, m: WorkItemMigrationSpec, ctx: OperationContext): Promise<void> {
  const dir = stateDir(item, ctx.dataDir);
  const old = readState(dir);
  if (old && vmAlive(old)) await supervised.stop(qemuRuntime, dir, old, item, ctx);
  const address = ctx.migrationAddress ?? '127.0.0.1';
  const disks = mirroredDisks(item);
  const incoming = { id: m.id, address, port: await freePort(address), ...(disks.length > 0 ? { nbdPort: await freePort(address) } : {}) };
  const base = await supervised.basePrepared(qemuRuntime, item, ctx);
  const prepared = await prepareVm(item, ctx, base, incoming);
  let state = await supervised.start(qemuRuntime, prepared, ctx, { restarts: old?.restarts ?? 0, backoffCount: 0 });
  await withQmp(vmPaths(dir).controlSocket, async (qmp) => {
    if (incoming.nbdPort) {
      await qmp.execute('nbd-server-start', { addr: { type: 'inet', data: { host: address, port: String(incoming.nbdPort) } } });
      for (const i of disks) await qmp.execute('block-export-add', { type: 'nbd', id: `export-${diskNodeName(i)}`, 'node-name': diskNodeName(i), name: diskNodeName(i), writable: true });
    }
    await qmp.execute('migrate-incoming', { uri: `tcp:${address}:${incoming.port}` });
  });
  state = { ...state, vm: { ...state.vm!, incoming } };
  writeState(dir, state);
  ctx.log.info('listening for an incoming migration', { instance: item.spec.owner.name, from: m.peerNodeName, ...incoming });
}

/** Resumes the guest after the incoming migration (the agent holds the fencing lease). */
async function resume(item: WorkItem, ctx: OperationContext): Promise<void> {
  const dir = stateDir(item, ctx.dataDir);
  const state = readState(dir);
  if (!state?.vm?.incoming) throw new OperationError('Unknown', `no incoming migration recorded for ${item.spec.owner.name}`, 'the agent starts the migration again');
  await withQmp(vmPaths(dir).controlSocket, async (qmp) => {
    if (state.vm?.incoming?.nbdPort) {
      for (const i of mirroredDisks(item)) await qmp.execute('block-export-del', { id: `export-${diskNodeName(i)}` }).catch(() => undefined);
      await qmp.execute('nbd-server-stop').catch(() => undefined);
    }
    await qmp.execute('cont');
  });
  writeState(dir, { ...state, vm: { ...state.vm, incoming: { ...state.vm.incoming, resumedAt: ctx.now() } } });
  ctx.log.info('resumed the migrated guest', { instance: item.spec.owner.name });
}

// ---------------------------------------------------------------- source side

function outgoingStatus(item: WorkItem, o: OutgoingRecord, q?: QueryMigrate): WorkItemMigrationStatus {
  const m = item.spec.instance?.migration;
  const ram = q?.ram;
  return {
    id: o.id,
    role: 'Source',
    startedAt: time(o.startedAt),
    ...(ram?.total !== undefined ? { bytesTotal: ram.total } : {}),
    ...(ram?.transferred !== undefined ? { bytesTransferred: ram.transferred } : {}),
    ...(ram?.remaining !== undefined ? { bytesRemaining: ram.remaining } : {}),
    ...(m?.targetAddress ? { address: m.targetAddress, port: m.targetPort } : {}),
  };
}

async function queryMigrate(dir: string): Promise<QueryMigrate | undefined> {
  return withQmp(vmPaths(dir).qmpSocket, (qmp) => qmp.execute<QueryMigrate>('query-migrate'), 1500).catch(() => undefined);
}

function timedOut(o: OutgoingRecord, m: WorkItemMigrationSpec | undefined, now: number): boolean {
  return now - o.startedAt > (m?.timeoutSeconds ?? 300) * 1000;
}

/** The source side, once a migration was started here (vm.outgoing). */
async function observeOutgoing(item: WorkItem, state: ProcessState, o: OutgoingRecord, env: DriverEnv): Promise<Observation> {
  const dir = stateDir(item, env.dataDir);
  const m = item.spec.instance?.migration;
  if (o.completed) {
    const c = o.completed;
    const message = `migrated to node ${m?.peerNodeName ?? '?'} (downtime ${c.downtimeMs} ms, total ${c.totalTimeMs} ms)`;
    return {
      converged: true,
      message,
      instance: { state: 'Stopped', ready: false, restarts: state.restarts },
      migration: { ...outgoingStatus(item, o), phase: 'Completed', downtimeMs: c.downtimeMs, totalTimeMs: c.totalTimeMs, bytesTransferred: c.bytesTransferred, bytesRemaining: 0, finishedAt: time(c.finishedAt), message },
    };
  }
  const obs = await supervised.observe(qemuRuntime, item, env);
  if (o.failed) return { ...obs, migration: { ...outgoingStatus(item, o), phase: o.id === m?.id ? 'Failed' : 'Cancelled', message: o.failed.message } };
  const q = await queryMigrate(dir);
  const status = { ...outgoingStatus(item, o, q) };
  if (q?.status === 'completed') return { ...obs, converged: false, action: 'finishMigration', message: 'transfer complete: handing over', migration: { ...status, phase: 'Transferring' } };
  const failed = q?.status === 'failed' || q?.status === 'cancelled';
  if (failed || !vmAlive(state) || m?.id !== o.id || m.role !== 'Source' || timedOut(o, m, env.now())) {
    return { ...obs, converged: false, action: 'abortMigration', message: 'migration failed or no longer wanted: cancelling it', migration: { ...status, phase: 'Transferring' } };
  }
  const phase = q?.status === 'active' || q?.status === 'device' || q?.status === 'pre-switchover' ? 'Transferring' : 'MirroringStorage';
  return { ...obs, converged: true, requeueAfterMs: POLL_MS, message: `migrating to node ${m.peerNodeName}: ${q?.status ?? 'starting'}`, migration: { ...status, phase } };
}

async function observeSource(item: WorkItem, m: WorkItemMigrationSpec | undefined, env: DriverEnv): Promise<Observation> {
  const state = readState(stateDir(item, env.dataDir));
  const o = state?.vm?.outgoing;
  // A finished or running transfer is reported until the WorkItem goes; a failed one only while the same migration is asked for.
  if (state && o && (o.id === m?.id || !o.failed)) return observeOutgoing(item, state, o, env);
  const obs = await supervised.observe(qemuRuntime, item, env);
  if (!m || !obs.converged || !obs.instance?.ready) return obs;
  if (!m.targetPort || !m.targetAddress) return { ...obs, message: `waiting for node ${m.peerNodeName} to listen for the migration`, migration: { id: m.id, role: 'Source', phase: 'Preparing' } };
  return { ...obs, converged: false, action: 'migrate', message: `starting the migration to node ${m.peerNodeName}`, migration: { id: m.id, role: 'Source', phase: mirroredDisks(item).length > 0 ? 'MirroringStorage' : 'Transferring' } };
}

async function waitMirrorsReady(qmp: QmpClient, count: number, deadline: number, signal: AbortSignal): Promise<void> {
  for (;;) {
    const jobs = await qmp.execute<Array<{ device: string; ready?: boolean; status?: string }>>('query-block-jobs');
    const ready = jobs.filter((j) => j.device.startsWith('mirror-') && j.ready).length;
    if (ready >= count) return;
    if (Date.now() > deadline) throw new OperationError('Timeout', `storage mirror not ready in time (${ready}/${count} disks)`, 'raise spec.qemu.migration.timeoutSeconds or the bandwidth between the nodes');
    await sleep(100, undefined, { signal });
  }
}

/** Mirrors the disks into the target's NBD exports, then starts the memory transfer. */
async function migrate(item: WorkItem, m: WorkItemMigrationSpec, ctx: OperationContext): Promise<void> {
  const dir = stateDir(item, ctx.dataDir);
  const state = readState(dir)!;
  const startedAt = ctx.now();
  writeState(dir, { ...state, vm: { ...state.vm!, outgoing: { id: m.id, startedAt } } });
  const host = m.targetAddress!;
  const disks = mirroredDisks(item);
  await withQmp(vmPaths(dir).controlSocket, async (qmp) => {
    for (const i of disks) {
      const node = diskNodeName(i);
      await qmp.execute('blockdev-add', { driver: 'nbd', 'node-name': `mirror-${node}`, server: { type: 'inet', host, port: String(m.targetNbdPort) }, export: node });
      await qmp.execute('blockdev-mirror', { 'job-id': `mirror-${node}`, device: node, target: `mirror-${node}`, sync: 'full' });
    }
    if (disks.length > 0) await waitMirrorsReady(qmp, disks.length, startedAt + (m.timeoutSeconds ?? 300) * 1000, ctx.signal);
    const bandwidth = m.bandwidthMiBps ? m.bandwidthMiBps * 1024 * 1024 : UNLIMITED_BANDWIDTH;
    await qmp.execute('migrate-set-parameters', { 'downtime-limit': m.maxDowntimeMs ?? 300, 'max-bandwidth': bandwidth });
    const transferAt = ctx.now();
    await qmp.execute('migrate', { uri: `tcp:${host}:${m.targetPort}` });
    writeState(dir, { ...state, vm: { ...state.vm!, outgoing: { id: m.id, startedAt, transferAt } } });
  });
  ctx.log.info('migration started', { instance: item.spec.owner.name, to: m.peerNodeName, mirroredDisks: disks.length });
}

async function cancelMirrors(qmp: QmpClient, signal: AbortSignal): Promise<void> {
  const jobs = await qmp.execute<Array<{ device: string }>>('query-block-jobs');
  for (const j of jobs.filter((x) => x.device.startsWith('mirror-'))) await qmp.execute('block-job-cancel', { device: j.device, force: false }).catch(() => undefined);
  for (let i = 0; i < 100; i++) {
    const left = await qmp.execute<Array<{ device: string }>>('query-block-jobs');
    if (!left.some((x) => x.device.startsWith('mirror-'))) return;
    await sleep(50, undefined, { signal });
  }
}

/** After a completed transfer: complete the mirrors (the target's copy is consistent) and quit qemu. */
async function finishMigration(item: WorkItem, ctx: OperationContext): Promise<void> {
  const dir = stateDir(item, ctx.dataDir);
  const state = readState(dir)!;
  const o = state.vm!.outgoing!;
  const q = await withQmp(vmPaths(dir).controlSocket, async (qmp) => {
    const info = await qmp.execute<QueryMigrate>('query-migrate');
    await cancelMirrors(qmp, ctx.signal);
    await qmp.execute('quit').catch(() => undefined);
    return info;
  });
  await supervised.stop(qemuRuntime, dir, state, item, ctx);
  const totalTimeMs = q['total-time'] ?? ctx.now() - o.startedAt;
  // qemu's total-time runs from the migrate command: when qemu stopped the guest for good is that much later.
  const finishedAt = (o.transferAt ?? o.startedAt) + (q['total-time'] ?? totalTimeMs);
  const completed = { downtimeMs: q.downtime ?? 0, totalTimeMs, ...(q.ram?.transferred !== undefined ? { bytesTransferred: q.ram.transferred } : {}), finishedAt };
  writeState(dir, { ...state, stopped: true, exit: { code: 0, at: ctx.now() }, vm: { ...state.vm!, outgoing: { ...o, completed } } });
  ctx.log.info('migration completed; qemu quit here', { instance: item.spec.owner.name, ...completed });
}

/** Cancels a transfer; the guest keeps running here. */
async function abortMigration(item: WorkItem, ctx: OperationContext): Promise<void> {
  const dir = stateDir(item, ctx.dataDir);
  const state = readState(dir)!;
  const o = state.vm!.outgoing!;
  let message: string | undefined = 'the migration was cancelled';
  if (vmAlive(state)) {
    message = await withQmp(vmPaths(dir).controlSocket, async (qmp) => {
      const before = await qmp.execute<QueryMigrate>('query-migrate');
      // Completed meanwhile (the status read that chose this may have timed out): the guest may run on the
      // target already, so this one must not resume. The next observation finishes the migration instead.
      if (before.status === 'completed') return undefined;
      if (before.status !== 'failed' && before.status !== 'cancelled') await qmp.execute('migrate_cancel');
      await cancelMirrors(qmp, ctx.signal);
      for (const i of mirroredDisks(item)) await qmp.execute('blockdev-del', { 'node-name': `mirror-${diskNodeName(i)}` }).catch(() => undefined);
      const status = await qmp.execute<{ status: string }>('query-status');
      if (status.status === 'postmigrate') return undefined; // the transfer finished after all: as above
      if (status.status !== 'running') await qmp.execute('cont');
      if (before['error-desc']) return `qemu: ${before['error-desc']}`;
      return timedOut(o, item.spec.instance?.migration, ctx.now()) ? `the migration did not complete within ${item.spec.instance?.migration?.timeoutSeconds ?? 300} s` : `the migration ended with status ${before.status ?? 'unknown'}`;
    });
  } else message = 'qemu exited on the source during the migration';
  if (message === undefined) return void ctx.log.warn('migration completed while it was being cancelled; finishing it instead', { instance: item.spec.owner.name });
  writeState(dir, { ...state, vm: { ...state.vm!, outgoing: { ...o, failed: { message, at: ctx.now() } } } });
  ctx.log.warn('migration aborted; the guest runs here', { instance: item.spec.owner.name, reason: message });
}

// ---------------------------------------------------------------- the driver

/** The VM's state on this node, a live migration's side included; never changes anything. */
export async function observeVm(item: WorkItem, env: DriverEnv): Promise<Observation> {
  // A VM to be stopped (runState Stopped, as a fence stop asks too) is stopped as any other. Through a migration's
  // side it would not be: a paused target would be resumed, and a transfer cancelled, which continues the guest here.
  if (item.spec.instance?.runState === 'Stopped') return supervised.observe(qemuRuntime, item, env);
  const m = item.spec.instance?.migration;
  if (m?.role === 'Target') return observeTarget(item, m, env);
  // The controller may make the target's WorkItem ordinary (once the source reported Completed) before this
  // agent resumed the guest: the VM still waits for its resume, now under the ordinary fencing path.
  // It also goes on reporting how the VM arrived (the target's Completed with its resume time, which the
  // controller needs for the downtime) until a migration out of here starts.
  const state = m ? undefined : readState(stateDir(item, env.dataDir));
  const vm = state?.vm;
  // A target whose qemu died before it resumed the guest (a fence stop of a paused target, say) is an instance
  // like any other now: its restart policy restarts it, instead of an "exited before the migration completed" for good.
  const arrived = vm?.incoming && (vm.incoming.resumedAt !== undefined || vmAlive(state!));
  if (arrived && !vm.outgoing) return observeTarget(item, { id: vm.incoming!.id }, env);
  return observeSource(item, m, env);
}

/** The migration steps ensure() carries out, by the action observe() named. */
const STEPS: Partial<Record<DriverAction, (item: WorkItem, m: WorkItemMigrationSpec, ctx: OperationContext) => Promise<void>>> = {
  listen,
  resume: (item, _m, ctx) => resume(item, ctx),
  migrate,
  finishMigration: (item, _m, ctx) => finishMigration(item, ctx),
  abortMigration: (item, _m, ctx) => abortMigration(item, ctx),
};

/** Carries out the migration step observeVm() named, or else the supervision's ensure. */
export async function ensureVm(item: WorkItem, ctx: OperationContext): Promise<Observation> {
  const obs = await observeVm(item, ctx);
  const step = obs.action && STEPS[obs.action];
  if (!step) return supervised.ensure(qemuRuntime, item, ctx);
  await step(item, item.spec.instance!.migration!, ctx);
  return observeVm(item, ctx);
}

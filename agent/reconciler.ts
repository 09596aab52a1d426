/**
 * Makes one WorkItem true on this node. Level-triggered and idempotent:
 * observe (in-process, cheap) → if not converged, run ensure in a
 * supervised worker → write status. Deleting WorkItems run remove, release
 * the fencing lease and drop the agent's finalizer.
 *
 * Instances run only under a fencing lease: before starting one the agent
 * must hold <cluster>/instance-<name>; when renewals fail past the safe
 * window it stops the instance itself (Fenced) and starts it again once it
 * holds the lease again. Status writes that fail (apiserver away) are
 * retried with backoff, but never block the local work: an instance that
 * crashes while the control plane is down is still restarted per policy.
 */
import type { Logger } from 'winston';
import type { CairnClient } from '../api/client/cairn-client.js';
import { AGENT_FINALIZER, instanceLeaseName } from '../api/names.js';
import type { WorkItem, WorkItemError } from '../api/workitem.js';
import { withTimeout, type Clock } from '../runtime/clock.js';
import type { Result } from '../runtime/controller.js';
import type { DriverSettings, Observation } from './drivers/driver.js';
import { fenceDeadlinePath, ownerKey } from './drivers/paths.js';
import { graceMs } from './drivers/driver.js';
import { driverFor } from './drivers/registry.js';
import { classify } from './operations/errors.js';
import type { OperationResult, OperationRunner } from './operations/runner.js';
import type { Fencing, FenceSpec } from './fencing.js';
import { keyOf, type LocalStore } from './local-store.js';
import type { AgentMetrics } from './metrics.js';
import { workItemStatus, type StatusUpdate } from './status.js';

/** How often a converged instance is fully reconciled anyway (a dead process is noticed sooner by the liveness sweep). */
export const LIVENESS_INTERVAL_MS = 60_000;
const LEASE_RETRY_MS = 2_000;
/** How often a migration target asks for the lease the source is about to hand over (this is guest downtime). */
const MIGRATION_LEASE_POLL_MS = 50;
/** Retry delay of a status write that failed after the local work was done. */
const STATUS_RETRY_MS = 2_000;
/** Longest wait for one API call of a reconcile. */
const API_TIMEOUT_MS = 5_000;

/** What the reconciler reads and writes through. */
export interface AgentReconcilerDeps {
  client: CairnClient;
  runner: OperationRunner;
  fencing: Fencing;
  store: LocalStore;
  /** The WorkItem as the informer has it (undefined while offline and never synced). */
  cached(key: string): WorkItem | undefined;
  /** Whether the informer has synced (the cache, not the store, is the truth). */
  synced(): boolean;
  settings: DriverSettings;
  clock: Clock;
  log: Logger;
  metrics: AgentMetrics;
  /** Cancellation of the operation running for a key. */
  operations: Map<string, { generation?: number; abort: AbortController }>;
}

/** A failed attempt; its status is written, the queue retries with backoff. */
export class RetryLater extends Error {}

/**
 * The newer of the informer's copy and the copy this agent last wrote: its own status writes reach
 * the cache only through the watch, which lags (and stalls for good when a partition leaves its
 * connection dead); writing from the older copy would fail with a conflict every time.
 */
function latestOf(cached: WorkItem | undefined, stored: WorkItem | undefined): WorkItem | undefined {
  if (!cached || !stored || stored.metadata.uid !== cached.metadata.uid) return cached;
  const c = Number(cached.metadata.resourceVersion);
  const s = Number(stored.metadata.resourceVersion);
  return Number.isSafeInteger(c) && Number.isSafeInteger(s) && s > c ? stored : cached;
}

/** Reconciles the WorkItem with key namespace/name. */
export async function reconcileWorkItem(d: AgentReconcilerDeps, key: string): Promise<Result | void> {
  const stored = d.store.get(key);
  const cached = latestOf(d.cached(key), stored);
  const item = d.synced() ? cached : (cached ?? stored);
  if (!item) return forgetGone(d, key);
  d.store.put(item);
  if (item.metadata.deletionTimestamp) return finalize(d, key, item);
  if (item.spec.type === 'InstanceRuntime' && (item.spec.instance?.runState ?? 'Running') === 'Running') {
    const fenced = item.spec.instance?.driver === 'qemu' ? await vmFence(d, key, item) : await holdFence(d, key, item);
    if (fenced) return fenced;
  }
  return converge(d, key, item);
}

/**
 * The fencing lease of a VM, which may be one side of a live migration (docs/migration.md). A target's
 * qemu waits paused and needs no lease until it is to resume the guest; then it must hold it (handed
 * over by the source) and waits for it without stopping anything — also once the controller made its
 * WorkItem ordinary. The source holds it while the guest runs there; once the transfer completed (qemu
 * paused the guest there for good) it hands the lease to the target, then quits qemu and reports Completed.
 */
async function vmFence(d: AgentReconcilerDeps, key: string, item: WorkItem): Promise<Result | void> {
  const m = item.spec.instance!.migration;
  const obs = await driverFor(item).observe(item, env(d));
  const spec = fenceSpec(item, d.settings.dataDir);
  if (obs.action === 'resume') return awaitHandOver(d, key, item, obs, spec, m?.peerNodeName);
  if (m?.role === 'Target' && obs.migration?.phase !== 'Completed') return;
  if (m?.role === 'Source' && (obs.action === 'finishMigration' || obs.migration?.phase === 'Completed')) return handOver(d, key, item, obs, spec, m.peerNodeName);
  return holdFence(d, key, item);
}

async function awaitHandOver(d: AgentReconcilerDeps, key: string, item: WorkItem, obs: Observation, spec: FenceSpec, peer = 'the source'): Promise<Result | void> {
  const r = await d.fencing.acquire(key, spec).catch((err: unknown) => ({ ok: false as const, holder: String(err) }));
  if (r.ok) return runStep(d, key, item, 'resume');
  await bestEffortStatus(d, item, { phase: 'InProgress', message: `incoming migration complete; waiting for node ${peer} to hand over the fencing lease ${spec.leaseName} (held by ${r.holder ?? 'nobody'})`, observation: obs });
  return { requeueAfterMs: MIGRATION_LEASE_POLL_MS };
}

async function handOver(d: AgentReconcilerDeps, key: string, item: WorkItem, obs: Observation, spec: FenceSpec, peer: string): Promise<void> {
  // qemu paused the guest here for good when it completed the transfer. Without disks the lease goes first
  // (the target resumes while this side quits qemu: a shorter switch-over); with disks the mirrors must
  // complete first, because the target's resume ends its NBD exports.
  const finish = obs.action === 'finishMigration';
  const disks = (item.spec.instance?.volumes?.length ?? 0) > 0;
  if (finish && disks) await runStep(d, key, item, 'finishMigration');
  await bounded(d, d.fencing.handOver(key, spec, peer), API_TIMEOUT_MS, 'handing the fencing lease over').catch((err: unknown) => {
    throw new RetryLater(`cannot hand the fencing lease ${spec.leaseName} to node ${peer}: ${String(err)}`);
  });
  if (finish && !disks) await runStep(d, key, item, 'finishMigration');
}

/** A WorkItem deleted while we were away (or force-released after failover): undo it locally. */
async function forgetGone(d: AgentReconcilerDeps, key: string): Promise<void> {
  const old = d.store.get(key);
  if (!old) return;
  const res = await run(d, key, old, 'remove');
  if (!res.ok) throw new RetryLater(res.error?.message);
  d.fencing.drop(key, old.spec.type === 'InstanceRuntime' ? fenceSpec(old, d.settings.dataDir).deadlineFile : undefined);
  d.store.delete(key);
}

function fenceSpec(item: WorkItem, dataDir: string): FenceSpec {
  const f = item.spec.instance?.fencing;
  return {
    leaseName: f?.leaseName ?? instanceLeaseName(item.spec.owner.name),
    durationSeconds: f?.leaseDurationSeconds ?? 30,
    graceMs: graceMs(item),
    deadlineFile: deadlineFileOf(item, dataDir),
  };
}

// An owner name unfit for a path has no instance dir: the driver reports the WorkItem as InvalidSpec.
function deadlineFileOf(item: WorkItem, dataDir: string): string | undefined {
  try {
    const { namespace, name } = ownerKey(item);
    return fenceDeadlinePath(dataDir, namespace, name);
  } catch {
    return undefined;
  }
}

/** Holds the fencing lease; returns a result when the instance must not run now. */
async function holdFence(d: AgentReconcilerDeps, key: string, item: WorkItem): Promise<Result | void> {
  const spec = fenceSpec(item, d.settings.dataDir);
  let heldBy: string | undefined;
  try {
    const r = await d.fencing.acquire(key, spec);
    if (r.ok) return;
    // A write conflict with this node's own renewal reports this node as holder: not another node.
    if (r.holder !== d.settings.nodeName) heldBy = r.holder;
  } catch (err) {
    d.log.warn('cannot renew fencing lease', { workItem: key, lease: spec.leaseName, error: String(err) });
  }
  if (heldBy) {
    // Another node holds the lease: a copy here (say, from before a partition) must not keep running.
    await stopLocally(d, key, item);
    const error: WorkItemError = {
      reason: 'LeaseHeld',
      message: `fencing lease ${spec.leaseName} is held by node ${heldBy}; the instance may still run there`,
      hint: `it starts here once node ${heldBy} stops it or its lease expires (at most ${spec.durationSeconds}s after that node stopped renewing)`,
    };
    await bestEffortStatus(d, item, { phase: 'Failed', message: error.message, error });
    return { requeueAfterMs: LEASE_RETRY_MS };
  }
  if (d.fencing.isSafe(key, spec)) return;
  return fence(d, key, item, spec);
}

/** Stops the local copy of an instance (runState Stopped through the driver); returns the observation after. */
async function stopLocally(d: AgentReconcilerDeps, key: string, item: WorkItem) {
  const stopped: WorkItem = { ...item, spec: { ...item.spec, instance: { ...item.spec.instance!, runState: 'Stopped' } } };
  const obs = await driverFor(stopped).observe(stopped, env(d));
  if (obs.converged) return obs;
  const res = await run(d, key, stopped, 'ensure', obs.action);
  if (!res.ok) throw new RetryLater(res.error?.message);
  d.log.warn('stopped the local copy of an instance: this node does not hold its fencing lease', { workItem: key, lease: fenceSpec(item, d.settings.dataDir).leaseName });
  return res.observation ?? obs;
}

/** Stops an instance whose fencing lease could not be renewed in time. */
async function fence(d: AgentReconcilerDeps, key: string, item: WorkItem, spec: FenceSpec): Promise<Result> {
  const obs = await stopLocally(d, key, item);
  const error: WorkItemError = {
    reason: 'Fenced',
    message: `stopped on node ${item.spec.nodeName}: the fencing lease ${spec.leaseName} could not be renewed in time (apiserver unreachable?)`,
    hint: 'it starts again by itself once the agent renews the lease; if the node was failed over meanwhile, the instance runs on another node',
  };
  await bestEffortStatus(d, item, { phase: 'Failed', message: error.message, error, observation: { ...obs, instance: { ...obs.instance, state: 'Fenced' } } });
  return { requeueAfterMs: LEASE_RETRY_MS };
}

function env(d: AgentReconcilerDeps) {
  return { ...d.settings, now: () => d.clock.now() };
}

async function converge(d: AgentReconcilerDeps, key: string, item: WorkItem): Promise<Result | void> {
  const obs = await driverFor(item).observe(item, env(d)).catch((err: unknown) => {
    throw new RetryLater(classify(err, { doing: 'observing', node: item.spec.nodeName }).message);
  });
  // Status writes after the node is right are best effort, retried on a short fixed delay: a thrown
  // error would retry with the queue's exponential backoff, which outgrows the fencing deadline while
  // the apiserver is away (an instance would then run past the expiry of its lease).
  // A migration step that became due since vmFence looked: both go with the fencing lease, which vmFence
  // handles (finishing hands it over; resuming needs it), so look again from the start.
  if (obs.action === 'finishMigration' || obs.action === 'resume') return { requeueAfterMs: 0 };
  if (obs.converged) {
    const written = await bestEffortStatus(d, item, { phase: 'Done', message: obs.message, observation: obs });
    return { requeueAfterMs: nextLook(d, key, item, obs.requeueAfterMs, !written) };
  }
  // A retry of a failed attempt keeps showing Failed (and its lastError) until it succeeds, rather than
  // flickering through InProgress on every backoff; it still counts as an attempt.
  const retrying = item.status?.phase === 'Failed' && item.status.observedGeneration === item.metadata.generation;
  const inProgress = retrying ? undefined : await bestEffortStatus(d, item, { phase: 'InProgress', message: obs.message, observation: obs, attempt: true });
  const res = await run(d, key, item, 'ensure', obs.action);
  const latest = inProgress ?? item;
  if (!res.ok) {
    await writeStatus(d, latest, { phase: 'Failed', message: res.error!.message, result: res, error: res.error, attempt: retrying });
    throw new RetryLater(res.error!.message);
  }
  const written = await bestEffortStatus(d, latest, { phase: 'Done', message: res.observation?.message ?? 'done', result: res });
  return { requeueAfterMs: nextLook(d, key, item, res.observation?.requeueAfterMs, !written) };
}

/** When to look at a converged item again: liveness checks for instances, the fencing deadline, the driver's wish, a status write to retry. */
function nextLook(d: AgentReconcilerDeps, key: string, item: WorkItem, driverMs: number | undefined, statusPending = false): number {
  const liveness = item.spec.type === 'InstanceRuntime' ? LIVENESS_INTERVAL_MS : 10 * LIVENESS_INTERVAL_MS;
  const fence = item.spec.type === 'InstanceRuntime' && item.spec.instance?.runState !== 'Stopped' ? d.fencing.msUntilUnsafe(key, fenceSpec(item, d.settings.dataDir)) + 10 : Infinity;
  return Math.min(liveness, fence, driverMs ?? Infinity, statusPending ? STATUS_RETRY_MS : Infinity);
}

async function finalize(d: AgentReconcilerDeps, key: string, item: WorkItem): Promise<void> {
  if (item.metadata.finalizers?.includes(AGENT_FINALIZER)) {
    const migratedTo = await migratedOutTo(d, item);
    const res = await run(d, key, item, 'remove');
    if (!res.ok) {
      await bestEffortStatus(d, item, { phase: 'Failed', message: res.error!.message, result: res, error: res.error });
      throw new RetryLater(res.error!.message);
    }
    if (item.spec.type === 'InstanceRuntime') {
      const spec = fenceSpec(item, d.settings.dataDir);
      // A source that completed a migration gives the lease to the target, never back to nobody.
      const giveUp = migratedTo ? d.fencing.handOver(key, spec, migratedTo) : d.fencing.release(key, spec.deadlineFile);
      await bounded(d, giveUp, API_TIMEOUT_MS, 'releasing the fencing lease').catch((err: unknown) => d.log.warn('could not release fencing lease', { workItem: key, error: String(err) }));
    }
    const finalizers = item.metadata.finalizers.filter((f) => f !== AGENT_FINALIZER);
    await bounded(d, d.client.patch('WorkItem', item.metadata.namespace, item.metadata.name!, { metadata: { finalizers, resourceVersion: item.metadata.resourceVersion } }), API_TIMEOUT_MS, 'removing the finalizer');
  }
  d.store.delete(key);
}

/** Runs one migration step that goes with the fencing lease; a failure is written and retried. */
async function runStep(d: AgentReconcilerDeps, key: string, item: WorkItem, action: 'resume' | 'finishMigration'): Promise<void> {
  const res = await run(d, key, item, 'ensure', action);
  if (res.ok) return;
  await writeStatus(d, item, { phase: 'Failed', message: res.error!.message, result: res, error: res.error });
  throw new RetryLater(res.error!.message);
}

/** The target node when `item` is the source of a migration that completed here. */
async function migratedOutTo(d: AgentReconcilerDeps, item: WorkItem): Promise<string | undefined> {
  const m = item.spec.instance?.migration;
  if (m?.role !== 'Source') return undefined;
  const obs = await driverFor(item).observe(item, env(d)).catch(() => undefined);
  return obs?.migration?.phase === 'Completed' ? m.peerNodeName : undefined;
}

async function run(d: AgentReconcilerDeps, key: string, item: WorkItem, verb: 'ensure' | 'remove', action?: Parameters<OperationRunner['run']>[0]['action']): Promise<OperationResult> {
  // Before the node changes, make the WorkItem and its lease renewal durable: an agent killed right
  // after starting an instance must find it in workitems.json to re-adopt and fence it while offline.
  d.store.setFencingRenewals(d.fencing.renewals());
  d.store.flush();
  const abort = new AbortController();
  d.operations.set(key, { generation: item.metadata.generation, abort });
  try {
    const timeoutMs = item.spec.timeoutSeconds ? item.spec.timeoutSeconds * 1000 : undefined;
    const res = await d.runner.run({ verb, item, action, signal: abort.signal, ...(timeoutMs ? { timeoutMs } : {}) });
    d.metrics.operationDuration.observe({ verb, result: res.ok ? 'success' : 'failure' }, (Date.parse(res.finishedAt) - Date.parse(res.startedAt)) / 1000);
    if (res.error) d.metrics.operationFailures.inc({ reason: res.error.reason });
    return res;
  } finally {
    d.operations.delete(key);
  }
}

/**
 * Awaits an API call for at most `ms`. A request on a connection that a partition left dead never
 * answers; waiting for it would wedge every later reconcile of the WorkItem (the queue never hands
 * out a key still being processed), including the one that must fence its instance.
 */
async function bounded<T>(d: AgentReconcilerDeps, call: Promise<T>, ms: number, what: string): Promise<T> {
  const timedOut = Symbol('timedOut');
  const answer = await withTimeout<T | typeof timedOut>(d.clock, call, ms, timedOut);
  if (answer === timedOut) throw new Error(`${what}: no answer from the apiserver within ${ms} ms`);
  return answer as T;
}

/** How long an API call for `item` may take: for a running instance, not much past its fencing deadline. */
function apiBudgetMs(d: AgentReconcilerDeps, item: WorkItem): number {
  if (item.spec.type !== 'InstanceRuntime' || item.spec.instance?.runState === 'Stopped') return API_TIMEOUT_MS;
  const left = d.fencing.msUntilUnsafe(keyOf(item), fenceSpec(item, d.settings.dataDir));
  return left > 0 ? Math.min(API_TIMEOUT_MS, Math.max(500, left)) : API_TIMEOUT_MS;
}

async function writeStatus(d: AgentReconcilerDeps, item: WorkItem, u: StatusUpdate): Promise<WorkItem> {
  const status = workItemStatus(item, u, d.clock.now());
  if (JSON.stringify(withoutTimes(item.status)) === JSON.stringify(withoutTimes(status))) return item;
  const written = await bounded(d, d.client.replaceStatus('WorkItem', { ...item, status }), apiBudgetMs(d, item), 'writing WorkItem status');
  d.store.put(written);
  return written;
}

/** Writes status, logging instead of throwing: used before local work that must not wait for the apiserver. */
async function bestEffortStatus(d: AgentReconcilerDeps, item: WorkItem, u: StatusUpdate): Promise<WorkItem | undefined> {
  try {
    return await writeStatus(d, item, u);
  } catch (err) {
    d.log.info('could not write WorkItem status (will retry)', { workItem: `${item.metadata.namespace}/${item.metadata.name}`, error: String(err) });
    return undefined;
  }
}

/** Status without fields that change on every write, to skip writes that say nothing new. */
function withoutTimes(s: WorkItem['status']): unknown {
  if (!s) return s;
  const { conditions, ...rest } = s;
  return { ...rest, conditions: conditions?.map(({ lastTransitionTime: _t, ...c }) => c) };
}

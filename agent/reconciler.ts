/**
 * Makes one WorkItem true on this node: the thin executor of plan.ts.
 * Level-triggered and idempotent: observe (in-process, cheap) → plan the
 * next step → carry it out (ensure and remove in an operation worker,
 * claims through the API) → write status → plan again.
 *
 * Instances run only inside the node's term and under their claim
 * (docs/fencing.md): before starting one the agent claims
 * <cluster>/instance-<name>; when the node lease is not renewed within its
 * safe window every instance is stopped (Fenced) and starts again, claimed
 * anew, once a new term begins. Status writes that fail (apiserver away)
 * are retried, but never block the local work: an instance that crashes
 * while the control plane is down is still restarted per policy.
 */
import type { Logger } from 'winston';
import type { CairnClient } from '../api/client/cairn-client.js';
import { AGENT_FINALIZER, nodeLeaseName } from '../api/names.js';
import type { WorkItem, WorkItemError } from '../api/workitem.js';
import { withTimeout, type Clock } from '../runtime/clock.js';
import type { Result } from '../runtime/controller.js';
import { graceMs, type DriverSettings, type Observation } from './drivers/driver.js';
import { driverFor } from './drivers/registry.js';
import { claimNameOf, type ClaimResult, type InstanceClaims } from './fencing/claims.js';
import { FENCE_STOP_GRACE_MS, type NodeFence } from './fencing/node-fence.js';
import { classify, isRetryable } from './operations/errors.js';
import type { OperationResult, OperationRunner } from './operations/runner.js';
import type { LocalStore } from './local-store.js';
import type { AgentMetrics } from './metrics.js';
import { planWorkItem, wantsRunning } from './plan.js';
import { workItemStatus, type StatusUpdate } from './status.js';

/** How often a converged instance is fully reconciled anyway (a dead process is noticed sooner by the liveness sweep). */
export const LIVENESS_INTERVAL_MS = 60_000;
const LEASE_RETRY_MS = 2_000;
/** Most steps one reconcile plans (claim, then converge, is two). */
const MAX_PASSES = 4;
/** How often a migration target asks for the claim the source is about to hand over (this is guest downtime). */
const MIGRATION_LEASE_POLL_MS = 50;
/** An operation still running after this long is reported InProgress. */
const PROGRESS_AFTER_MS = 1_000;
/** Retry delay of a status write that failed after the local work was done. */
const STATUS_RETRY_MS = 2_000;
/** Longest wait for one API call of a reconcile. */
const API_TIMEOUT_MS = 5_000;

/** What the reconciler reads and writes through. */
export interface AgentReconcilerDeps {
  client: CairnClient;
  runner: OperationRunner;
  fence: NodeFence;
  claims: InstanceClaims;
  store: LocalStore;
  /** The WorkItem as the informer has it (undefined while offline and never synced). */
  cached(key: string): WorkItem | undefined;
  /** Whether the informer has synced (the cache, not the store, is the truth). */
  synced(): boolean;
  settings: DriverSettings;
  clock: Clock;
  log: Logger;
  metrics: AgentMetrics;
  /** The operation running per WorkItem; a fence stop is not cancelled by changes of its WorkItem. */
  operations: Map<string, RunningOperation>;
}

/** An operation in flight for one WorkItem. */
export interface RunningOperation {
  generation?: number;
  abort: AbortController;
  /** A fence stop: nothing cancels it. */
  fence?: boolean;
  /** An ensure of an instance to run, which may start or resume its guest: it needs the term it was planned in. */
  mayRunGuest?: boolean;
}

/**
 * The node's term ended: cancels the operations that may start or resume a guest. They were planned in
 * that term, and one still waiting (on a gluster mount, say) would otherwise launch the guest later, in a
 * new term the node took after the controller had failed it over, beside the copy on the new node.
 */
export function cancelGuestOperations(operations: ReadonlyMap<string, RunningOperation>): void {
  for (const op of operations.values()) if (op.mayRunGuest) op.abort.abort("the node's term ended");
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

/** Reconciles the WorkItem with key namespace/name: plans the next step (plan.ts), carries it out, plans again. */
export async function reconcileWorkItem(d: AgentReconcilerDeps, key: string): Promise<Result | void> {
  const stored = d.store.get(key);
  const cached = latestOf(d.cached(key), stored);
  const item = d.synced() ? cached : (cached ?? stored);
  if (item) d.store.put(item);
  let heldBy: string | undefined;
  for (let pass = 0; pass < MAX_PASSES; pass++) {
    const obs = item && !item.metadata.deletionTimestamp ? await observe(d, item) : undefined;
    if (obs === REPORTED) return;
    const term = d.fence.term;
    const step = planWorkItem({ item, obs, fence: { term, claimed: d.claims.holds(key, term), heldBy } });
    switch (step.type) {
      case 'forget':
        return forgetGone(d, key);
      case 'finalize':
        return finalize(d, key, item!);
      case 'claim': {
        const claim = await claimInstance(d, key, item!, term!, obs!);
        if (claim === 'retry') return { requeueAfterMs: LEASE_RETRY_MS };
        heldBy = claim.ok ? undefined : (claim.holder ?? 'another node');
        continue;
      }
      case 'stopLocal':
        return stopAndReport(d, key, item!, step.reason, heldBy);
      case 'wait':
        return waitAndReport(d, item!, step.reason, obs!, heldBy);
      case 'handOver': {
        // Then report (the controller waits for the source's Completed) from what the node shows now.
        await handOver(d, key, item!, obs!, step.to);
        const after = await observe(d, item!);
        return after === REPORTED ? undefined : converge(d, key, item!, after);
      }
      case 'converge':
        return converge(d, key, item!, obs!);
    }
  }
  throw new RetryLater(`WorkItem ${key}: no stable plan after ${MAX_PASSES} steps`);
}

/** observe() found a spec no retry can serve, and wrote it as Failed. */
const REPORTED = Symbol('reported');

/**
 * What the driver sees for `item`. An error is retried with backoff, except one only a new spec can
 * fix (a brick path outside the data dir, an unknown driver): that is written as Failed, and the
 * WorkItem waits for its next change.
 */
async function observe(d: AgentReconcilerDeps, item: WorkItem): Promise<Observation | typeof REPORTED> {
  try {
    return await driverFor(item).observe(item, env(d));
  } catch (err) {
    const e = classify(err, { doing: 'observing', node: item.spec.nodeName });
    if (isRetryable(e.reason)) throw new RetryLater(e.message);
    await writeStatus(d, item, { phase: 'Failed', message: e.message, error: e.toWorkItemError(), attempt: true });
    return REPORTED;
  }
}

/** Claims the instance in this term; 'retry' when the apiserver did not answer (a running copy keeps running). */
async function claimInstance(d: AgentReconcilerDeps, key: string, item: WorkItem, term: string, obs: Observation): Promise<ClaimResult | 'retry'> {
  const leaseName = claimNameOf(item);
  try {
    const claim = await bounded(d, d.claims.claim(key, leaseName, term), apiBudgetMs(d), `claiming ${leaseName}`);
    // Lost to this node's own earlier write (an attempt cut short by its time budget, still under way):
    // the claim is ours or about to be, never a reason to stop the instance as held elsewhere.
    if (!claim.ok && claim.holder === d.settings.nodeName) return 'retry';
    return claim;
  } catch (err) {
    d.log.warn('cannot claim the instance', { workItem: key, lease: leaseName, error: String(err) });
    await bestEffortStatus(d, item, { phase: 'InProgress', message: `waiting to claim ${leaseName} (${String(err)})`, observation: obs });
    return 'retry';
  }
}

/** Stops a local copy that must not run here now (Fenced: the node lost its term; LeaseHeld: another node holds the claim). */
async function stopAndReport(d: AgentReconcilerDeps, key: string, item: WorkItem, reason: 'Fenced' | 'LeaseHeld', holder?: string): Promise<Result> {
  const obs = await stopLocally(d, key, item, reason);
  const error = fenceError(item, reason, holder);
  await bestEffortStatus(d, item, { phase: 'Failed', message: error.message, error, observation: { ...obs, instance: { ...obs.instance, state: 'Fenced' } } });
  return { requeueAfterMs: LEASE_RETRY_MS };
}

/** Nothing runs here and nothing may start yet: say why; look again soon (a new term also wakes every WorkItem). */
async function waitAndReport(d: AgentReconcilerDeps, item: WorkItem, reason: 'Fenced' | 'LeaseHeld' | 'AwaitingHandOver', obs: Observation, holder?: string): Promise<Result> {
  if (reason === 'AwaitingHandOver') {
    const peer = item.spec.instance?.migration?.peerNodeName ?? 'the source';
    await bestEffortStatus(d, item, { phase: 'InProgress', message: `incoming migration complete; waiting for node ${peer} to hand over the claim ${claimNameOf(item)} (held by ${holder ?? 'nobody'})`, observation: obs });
    return { requeueAfterMs: MIGRATION_LEASE_POLL_MS };
  }
  const error = fenceError(item, reason, holder);
  await bestEffortStatus(d, item, { phase: 'Failed', message: error.message, error, observation: { ...obs, instance: { ...obs.instance, state: reason === 'Fenced' ? 'Fenced' : obs.instance?.state } } });
  return { requeueAfterMs: LEASE_RETRY_MS };
}

function fenceError(item: WorkItem, reason: 'Fenced' | 'LeaseHeld', holder?: string): WorkItemError {
  const node = item.spec.nodeName;
  if (reason === 'LeaseHeld') {
    return {
      reason,
      message: `the claim ${claimNameOf(item)} is held by node ${holder}; the instance may still run there`,
      hint: `it starts here once node ${holder} stops it and gives the claim up, or the controller fails node ${holder} over`,
    };
  }
  return {
    reason,
    message: `not running on node ${node}: the node lease ${nodeLeaseName(node)} was not renewed within its safe window (apiserver unreachable?)`,
    hint: `it starts again by itself once the agent renews the node lease; if node ${node} was failed over meanwhile, the instance runs on another node`,
  };
}

/**
 * A migration source whose transfer completed (qemu paused the guest here for good) hands the claim
 * to the target. Without disks the claim goes first (the target resumes while this side quits qemu: a
 * shorter switch-over); with disks the mirrors must complete first, because the target's resume ends
 * its NBD exports.
 */
async function handOver(d: AgentReconcilerDeps, key: string, item: WorkItem, obs: Observation, peer: string): Promise<void> {
  const finish = obs.action === 'finishMigration';
  const disks = (item.spec.instance?.volumes?.length ?? 0) > 0;
  if (finish && disks) await runStep(d, key, item, 'finishMigration');
  const leaseName = claimNameOf(item);
  const outcome = await bounded(d, d.claims.handOver(key, leaseName, peer), API_TIMEOUT_MS, 'handing the claim over').catch((err: unknown) => {
    throw new RetryLater(`cannot hand the claim ${leaseName} to node ${peer}: ${String(err)}`);
  });
  if (outcome === 'not held') d.log.warn('the claim to hand over is gone or held by another node: nothing to give; the migration ends here', { workItem: key, claim: leaseName, peer });
  if (finish && !disks) await runStep(d, key, item, 'finishMigration');
}

/**
 * A WorkItem deleted while we were away (or released by the controller after failover): undo it
 * locally, then give up a claim this node still holds. The controller deleted the claim when it
 * failed this node over, but a node back in a new term may have claimed again before it saw its
 * WorkItem gone; kept, that claim would hold the instance off the node it moved to for as long as
 * this node lives.
 */
async function forgetGone(d: AgentReconcilerDeps, key: string): Promise<void> {
  const old = d.store.get(key);
  if (old) {
    const res = await run(d, key, old, 'remove');
    if (!res.ok) throw new RetryLater(res.error?.message);
  }
  // By name when the local copy says which: a claim this node made before a restart that outlasted its
  // term is not in memory, and would otherwise be kept (a release leaves another node's claim alone).
  const release = old?.spec.type === 'InstanceRuntime' ? d.claims.release(key, claimNameOf(old)) : d.claims.releaseIfClaimed(key);
  await bounded(d, release, API_TIMEOUT_MS, 'giving the claim up').catch((err: unknown) => {
    throw new RetryLater(String(err));
  });
  d.store.delete(key);
}

/**
 * Stops the local copy of an instance (runState Stopped through the driver); returns the observation
 * after. A fence stop gives the instance at most FENCE_STOP_GRACE_MS: the lease does not wait longer.
 */
async function stopLocally(d: AgentReconcilerDeps, key: string, item: WorkItem, reason: 'Fenced' | 'LeaseHeld') {
  const grace = Math.min(graceMs(item), FENCE_STOP_GRACE_MS) / 1000;
  // Without its migration: a source mid-transfer is stopped, not asked to cancel (and resume) the transfer.
  const stopped: WorkItem = { ...item, spec: { ...item.spec, instance: { ...item.spec.instance!, runState: 'Stopped', terminationGracePeriodSeconds: grace, migration: undefined } } };
  const obs = await driverFor(stopped).observe(stopped, env(d));
  if (obs.converged) return obs;
  const res = await run(d, key, stopped, 'ensure', obs.action, { fence: true });
  if (!res.ok) throw new RetryLater(res.error?.message);
  d.log.warn('stopped the local copy of an instance', { workItem: key, reason });
  return res.observation ?? obs;
}

function env(d: AgentReconcilerDeps) {
  return { ...d.settings, now: () => d.clock.now() };
}

/**
 * Lets the driver converge and reports. Status writes after the node is right are best effort, retried
 * on a short fixed delay: a thrown error would retry with the queue's exponential backoff, which
 * outgrows the fencing window while the apiserver is away.
 */
async function converge(d: AgentReconcilerDeps, key: string, item: WorkItem, obs: Observation): Promise<Result | void> {
  if (obs.converged) {
    const written = await bestEffortStatus(d, item, { phase: 'Done', message: obs.message, observation: obs });
    return { requeueAfterMs: nextLook(item, obs.requeueAfterMs, !written) };
  }
  // A retry of a failed attempt keeps showing Failed (and its lastError) until it succeeds, rather than
  // flickering through InProgress on every backoff; it still counts as an attempt. InProgress is written
  // only for an operation still running after PROGRESS_AFTER_MS: a quick start costs one status write, not two.
  const retrying = item.status?.phase === 'Failed' && item.status.observedGeneration === item.metadata.generation;
  const operation = run(d, key, item, 'ensure', obs.action);
  const inProgress = retrying ? undefined : await progressIfSlow(d, item, obs, operation);
  const res = await operation;
  const latest = inProgress ?? item;
  if (!res.ok) {
    await writeStatus(d, latest, { phase: 'Failed', message: res.error!.message, result: res, error: res.error, attempt: !inProgress });
    throw new RetryLater(res.error!.message);
  }
  const written = await bestEffortStatus(d, latest, { phase: 'Done', message: res.observation?.message ?? 'done', result: res });
  return { requeueAfterMs: nextLook(item, res.observation?.requeueAfterMs, !written) };
}

/** Writes InProgress (one more attempt) if `operation` is still running after PROGRESS_AFTER_MS; resolves the item written, if any. */
async function progressIfSlow(d: AgentReconcilerDeps, item: WorkItem, obs: Observation, operation: Promise<OperationResult>): Promise<WorkItem | undefined> {
  const slow = await withTimeout(d.clock, operation.then(() => false), PROGRESS_AFTER_MS, true);
  return slow ? bestEffortStatus(d, item, { phase: 'InProgress', message: obs.message, observation: obs, attempt: true }) : undefined;
}

/**
 * When to look at a converged item again: liveness checks for instances, the driver's wish, a status
 * write to retry. (The end of the node's term wakes every WorkItem by itself.)
 */
function nextLook(item: WorkItem, driverMs: number | undefined, statusPending = false): number {
  const liveness = item.spec.type === 'InstanceRuntime' ? LIVENESS_INTERVAL_MS : 10 * LIVENESS_INTERVAL_MS;
  return Math.min(liveness, driverMs ?? Infinity, statusPending ? STATUS_RETRY_MS : Infinity);
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
      // A source that completed a migration gives the claim to the target, never back to nobody. The
      // finalizer goes only once the claim is given up: the next node must never wait on it forever.
      const leaseName = claimNameOf(item);
      const giveUp: Promise<unknown> = migratedTo ? d.claims.handOver(key, leaseName, migratedTo) : d.claims.release(key, leaseName);
      await bounded(d, giveUp, API_TIMEOUT_MS, `giving the claim ${leaseName} up`).catch((err: unknown) => {
        throw new RetryLater(String(err));
      });
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

async function run(d: AgentReconcilerDeps, key: string, item: WorkItem, verb: 'ensure' | 'remove', action?: Parameters<OperationRunner['run']>[0]['action'], opts: { fence?: boolean } = {}): Promise<OperationResult> {
  // Before the node changes, make the WorkItem, the term and the claims durable: an agent killed right
  // after starting an instance must find it in its store (workitems/) to re-adopt and fence it while offline.
  d.store.recordFence(d.fence);
  d.store.flush();
  const abort = new AbortController();
  d.operations.set(key, { generation: item.metadata.generation, abort, fence: opts.fence, mayRunGuest: verb === 'ensure' && !opts.fence && wantsRunning(item) });
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
function apiBudgetMs(d: AgentReconcilerDeps, item?: WorkItem): number {
  if (item && (item.spec.type !== 'InstanceRuntime' || item.spec.instance?.runState === 'Stopped')) return API_TIMEOUT_MS;
  const left = d.fence.msUntilUnsafe();
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

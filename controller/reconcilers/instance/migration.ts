/**
 * The controller's side of the live migration of a qemu Instance
 * (docs/migration.md, steps 1, 3 and 7 and "Failure and rollback"), as a
 * pure function of what the cache shows. Nothing is remembered between
 * calls: the migration in flight is read back from the target's WorkItem
 * (its spec.instance.migration, role Target) or from status.migration, so
 * a controller that crashed at any step resumes, and one reading a stale
 * cache adopts the id of a WorkItem it finds rather than starting another.
 *
 * Two WorkItems of the instance are legitimate while it is in flight: the
 * source's (W_S) and the target's (W_T). Once the source reports the
 * hand-over (or the target reports the guest resumed) there is no way
 * back: the migration completes on the target whatever the source does.
 * Before that, any failure rolls back to the source.
 *
 * The result is either a whole plan (in flight) or "settled": the status
 * the migration leaves behind and the WorkItem that is now the instance's
 * ordinary one, which planInstance then plans as any other.
 */
import { formatTime, getCondition, setCondition } from '../../../api/conditions.js';
import type { Instance, InstanceMigrationStatus, InstanceStatus, MigrationPhase, MigrationProgress } from '../../../api/instance.js';
import type { WorkItem, WorkItemMigrationSpec, WorkItemMigrationStatus } from '../../../api/workitem.js';
import { migrationCarriedOut } from '../../scheduler/pin.js';
import type { Action, Plan } from '../actions.js';
import type { InstanceObserved } from './observed.js';
import { instanceStatus } from './status.js';
import { desiredInstanceWorkItem, withMigrationSpec } from './workitem-spec.js';

/** How long after its own timeout the controller gives up on a migration still in flight. */
export const MIGRATION_GRACE_MS = 30_000;
/**
 * Longest wait between two looks at a migration in flight: a target node turning unreachable does not
 * wake the Instance up (nodes enqueue the instances whose status.nodeName they are, the source).
 */
export const MIGRATION_POLL_MS = 10_000;
/** Tuning of a migration when spec.qemu.migration leaves it unset (the Instance CRD's defaults). */
const MIGRATION_DEFAULTS = { maxDowntimeMs: 300, bandwidthMiBps: 0, timeoutSeconds: 300 };

/** Why a migration failed (status.migration.reason and the MigrationFailed condition's reason). */
export type MigrationFailureReason = 'TargetFailed' | 'SourceFailed' | 'Timeout' | 'TargetUnschedulable' | 'Cancelled';

/** What the migration decides: the whole plan while in flight, or how it leaves the instance for the ordinary planning. */
export type LiveMigrationStep =
  | { kind: 'inFlight'; plan: Plan<InstanceStatus> }
  | { kind: 'settled'; current: WorkItem | undefined; status: InstanceStatus; actions: Action[] };

/** A migration that ended (Completed or Failed). */
type Settled = Extract<LiveMigrationStep, { kind: 'settled' }>;

const IN_FLIGHT: ReadonlySet<MigrationPhase> = new Set(['PreparingTarget', 'MirroringStorage', 'Transferring', 'SwitchingOver']);

/** A migration in flight as the cache shows it. */
interface Flight {
  id: string;
  /** Cold: a move (stop here, start there) refused before it stopped anything; only ever settled Failed. */
  mode?: 'Live' | 'Cold';
  source: string;
  target: string;
  /** The active WorkItems on the source and on the target. */
  wS?: WorkItem;
  wT?: WorkItem;
  /** What each side reports for this id (from any of its WorkItems, even one being deleted). */
  sourceReport?: WorkItemMigrationStatus;
  targetReport?: WorkItemMigrationStatus;
  /** A WorkItem on the target being deleted while no active one is there. */
  deletedTarget?: WorkItem;
  startedAtMs: number;
  timeoutSeconds: number;
  deadlineMs: number;
}

interface Failure {
  reason: MigrationFailureReason;
  detail: string;
}

/** The live-migration part of planInstance; undefined when no live migration is or should be in flight. */
export function planLiveMigration(o: InstanceObserved, active: readonly WorkItem[]): LiveMigrationStep | undefined {
  const flight = findFlight(o, active);
  if (!flight) return planStart(o, active);
  const recorded = o.instance.status?.migration;
  if (recorded?.id === flight.id && (recorded.phase === 'Completed' || recorded.phase === 'Failed')) {
    // The outcome is written but a WorkItem still says otherwise (a write that failed half-way): the ordinary planning
    // of the surviving WorkItem strips its migration spec and deletes the other one.
    const current = recorded.phase === 'Completed' ? flight.wT : flight.wS;
    return { kind: 'settled', current, status: o.instance.status!, actions: [] };
  }
  if (handedOver(o, flight)) return planSwitchOver(o, flight, active);
  const failure = failureOf(o, flight);
  if (failure) return settleFailed(o, flight, failure, flight.wS);
  return planProgress(o, flight, active);
}

/**
 * A cold move already stopped on its source whose target turned out unable to take it (it filled up, or
 * went away, after the check in planStart): the move ends Failed, so that the pin is dropped and the
 * instance is placed again wherever it fits, instead of waiting stopped for the target. `status` is the
 * unplaced status it adds to.
 */
export function settleRefusedColdMove(o: InstanceObserved, status: InstanceStatus, why: string): Settled | undefined {
  const target = o.instance.spec.migrateTo;
  if (!target || migrationCarriedOut(o.instance, target)) return undefined;
  const source = o.instance.status?.nodeName ?? 'none';
  const f: Flight = { id: flightId(o, target), mode: 'Cold', source, target, startedAtMs: o.now, timeoutSeconds: 0, deadlineMs: o.now };
  return refuseTarget({ ...o, instance: { ...o.instance, status } }, f, why, undefined);
}

/** The id of a move to `target` asked for by the Instance's current generation. */
function flightId(o: InstanceObserved, target: string): string {
  return `${target}-g${o.instance.metadata.generation ?? 0}`;
}

/** Ends move `f` Failed with TargetUnschedulable: its target cannot take the instance, for `why`. */
function refuseTarget(o: InstanceObserved, f: Flight, why: string, current: WorkItem | undefined): Settled {
  return settleFailed(o, f, { reason: 'TargetUnschedulable', detail: `node ${f.target} cannot take it: ${why}` }, current);
}

/** Whether a Live migration applies to this instance at all (qemu, mode Live). */
function migratesLive(instance: Instance): boolean {
  return instance.spec.driver === 'qemu' && (instance.spec.qemu?.migration?.mode ?? 'Live') === 'Live';
}

function tuning(instance: Instance): typeof MIGRATION_DEFAULTS {
  const m = instance.spec.qemu?.migration;
  return {
    maxDowntimeMs: m?.maxDowntimeMs ?? MIGRATION_DEFAULTS.maxDowntimeMs,
    bandwidthMiBps: m?.bandwidthMiBps ?? MIGRATION_DEFAULTS.bandwidthMiBps,
    timeoutSeconds: m?.timeoutSeconds ?? MIGRATION_DEFAULTS.timeoutSeconds,
  };
}

/** The migration in flight: the target's WorkItem names it; else status.migration records one in flight. */
function findFlight(o: InstanceObserved, active: readonly WorkItem[]): Flight | undefined {
  const targetSide = active.find((w) => w.spec.instance?.migration?.role === 'Target');
  if (targetSide) {
    const m = targetSide.spec.instance!.migration!;
    return flight(o, active, m.id, m.peerNodeName, targetSide.spec.nodeName);
  }
  const m = o.instance.status?.migration;
  if (m?.mode !== 'Live' || !m.phase || !IN_FLIGHT.has(m.phase) || !m.id || !m.sourceNode || !m.targetNode) return undefined;
  return flight(o, active, m.id, m.sourceNode, m.targetNode);
}

function flight(o: InstanceObserved, active: readonly WorkItem[], id: string, source: string, target: string): Flight {
  const on = (node: string) => o.workItems.filter((w) => w.spec.nodeName === node);
  const report = (node: string) => on(node).map((w) => w.status?.migration).find((m) => m?.id === id);
  const wT = active.find((w) => w.spec.nodeName === target);
  const recorded = o.instance.status?.migration;
  const started = recorded?.id === id && recorded.startedAt ? Date.parse(recorded.startedAt) : Date.parse(wT?.metadata.creationTimestamp ?? '');
  const startedAtMs = Number.isNaN(started) ? o.now : started;
  // The timeout the target was given, even if spec.qemu.migration changed since.
  const timeoutSeconds = wT?.spec.instance?.migration?.timeoutSeconds ?? tuning(o.instance).timeoutSeconds;
  return {
    id,
    source,
    target,
    wS: active.find((w) => w.spec.nodeName === source),
    wT,
    sourceReport: report(source),
    targetReport: report(target),
    deletedTarget: wT ? undefined : on(target).find((w) => w.metadata.deletionTimestamp),
    startedAtMs,
    timeoutSeconds,
    deadlineMs: startedAtMs + timeoutSeconds * 1000 + MIGRATION_GRACE_MS,
  };
}

/** Step 1: a pending spec.migrateTo of a running qemu instance creates the target's WorkItem; any move to an unfit target ends Failed first. */
function planStart(o: InstanceObserved, active: readonly WorkItem[]): LiveMigrationStep | undefined {
  const target = o.instance.spec.migrateTo;
  const w = active.length === 1 ? active[0]! : undefined;
  if (!target || !w || migrationCarriedOut(o.instance, target)) return undefined;
  const source = w.spec.nodeName;
  if (source === target) return undefined;
  const live = migratesLive(o.instance) && runningAndReady(w, false) && !o.node(source).unreachable && !o.node(source).draining;
  const { timeoutSeconds } = tuning(o.instance);
  const f: Flight = { id: flightId(o, target), mode: live ? 'Live' : 'Cold', source, target, wS: w, startedAtMs: o.now, timeoutSeconds, deadlineMs: o.now + timeoutSeconds * 1000 + MIGRATION_GRACE_MS };
  // Checked before anything stops, a cold move's too: a typo in --to must not leave the instance stopped and unplaceable.
  const refused = targetRefusal(o, target);
  if (refused) return refuseTarget(o, f, refused, w);
  if (!live) return undefined; // a cold move: planPlaced stops it here, and it is placed on the target
  const leftover = o.workItems.find((x) => x.spec.nodeName === target);
  if (leftover) {
    // Same name as the WorkItem to create: wait until it is gone (its deletion wakes us up).
    const message = `waiting for WorkItem ${leftover.metadata.name} on node ${target} to be removed before migrating there`;
    return inFlight(o, f, [], { phase: 'Pending', message });
  }
  const spec: WorkItemMigrationSpec = { id: f.id, role: 'Target', peerNodeName: source, ...tuning(o.instance) };
  const workItem = withMigrationSpec(desiredInstanceWorkItem(o.instance, o.cluster, o.volumes, target), spec);
  const actions: Action[] = [
    { type: 'createWorkItem', workItem },
    { type: 'event', eventType: 'Normal', reason: 'Migrating', message: `migrating live from node ${source} to node ${target} (migration ${f.id}): preparing the target` },
  ];
  return inFlight(o, f, actions, { phase: 'PreparingTarget' });
}

/** Why the target cannot receive the instance, or undefined when it can. */
function targetRefusal(o: InstanceObserved, target: string): string | undefined {
  const node = o.node(target);
  if (!node.exists) return 'it is not registered';
  if (node.unreachable) return 'it is unreachable (its heartbeat lease expired)';
  if (node.draining) return 'it is draining';
  const volumes = desiredInstanceWorkItem(o.instance, o.cluster, o.volumes, target).spec.instance?.volumes ?? [];
  const missing = volumes.find((v) => v.replicaIndex === undefined && !v.gluster);
  if (missing) return `it holds no replica of volume ${missing.volumeName}`;
  return o.targetRefusal?.(target);
}

/** Steps 2-6 under way: hand the target's address to the source, mirror the source's progress. */
function planProgress(o: InstanceObserved, f: Flight, active: readonly WorkItem[]): LiveMigrationStep {
  const actions = deleteOthers(active, f);
  const wS = f.wS!;
  const wanted = sourceSpec(o, f);
  if (wanted && JSON.stringify(wanted) !== JSON.stringify(wS.spec.instance?.migration)) {
    actions.push({ type: 'updateWorkItem', workItem: withMigrationSpec(wS, wanted) });
  }
  const s = f.sourceReport?.phase;
  const phase: MigrationPhase = s === 'MirroringStorage' || s === 'Transferring' ? s : 'PreparingTarget';
  return inFlight(o, f, actions, { phase });
}

/** Step 3: the source's side, once the target listens; kept as written while the target reports nothing newer. */
function sourceSpec(o: InstanceObserved, f: Flight): WorkItemMigrationSpec | undefined {
  const t = f.targetReport;
  if (t?.phase !== 'Listening' || !t.port || !t.address) {
    const current = f.wS?.spec.instance?.migration;
    return current?.id === f.id && current.role === 'Source' ? current : undefined;
  }
  return {
    id: f.id,
    role: 'Source',
    peerNodeName: f.target,
    targetAddress: t.address,
    targetPort: t.port,
    ...(t.nbdPort ? { targetNbdPort: t.nbdPort } : {}),
    ...tuning(o.instance),
  };
}

/** Past the point of no return: the source handed the guest over (or the target already resumed it). */
function handedOver(o: InstanceObserved, f: Flight): boolean {
  const recorded = o.instance.status?.migration;
  if (recorded?.id === f.id && recorded.phase === 'SwitchingOver') return true;
  if (f.sourceReport?.phase === 'Completed' || f.targetReport?.phase === 'Completed') return true;
  // The claim is the target's: the source gave it (the hand-over comes before its Completed report), so a cancel,
  // a timeout or the source's loss now would stop the guest that runs on the target.
  if (o.fencing.holder === f.target) return true;
  // An ordinary WorkItem on the target while status records the migration in flight: step 7 was half written.
  return !!f.wT && !f.wT.spec.instance?.migration;
}

/** Step 7: the source's WorkItem goes, the target's becomes the ordinary one; Completed once it runs and is ready. */
function planSwitchOver(o: InstanceObserved, f: Flight, active: readonly WorkItem[]): LiveMigrationStep {
  const figures = migrationFigures(o, f);
  if (!f.wT) return settleFailed(o, f, { reason: 'TargetFailed', detail: `the target's WorkItem on node ${f.target} is gone after the hand-over` }, f.wS, figures);
  if (f.targetReport?.phase === 'Failed') {
    return settleFailed(o, f, { reason: 'TargetFailed', detail: `node ${f.target} could not resume the guest after the hand-over: ${f.targetReport.message ?? 'no message'}` }, f.wT, figures);
  }
  if (!f.wS && !f.wT.spec.instance?.migration && runningAndReady(f.wT, true)) return settleCompleted(o, f, figures, releaseSource(o, f));
  if (o.now > f.deadlineMs) {
    return settleFailed(o, f, { reason: 'Timeout', detail: `node ${f.target} did not report the guest running and ready in time after the hand-over; it stays there` }, f.wT, figures);
  }
  const actions = [...deleteOthers(active, f), ...releaseSource(o, f)];
  // Keep the source's WorkItem until both sides reported their times (the source hands the lease over just
  // before its report; the target resumes once it holds it): the downtime needs both, and this status keeps it.
  const bothReported = f.sourceReport?.phase === 'Completed' && f.targetReport?.finishedAt !== undefined;
  const sourceReported = bothReported || o.node(f.source).unreachable;
  if (f.wS && sourceReported) actions.push({ type: 'deleteWorkItem', name: f.wS.metadata.name!, uid: f.wS.metadata.uid });
  if (f.wT.spec.instance?.migration) actions.push({ type: 'updateWorkItem', workItem: withMigrationSpec(f.wT, undefined) });
  return inFlight(o, f, actions, { phase: 'SwitchingOver', ...figures });
}

/**
 * A source WorkItem being deleted on a lost node is released at once when the target holds the
 * fencing lease: the source handed it over, so its guest cannot run (its agent will never confirm).
 */
function releaseSource(o: InstanceObserved, f: Flight): Action[] {
  if (!o.node(f.source).lost || !o.fencing.held || o.fencing.holder !== f.target) return [];
  return o.workItems
    .filter((w) => w.spec.nodeName === f.source && w.metadata.deletionTimestamp)
    .map((w) => ({ type: 'releaseWorkItem' as const, name: w.metadata.name!, uid: w.metadata.uid }));
}

/** The first cause found to give up before the hand-over, or undefined. */
function failureOf(o: InstanceObserved, f: Flight): Failure | undefined {
  if (o.node(f.source).unreachable) return { reason: 'SourceFailed', detail: `node ${f.source} (the source) stopped renewing its heartbeat lease` };
  if (!f.wS) return { reason: 'SourceFailed', detail: `the source's WorkItem on node ${f.source} is gone` };
  if (o.node(f.target).unreachable) return { reason: 'TargetFailed', detail: `node ${f.target} (the target) stopped renewing its heartbeat lease` };
  if (f.deletedTarget) return { reason: 'TargetFailed', detail: `the target's WorkItem ${f.deletedTarget.metadata.name} was deleted` };
  const reported = reportedFailure(o, f);
  if (reported) return reported;
  const migrateTo = o.instance.spec.migrateTo;
  if (migrateTo !== f.target) return { reason: 'Cancelled', detail: migrateTo ? `spec.migrateTo changed to ${migrateTo}` : 'spec.migrateTo was cleared' };
  if (o.now > f.deadlineMs) return { reason: 'Timeout', detail: `not finished ${Math.round((o.now - f.startedAtMs) / 1000)}s after it started (its timeoutSeconds is ${f.timeoutSeconds})` };
  return undefined;
}

/** A failure an agent reported; when both sides did, the one that failed first caused the other. */
function reportedFailure(o: InstanceObserved, f: Flight): Failure | undefined {
  const lastError = f.wT?.status?.phase === 'Failed' ? f.wT.status.lastError : undefined;
  const t = f.targetReport?.phase === 'Failed' || f.targetReport?.phase === 'Cancelled' ? f.targetReport : undefined;
  const s = f.sourceReport?.phase === 'Failed' || f.sourceReport?.phase === 'Cancelled' ? f.sourceReport : undefined;
  const target: Failure | undefined =
    t || lastError ? { reason: 'TargetFailed', detail: `on node ${f.target}: ${t?.message ?? lastError?.message ?? 'the target failed'}` } : undefined;
  const source = s ? sourceFailure(o, f, s) : undefined;
  if (!target || !source) return target ?? source;
  return Date.parse(s!.finishedAt ?? '') < Date.parse(t?.finishedAt ?? '') ? source : target;
}

function sourceFailure(o: InstanceObserved, f: Flight, s: WorkItemMigrationStatus): Failure {
  const detail = `on node ${f.source}: ${s.message ?? `the source reports ${s.phase}`}`;
  // The source agent cancels a transfer that outlives timeoutSeconds; the controller started the clock first.
  if (o.now - f.startedAtMs >= f.timeoutSeconds * 1000) return { reason: 'Timeout', detail };
  return { reason: s.phase === 'Cancelled' ? 'Cancelled' : 'SourceFailed', detail };
}

/** Everything but the two sides of the migration is deleted, as planInstance deletes extra WorkItems. */
function deleteOthers(active: readonly WorkItem[], f: Flight): Action[] {
  return active.filter((w) => w !== f.wS && w !== f.wT).map((w) => ({ type: 'deleteWorkItem' as const, name: w.metadata.name!, uid: w.metadata.uid }));
}

/** Whether a WorkItem reports its instance running and ready (for its current generation when `current`). */
function runningAndReady(w: WorkItem, current: boolean): boolean {
  const s = w.status;
  if (s?.instance?.state !== 'Running' || s.instance.ready === false) return false;
  return !current || s.observedGeneration === w.metadata.generation;
}

/** Transfer figures: bytes from the source; downtime and total time once both sides finished (else what is known). */
function migrationFigures(o: InstanceObserved, f: Flight): MigrationProgress {
  const prev = o.instance.status?.migration?.id === f.id ? o.instance.status.migration : undefined;
  const s = f.sourceReport;
  const t = f.targetReport;
  const ms = (time: string | undefined) => (time ? Date.parse(time) : NaN);
  const switchOverMs = ms(t?.finishedAt) - ms(s?.finishedAt);
  const total = ms(t?.finishedAt) - ms(s?.startedAt);
  const downtimeMs = s?.downtimeMs !== undefined ? s.downtimeMs + (Number.isNaN(switchOverMs) ? 0 : Math.max(0, switchOverMs)) : prev?.downtimeMs;
  const totalTimeMs = Number.isNaN(total) ? (s?.totalTimeMs ?? prev?.totalTimeMs) : total;
  return compact({
    bytesTotal: s?.bytesTotal ?? prev?.bytesTotal,
    bytesTransferred: s?.bytesTransferred ?? prev?.bytesTransferred,
    bytesRemaining: s?.bytesRemaining ?? prev?.bytesRemaining,
    downtimeMs,
    totalTimeMs,
  });
}

function compact<T extends object>(o: T): T {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as T;
}

/** The recorded migration: who, where, since when, plus `extra`. */
function migrationRecord(f: Flight, extra: InstanceMigrationStatus): InstanceMigrationStatus {
  return { id: f.id, mode: f.mode ?? 'Live', sourceNode: f.source, targetNode: f.target, startedAt: formatTime(f.startedAtMs), ...extra };
}

/** The plan while in flight: phase Migrating, nodeName still the source, come back soon (by the deadline at the latest). */
function inFlight(o: InstanceObserved, f: Flight, actions: Action[], extra: InstanceMigrationStatus): LiveMigrationStep {
  const shown = f.wS ?? f.wT;
  const base = shown ? instanceStatus(o, { kind: 'placed', workItem: shown }) : { ...o.instance.status };
  const migration = migrationRecord(f, { ...migrationFigures(o, f), ...extra });
  const status: InstanceStatus = {
    ...base,
    phase: 'Migrating',
    reason: 'Migrating',
    message: extra.message ?? `migrating live from node ${f.source} to node ${f.target}: ${extra.phase}`,
    nodeName: f.source,
    migration,
  };
  return { kind: 'inFlight', plan: { actions, status, requeueAfterMs: Math.min(MIGRATION_POLL_MS, Math.max(100, f.deadlineMs - o.now + 100)) } };
}

/** Failed: the instance stays with `current` (the ordinary planning rolls the WorkItems back); a condition and one Warning say why. */
function settleFailed(o: InstanceObserved, f: Flight, failure: Failure, current: WorkItem | undefined, figures: MigrationProgress = migrationFigures(o, f)): Settled {
  const name = o.instance.metadata.name!;
  const what = f.mode === 'Cold' ? 'move' : 'live migration';
  const message = `${what} from node ${f.source} to node ${f.target} failed: ${failure.detail}. Hint: ${HINTS[failure.reason]}, then set spec.migrateTo again to retry: cairn migrate instance ${name} --to ${f.target}`;
  const migration = migrationRecord(f, { ...figures, phase: 'Failed', reason: failure.reason, message, finishedAt: formatTime(o.now) });
  const conditions = setCondition(o.instance.status?.conditions, { type: 'MigrationFailed', status: 'True', reason: failure.reason, message, observedGeneration: o.instance.metadata.generation }, new Date(o.now));
  const actions: Action[] = [{ type: 'event', eventType: 'Warning', reason: 'MigrationFailed', message }];
  return { kind: 'settled', current, status: { ...o.instance.status, migration, conditions }, actions };
}

const HINTS: Record<MigrationFailureReason, string> = {
  TargetFailed: 'see the target WorkItem and its agent (cairn describe workitem, the agent log)',
  SourceFailed: 'see the source WorkItem and its agent (cairn describe workitem, the agent log)',
  Timeout: 'raise spec.qemu.migration.timeoutSeconds or bandwidthMiBps, or lower the guest\'s memory activity',
  TargetUnschedulable: 'make the node schedulable and give it room and a replica of every attached volume, or pick another node',
  Cancelled: 'the request was withdrawn; nothing to fix',
};

/** Completed: the target's WorkItem is the instance's; MigrationFailed turns False if it was set; one Normal event with the figures. */
function settleCompleted(o: InstanceObserved, f: Flight, figures: MigrationProgress, releases: Action[]): LiveMigrationStep {
  const summary = `migrated live from node ${f.source} to node ${f.target}: downtime ${figures.downtimeMs ?? '?'} ms, total ${figures.totalTimeMs ?? '?'} ms`;
  const migration = migrationRecord(f, { ...figures, phase: 'Completed', finishedAt: formatTime(o.now) });
  const prev = o.instance.status?.conditions;
  const conditions = getCondition(prev, 'MigrationFailed')
    ? setCondition(prev, { type: 'MigrationFailed', status: 'False', reason: 'Migrated', message: summary, observedGeneration: o.instance.metadata.generation }, new Date(o.now))
    : prev;
  const actions: Action[] = [...releases, { type: 'event', eventType: 'Normal', reason: 'Migrated', message: summary }];
  return { kind: 'settled', current: f.wT, status: { ...o.instance.status, migration, ...(conditions ? { conditions } : {}) }, actions };
}

/**
 * The status the Instance reconciler writes: phase and the Scheduled and
 * Ready conditions, mirrored from the WorkItem the agent reports on, with
 * observedGeneration. Pure.
 */
import { formatTime, setCondition } from '../../../api/conditions.js';
import type { Instance, InstancePhase, InstanceStatus } from '../../../api/instance.js';
import type { WorkItem, WorkItemInstanceStatus } from '../../../api/workitem.js';
import type { NodeView } from '../../node-health.js';

/** Where the instance stands with respect to nodes. */
export type Placement =
  | { kind: 'unschedulable'; message: string }
  | { kind: 'scheduled'; nodeName: string; workItemName: string }
  | { kind: 'placed'; workItem: WorkItem }
  | { kind: 'moving'; workItem: WorkItem; reason: string; message: string }
  | { kind: 'stopping'; workItem: WorkItem | undefined };

interface StatusInput {
  instance: Instance;
  node(name: string): NodeView;
  now: number;
}

interface Readiness {
  phase: InstancePhase;
  ready: 'True' | 'False' | 'Unknown';
  reason: string;
  message: string;
}

/** The Instance's status for a placement. */
export function instanceStatus(o: StatusInput, placement: Placement): InstanceStatus {
  const prev = o.instance.status ?? {};
  const generation = o.instance.metadata.generation;
  const workItem = 'workItem' in placement ? placement.workItem : undefined;
  const nodeName = placement.kind === 'scheduled' ? placement.nodeName : workItem?.spec.nodeName;
  const r = readiness(o, placement);
  let conditions = setCondition(prev.conditions, scheduledCondition(placement, nodeName, generation), new Date(o.now));
  conditions = setCondition(conditions, { type: 'Ready', status: r.ready, reason: r.reason, message: r.message, observedGeneration: generation }, new Date(o.now));
  const agent = workItem?.status?.instance;
  return {
    ...prev,
    observedGeneration: generation,
    phase: r.phase,
    reason: r.reason,
    message: r.message,
    nodeName,
    workItemName: placement.kind === 'scheduled' ? placement.workItemName : workItem?.metadata.name,
    pid: agent?.pid,
    startedAt: agent?.startedAt,
    restarts: agent?.restarts ?? prev.restarts,
    logPath: agent?.logPath,
    qemu: agent?.qemu,
    lastTermination: agent?.lastExitCode !== undefined || agent?.lastSignal ? { exitCode: agent.lastExitCode, signal: agent.lastSignal } : prev.lastTermination,
    migration: migrationStatus(o, prev, placement, r.phase),
    conditions,
  };
}

/**
 * spec.migrateTo is carried out once (Instance CRD): when the instance runs on that node, status.migration
 * records it Completed, and pinnedNode() ignores the field from then on (it is not a pin). This records a
 * cold move (stop, then start); a live one (migration.ts) records itself. Clearing spec.migrateTo withdraws
 * the report of a finished migration with the request, so that setting the same node again is a new
 * request (the retry of docs/migration.md), not one already carried out.
 */
function migrationStatus(o: StatusInput, prev: InstanceStatus, placement: Placement, phase: InstancePhase): InstanceStatus['migration'] {
  const target = o.instance.spec.migrateTo;
  const finished = prev.migration?.phase === 'Completed' || prev.migration?.phase === 'Failed';
  if (!target && finished) return undefined;
  const done = prev.migration?.targetNode === target && finished;
  if (!target || done || placement.kind !== 'placed' || placement.workItem.spec.nodeName !== target || phase !== 'Running') return prev.migration;
  return { mode: 'Cold', targetNode: target, phase: 'Completed', finishedAt: formatTime(o.now) };
}

function scheduledCondition(placement: Placement, nodeName: string | undefined, generation: number | undefined) {
  if (placement.kind === 'unschedulable') {
    return { type: 'Scheduled', status: 'False' as const, reason: 'Unschedulable', message: placement.message, observedGeneration: generation };
  }
  return { type: 'Scheduled', status: 'True' as const, reason: 'Scheduled', message: `placed on node ${nodeName}`, observedGeneration: generation };
}

function readiness(o: StatusInput, placement: Placement): Readiness {
  switch (placement.kind) {
    case 'unschedulable':
      return { phase: 'Pending', ready: 'False', reason: 'Unschedulable', message: placement.message };
    case 'scheduled':
      return { phase: 'Scheduled', ready: 'False', reason: 'Scheduled', message: `waiting for node ${placement.nodeName} to start it` };
    case 'moving':
      return { phase: placement.reason === 'AwaitingFencing' ? 'Unknown' : 'Stopping', ready: 'False', reason: placement.reason, message: placement.message };
    case 'stopping':
      return { phase: 'Stopping', ready: 'False', reason: 'Deleting', message: placement.workItem ? `waiting for node ${placement.workItem.spec.nodeName} to stop it` : 'deleting' };
    case 'placed':
      return fromWorkItem(o, placement.workItem);
  }
}

/** Phase and readiness as the agent reports them on the WorkItem. */
export function fromWorkItem(o: StatusInput, w: WorkItem): Readiness {
  const nodeName = w.spec.nodeName;
  if (o.node(nodeName).unreachable) {
    return { phase: 'Unknown', ready: 'Unknown', reason: 'NodeUnreachable', message: `node ${nodeName} stopped renewing its heartbeat lease; its state is unknown` };
  }
  const s = w.status;
  const current = s?.observedGeneration !== undefined && s.observedGeneration === w.metadata.generation;
  // A failure of an older generation says nothing of the spec that replaced it (a fix is under way, not failed).
  if (s?.phase === 'Failed' && s.lastError && current) {
    const hint = s.lastError.hint ? ` Hint: ${s.lastError.hint}` : '';
    return { phase: 'Failed', ready: 'False', reason: s.lastError.reason, message: `on node ${nodeName}: ${s.lastError.message}${hint}` };
  }
  const state = s?.instance?.state;
  if (!s || !state) return { phase: 'Scheduled', ready: 'False', reason: 'Scheduled', message: `waiting for node ${nodeName} to start it` };
  if (state === 'Running' && current && s.instance?.ready !== false) {
    return { phase: 'Running', ready: 'True', reason: 'Running', message: `running on node ${nodeName}${s.instance?.pid ? ` (pid ${s.instance.pid})` : ''}` };
  }
  if (state === 'Stopped' && w.spec.instance?.runState === 'Stopped') {
    return { phase: 'Stopped', ready: 'False', reason: 'Stopped', message: `stopped on node ${nodeName} as spec.runState asks` };
  }
  if (state === 'Exited') return exited(w, s.instance!, current);
  return runtimeState(state, nodeName, s.message);
}

/**
 * A workload that ended by itself. The agent reports only the facts (state Exited, exit status, signal);
 * what they mean follows the Instance CRD: a clean exit (status 0, no signal) that restartPolicy Never or
 * OnFailure leaves alone is a completed run, phase Stopped; any other exit they leave alone is Failed; one
 * that restartPolicy restarts is Starting again. The policy rule is the agent's shouldRestart()
 * (agent/drivers/process/restart-policy.ts), restated here because the controller does not import the agent.
 * An unknown status counts as unclean, as it does there. A report for an older generation says nothing
 * about the new spec (a new restartToken restarts even a completed run), so it is progress, not an outcome.
 */
function exited(w: WorkItem, agent: WorkItemInstanceStatus, current: boolean): Readiness {
  const nodeName = w.spec.nodeName;
  const how = `${describeExit(agent)} on node ${nodeName}`;
  if (!current) {
    return w.spec.instance?.runState === 'Stopped'
      ? { phase: 'Stopping', ready: 'False', reason: 'Stopping', message: `${how}; waiting for the node to apply runState Stopped` }
      : { phase: 'Starting', ready: 'False', reason: 'Updating', message: `${how}; waiting for the node to apply the new spec` };
  }
  const policy = w.spec.instance?.restartPolicy ?? 'Always';
  const clean = agent.lastExitCode === 0 && !agent.lastSignal;
  if (policy === 'Always' || (policy === 'OnFailure' && !clean)) {
    return { phase: 'Starting', ready: 'False', reason: 'Restarting', message: `${how}; restartPolicy ${policy} restarts it` };
  }
  if (clean) return { phase: 'Stopped', ready: 'False', reason: 'Completed', message: `${how}; restartPolicy ${policy} does not restart it` };
  return { phase: 'Failed', ready: 'False', reason: 'Exited', message: `${how}; restartPolicy ${policy} does not restart it` };
}

/** "exited with status 3", "exited with status 137 (SIGKILL)", or "exited (status unknown)". */
function describeExit(agent: WorkItemInstanceStatus): string {
  if (agent.lastExitCode === undefined) return agent.lastSignal ? `was killed by ${agent.lastSignal}` : 'exited (status unknown)';
  return `exited with status ${agent.lastExitCode}${agent.lastSignal ? ` (${agent.lastSignal})` : ''}`;
}

function runtimeState(state: string, nodeName: string, message: string | undefined): Readiness {
  const detail = message ? `: ${message}` : '';
  const table: Record<string, InstancePhase> = { Pending: 'Starting', Starting: 'Starting', Running: 'Running', Stopping: 'Stopping', Stopped: 'Stopped', BackOff: 'Starting', Fenced: 'Unknown' };
  const reasons: Record<string, string> = { Running: 'Updating', BackOff: 'CrashLoopBackOff', Fenced: 'Fenced' };
  return { phase: table[state] ?? 'Unknown', ready: 'False', reason: reasons[state] ?? state, message: `${state.toLowerCase()} on node ${nodeName}${detail}` };
}

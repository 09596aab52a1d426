/**
 * What counts as a failure, for `status` and `failures` alike: every Failed
 * WorkItem, and every failure condition (Ready, Scheduled, SpecAccepted)
 * on Clusters, Nodes, Instances and Volumes — False with a reason that
 * says the object is stuck rather than on its way (see PROGRESS_REASONS),
 * or Unknown because its node stopped answering. Grouped by reason, each
 * with the node, the message and a how-to-fix hint. Pure, and free of
 * Node-only imports: the dashboard (ui/) bundles it, so the browser and the
 * terminal report the same failures with the same advice.
 */
import type { Cluster } from '../../api/cluster.js';
import type { Instance } from '../../api/instance.js';
import type { Node } from '../../api/node.js';
import type { Condition } from '../../api/types.js';
import type { Volume } from '../../api/volume.js';
import type { WorkItem } from '../../api/workitem.js';
import { hintFor } from './hints.js';

/** Kinds a failure is reported on. */
export type FailureKind = 'Cluster' | 'Node' | 'Instance' | 'Volume' | 'WorkItem';

/** One failing object, for one reason. */
export interface Failure {
  kind: FailureKind;
  namespace?: string;
  name: string;
  /** The node it failed on, when known. */
  node?: string;
  reason: string;
  message: string;
  hint: string;
  /** Conditions reporting it (`Scheduled=False`); absent for a WorkItem. */
  conditions?: string[];
  /** A WorkItem's owner, e.g. `instance web`. */
  owner?: string;
  /** A WorkItem's attempts so far. */
  attempts?: number;
  /** When it started failing. */
  since?: string;
}

/** Failures sharing a reason. */
export interface FailureGroup {
  reason: string;
  failures: Failure[];
}

/** Condition types whose False status is a failure. */
const FAILURE_CONDITIONS = ['Scheduled', 'SpecAccepted', 'Ready'];

/**
 * Ready=False reasons the controller writes while an object is on its way
 * (being placed, started, created, moved, stopped as asked or deleted):
 * progress to wait for, not a failure to fix.
 */
export const PROGRESS_REASONS: ReadonlySet<string> = new Set([
  'Pending',
  'Scheduled',
  'Starting',
  'Creating',
  'Updating',
  'Stopping',
  'Stopped',
  'Moving',
  'Draining',
  'AwaitingFencing',
  'FailingOver',
  'Deleting',
  // A run that ended and is restarted, or that finished cleanly (exit 0 under Never/OnFailure): not stuck.
  'Restarting',
  'Completed',
  // A gluster Volume copying entries onto a brick that was away: its progress shows in the state line.
  'HealPending',
]);

/** Unknown-status reasons that are failures: the node stopped renewing its heartbeat. */
const UNKNOWN_FAILURE_REASONS: ReadonlySet<string> = new Set(['NodeLeaseExpired', 'NodeUnreachable']);

const HINT_SEPARATOR = ' Hint: ';

/** Whether a condition reports a failure. */
export function isFailureCondition(c: Condition): boolean {
  if (!FAILURE_CONDITIONS.includes(c.type)) return false;
  if (c.status === 'False') return !PROGRESS_REASONS.has(c.reason);
  return c.status === 'Unknown' && UNKNOWN_FAILURE_REASONS.has(c.reason);
}

interface ConditionOwner {
  kind: Exclude<FailureKind, 'WorkItem'>;
  metadata: { name?: string; namespace?: string };
  status?: { conditions?: Condition[] };
  node?: string;
}

// One failure per distinct reason and message: an unschedulable instance says so in Scheduled and in Ready.
function conditionFailures(o: ConditionOwner): Failure[] {
  const found = new Map<string, Failure>();
  const conditions = [...(o.status?.conditions ?? [])].sort((a, b) => FAILURE_CONDITIONS.indexOf(a.type) - FAILURE_CONDITIONS.indexOf(b.type));
  for (const c of conditions.filter(isFailureCondition)) {
    const key = `${c.reason}\n${c.message}`;
    const seen = found.get(key);
    if (seen) {
      seen.conditions!.push(`${c.type}=${c.status}`);
      continue;
    }
    const [message, ownHint] = splitHint(c.message ?? '');
    const name = o.metadata.name ?? '';
    const hint = ownHint ?? hintFor(c.reason, { kind: o.kind, name, namespace: o.metadata.namespace, message });
    found.set(key, { kind: o.kind, namespace: o.metadata.namespace, name, node: o.node, reason: c.reason, message, hint, conditions: [`${c.type}=${c.status}`], since: c.lastTransitionTime });
  }
  return [...found.values()];
}

/** A message and the `Hint:` the controller appended to it, if any. */
export function splitHint(text: string): [message: string, hint: string | undefined] {
  const at = text.lastIndexOf(HINT_SEPARATOR);
  return at < 0 ? [text, undefined] : [text.slice(0, at), text.slice(at + HINT_SEPARATOR.length)];
}

function workItemFailure(w: WorkItem): Failure {
  const e = w.status?.lastError;
  const reason = e?.reason ?? 'Unknown';
  const message = e?.message ?? w.status?.message ?? 'failed without an error report';
  const name = w.metadata.name ?? '';
  return {
    kind: 'WorkItem',
    namespace: w.metadata.namespace,
    name,
    node: w.spec.nodeName,
    reason,
    message,
    hint: e?.hint ?? hintFor(reason, { kind: 'WorkItem', name, namespace: w.metadata.namespace, message }),
    owner: `${w.spec.owner.kind.toLowerCase()} ${w.spec.owner.name}`,
    attempts: w.status?.attempts,
    since: e?.time ?? w.status?.finishedAt,
  };
}

function volumeNodes(replicas: { nodeName?: string; state?: string }[] | undefined): string | undefined {
  const nodes = (replicas ?? []).filter((r) => r.nodeName && r.state !== 'Ready').map((r) => r.nodeName!);
  return nodes.length > 0 ? nodes.join(', ') : undefined;
}

/** The objects failures are looked for in: a snapshot's arrays, or the dashboard's live stores. */
export interface FailureSources {
  clusters: Iterable<Cluster>;
  nodes: Iterable<Node>;
  instances: Iterable<Instance>;
  volumes: Iterable<Volume>;
  workItems: Iterable<WorkItem>;
}

/** Every failure in the objects, in kind order (Clusters, Nodes, Instances, Volumes, WorkItems). */
export function collectFailures(objects: FailureSources): Failure[] {
  return [
    ...[...objects.clusters].flatMap((c) => conditionFailures({ ...c, kind: 'Cluster' })),
    ...[...objects.nodes].flatMap((n) => conditionFailures({ ...n, kind: 'Node', node: n.metadata.name })),
    ...[...objects.instances].flatMap((i) => conditionFailures({ ...i, kind: 'Instance', node: i.status?.nodeName })),
    ...[...objects.volumes].flatMap((v) => conditionFailures({ ...v, kind: 'Volume', node: volumeNodes(v.status?.replicas) })),
    ...[...objects.workItems].filter((w) => w.status?.phase === 'Failed').map(workItemFailure),
  ];
}

/** Failures grouped by reason, the largest group first (then by reason). */
export function groupByReason(failures: readonly Failure[]): FailureGroup[] {
  const groups = new Map<string, Failure[]>();
  for (const f of failures) groups.set(f.reason, [...(groups.get(f.reason) ?? []), f]);
  return [...groups].map(([reason, list]) => ({ reason, failures: list })).sort((a, b) => b.failures.length - a.failures.length || a.reason.localeCompare(b.reason));
}

/**
 * The pure rules behind the node authorizer (node-authorizer.ts): which
 * names and selectors belong to a node, and what a node may change in an
 * object it writes (kube's NodeRestriction admission). Every check returns
 * the reason it refuses, or undefined when the write may go ahead.
 */
import { isDeepStrictEqual } from 'node:util';
import { AGENT_FINALIZER, isCairnKey, nodeLeaseName } from '../../api/names.js';
import { SelectorError } from '../../api/selector-error.js';
import { parseFieldSelector } from '../selectors/fields.js';
import type { KubeObject } from '../storage/codec.js';
import type { NodeIdentity } from './user.js';

const FENCING_PREFIX = 'instance-';

/** The name of the node's heartbeat Lease (agent/heartbeat.ts). */
export function heartbeatLease(node: NodeIdentity): string {
  return nodeLeaseName(node.name);
}

/** The Instance a fencing Lease guards (`instance-<name>`, agent/fencing.ts), or undefined for any other Lease. */
export function fencedInstance(leaseName: string): string | undefined {
  return leaseName.startsWith(FENCING_PREFIX) && leaseName.length > FENCING_PREFIX.length ? leaseName.slice(FENCING_PREFIX.length) : undefined;
}

/** The holderIdentity the agent writes into its Leases: the bare node name (agent/heartbeat.ts, agent/fencing.ts). */
export function holderIdentity(node: NodeIdentity): string {
  return node.name;
}

/** Whether a WorkItem is addressed to the node and, when `owner` is given, is a piece of that Instance or Volume. */
export function isNodesWorkItem(w: KubeObject, node: NodeIdentity, owner?: { kind: string; name: string }): boolean {
  const spec = w.spec as { nodeName?: string; owner?: { kind?: string; name?: string } } | undefined;
  if (w.metadata.namespace !== node.cluster || spec?.nodeName !== node.name) return false;
  return !owner || (spec.owner?.kind === owner.kind && spec.owner?.name === owner.name);
}

/** Whether a field selector only selects the node's WorkItems (it demands `spec.nodeName=<node>`, whatever else it asks). */
export function selectsOnlyNode(fieldSelector: string | undefined, node: NodeIdentity): boolean {
  if (!fieldSelector) return false;
  try {
    return parseFieldSelector(fieldSelector).exactValue('spec.nodeName') === node.name;
  } catch (err) {
    if (err instanceof SelectorError) return false;
    throw err;
  }
}

// Set by the apiserver on every write, never by the writer's intent.
const SERVER_SET_METADATA = ['resourceVersion', 'managedFields', 'generation'];

/**
 * Why `after` changes more of `before` than a node may: anything but
 * metadata.labels, metadata.annotations and status, and of the finalizers
 * only `finalizer` (when given) may come or go.
 */
export function metadataOnlyChange(before: KubeObject, after: KubeObject, finalizer?: string): string | undefined {
  if (!isDeepStrictEqual(before.spec, after.spec)) return 'a node may not change spec (only metadata.labels and metadata.annotations, and status through the status subresource)';
  const changedFinalizers = symmetricDifference(before.metadata.finalizers ?? [], after.metadata.finalizers ?? []);
  const foreign = changedFinalizers.filter((f) => f !== finalizer);
  if (foreign.length > 0) return `a node may not add or remove the finalizer${foreign.length > 1 ? 's' : ''} ${foreign.join(', ')}${finalizer ? ` (only its own, ${finalizer})` : ''}`;
  const fixed = (o: KubeObject) => {
    const { labels: _l, annotations: _a, finalizers: _f, ...meta } = o.metadata as Record<string, unknown>;
    for (const f of SERVER_SET_METADATA) delete meta[f];
    const { status: _s, metadata: _m, ...rest } = o;
    return { ...rest, metadata: meta };
  };
  const a = fixed(before);
  const b = fixed(after);
  const changed = [...new Set([...Object.keys(a.metadata), ...Object.keys(b.metadata)])].filter((k) => !isDeepStrictEqual(a.metadata[k], b.metadata[k]));
  if (changed.length > 0) return `a node may not change metadata.${changed.join(', metadata.')} (only labels and annotations)`;
  const top = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => k !== 'metadata' && !isDeepStrictEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
  return top.length > 0 ? `a node may not change ${top.join(', ')}` : undefined;
}

/** The cairn.dev-domain keys of metadata.labels or metadata.annotations that differ between the two objects. */
function changedCairnKeys(before: KubeObject | undefined, after: KubeObject, field: 'labels' | 'annotations'): string[] {
  const a = before?.metadata[field] ?? {};
  const b = after.metadata[field] ?? {};
  return [...new Set([...Object.keys(a), ...Object.keys(b)])].filter((k) => isCairnKey(k) && a[k] !== b[k]);
}

/**
 * Why a write changes labels or annotations in the cairn.dev domain, which a node may not: the
 * controller finds a WorkItem's owner by its cairn.dev/owner-* labels, and operators label Nodes in
 * that domain for nodeSelectors a node must not be able to claim for itself.
 */
function cairnKeysProblem(before: KubeObject | undefined, after: KubeObject, fields: ReadonlyArray<'labels' | 'annotations'>): string | undefined {
  const changed = fields.flatMap((f) => changedCairnKeys(before, after, f).map((k) => `metadata.${f}["${k}"]`));
  return changed.length > 0 ? `a node may not set or change ${changed.join(', ')}: keys in the cairn.dev domain are the control plane's and operators'` : undefined;
}

/** Why a WorkItem write (main resource) is refused: the node may only touch its own finalizer, and labels and annotations outside the cairn.dev domain. */
export function workItemWriteProblem(before: KubeObject | undefined, after: KubeObject | undefined, node: NodeIdentity): string | undefined {
  if (!before || !after) return 'a node may not create WorkItems';
  if (!isNodesWorkItem(before, node)) return notAddressed(before, node);
  return metadataOnlyChange(before, after, AGENT_FINALIZER) ?? cairnKeysProblem(before, after, ['labels', 'annotations']);
}

/** Why a WorkItem status write is refused: only the status of WorkItems addressed to the node. */
export function workItemStatusProblem(before: KubeObject | undefined, node: NodeIdentity): string | undefined {
  if (!before) return 'a node may not create WorkItems';
  return isNodesWorkItem(before, node) ? undefined : notAddressed(before, node);
}

function notAddressed(w: KubeObject, node: NodeIdentity): string {
  const to = (w.spec as { nodeName?: string } | undefined)?.nodeName;
  return `WorkItem ${w.metadata.namespace}/${w.metadata.name} is addressed to ${to ? `node ${to}` : 'no node'}, not to ${node.name}`;
}

/** Why a Node write (main resource) is refused: the node registers itself with an operator-neutral spec, then changes only labels (outside the cairn.dev domain) and annotations. */
export function nodeWriteProblem(before: KubeObject | undefined, after: KubeObject | undefined, node: NodeIdentity): string | undefined {
  if (!after) return 'a node may not delete Nodes';
  if (after.metadata.name !== node.name || after.metadata.namespace !== node.cluster) return `a node may only register itself (Node ${node.cluster}/${node.name}), not ${after.metadata.namespace}/${after.metadata.name}`;
  const labels = cairnKeysProblem(before, after, ['labels']);
  if (labels) return labels;
  if (before) return metadataOnlyChange(before, after);
  // spec is the operators' (cordon, drain): a node may not register itself cordoned or draining on their behalf.
  const set = Object.entries((after.spec ?? {}) as Record<string, unknown>).filter(([, v]) => v !== false && v !== undefined && v !== null);
  return set.length > 0 ? `a node registers itself with an empty spec; spec.${set.map(([k]) => k).join(', spec.')} ${set.length > 1 ? 'are' : 'is'} for operators to set` : undefined;
}

/**
 * Why a write takes an instance's claim (its fencing Lease) from another node: a node claims an
 * instance only while the claim is free or its own; only a hand-over or the controller (after
 * revoking the holder's node lease) frees it (docs/fencing.md).
 */
export function claimTakeoverProblem(before: KubeObject | undefined, after: KubeObject | undefined, node: NodeIdentity): string | undefined {
  const holderOf = (o: KubeObject | undefined) => (o?.spec as { holderIdentity?: string | null } | undefined)?.holderIdentity || undefined;
  const was = holderOf(before);
  if (holderOf(after) !== holderIdentity(node) || was === undefined || was === holderIdentity(node)) return undefined;
  return `the claim ${before?.metadata.name ?? ''} is held by node ${was}: a node claims an instance only when its claim is free (node ${was} frees it when it stops the instance, or the controller when it fails node ${was} over)`;
}

/**
 * Why a Lease write is refused on holder grounds: a node holds leases for itself or releases them, and
 * gives one to another node only as the source of a live migration handing the instance's fencing
 * Lease to the migration's target (`handOverTo`, from its own WorkItem; docs/migration.md).
 */
export function leaseHolderProblem(after: KubeObject | undefined, node: NodeIdentity, handOverTo?: string): string | undefined {
  const holder = (after?.spec as { holderIdentity?: string | null } | undefined)?.holderIdentity;
  if (holder === undefined || holder === null || holder === '' || holder === holderIdentity(node) || holder === handOverTo) return undefined;
  return `a node may only hold a Lease itself (spec.holderIdentity "${holderIdentity(node)}") or release it, not give it to "${holder}"`;
}

/**
 * Why an Event is not the node's own: the agent's EventRecorder writes
 * source.host and reportingInstance = its node name (runtime/events.ts);
 * an Event of the node names it in one of them, names nobody else, and is
 * about an object of the node's cluster.
 */
export function eventOwnershipProblem(ev: KubeObject, node: NodeIdentity): string | undefined {
  const host = (ev.source as { host?: string } | undefined)?.host || undefined;
  const instance = (ev.reportingInstance as string | undefined) || undefined;
  const who = `Event ${ev.metadata.namespace}/${ev.metadata.name}`;
  if (ev.metadata.namespace !== node.cluster) return `${who} is not in the node's cluster ${node.cluster}`;
  if (host === undefined && instance === undefined) return `${who} must name its node in source.host or reportingInstance ("${node.name}")`;
  for (const [field, v] of [['source.host', host], ['reportingInstance', instance]] as const) {
    if (v !== undefined && v !== node.name) return `${who} has ${field} "${v}": a node writes only Events it reports itself (${field} "${node.name}")`;
  }
  const about = (ev.involvedObject as { namespace?: string } | undefined)?.namespace;
  if (about && about !== node.cluster) return `${who} is about an object in namespace ${about}; a node reports only on its own cluster ${node.cluster}`;
  return undefined;
}

function symmetricDifference(a: string[], b: string[]): string[] {
  return [...a.filter((x) => !b.includes(x)), ...b.filter((x) => !a.includes(x))];
}

/**
 * Garbage collection by ownerReferences, as kube's garbage collector does
 * it, planned as a pure function of the objects that can take part in a
 * step (isGcCandidate) and of which uids exist:
 *
 * - Background (the default): an object all of whose owners are gone is
 *   deleted. "Gone" is decided on the view and checked again against the
 *   API before the delete (collector.ts), so a stale view deletes nothing
 *   whose owner exists.
 * - Foreground: an owner being deleted with the `foregroundDeletion`
 *   finalizer gets its dependents deleted, and loses the finalizer (and so
 *   goes) once no dependent with `blockOwnerDeletion` is left.
 * - Orphan: an owner being deleted with the `orphan` finalizer has its
 *   references removed from its dependents, then loses the finalizer.
 *
 * Owners are matched by uid, so an owner deleted and created again under
 * the same name is another owner.
 */

import { FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from '../../api/names.js';
import type { OwnerReference } from '../../api/types.js';

/** Where objects of one kind are served. */
export interface GcKind {
  group: string;
  version: string;
  kind: string;
  plural: string;
  namespaced: boolean;
}

/** What the collector needs of an object. */
export interface GcObject {
  kind: GcKind;
  namespace?: string;
  name: string;
  uid: string;
  resourceVersion: string;
  ownerReferences: OwnerReference[];
  deletionTimestamp?: string;
  finalizers: string[];
}

/** One step of collection. */
export type GcAction =
  | { type: 'deleteDependent'; target: GcObject; owner: GcObject }
  | { type: 'deleteOrphaned'; target: GcObject }
  | { type: 'dropOwnerRefs'; target: GcObject; uids: string[] }
  | { type: 'dropFinalizer'; target: GcObject; finalizer: string };

/**
 * Whether an object can take part in a step: it has owners (it may be
 * orphaned, or be the dependent of an owner being deleted), or it is being
 * deleted (an owner whose finalizers ask for steps). Every other object
 * matters only as an owner that exists, by uid.
 */
export function isGcCandidate(o: Pick<GcObject, 'ownerReferences' | 'deletionTimestamp'>): boolean {
  return o.ownerReferences.length > 0 || !!o.deletionTimestamp;
}

/**
 * The steps that move every object toward what its owners' state asks for.
 * `objects` must hold every candidate (isGcCandidate; others are passed
 * over), and `exists` tells whether an object with that uid exists at all,
 * by default among `objects`.
 */
export function planCollection(objects: GcObject[], exists: (uid: string) => boolean = uidsOf(objects)): GcAction[] {
  const candidates = objects.filter(isGcCandidate);
  const dependents = new Map<string, GcObject[]>();
  for (const o of candidates) for (const r of o.ownerReferences) (dependents.get(r.uid) ?? dependents.set(r.uid, []).get(r.uid)!).push(o);
  const actions: GcAction[] = [];
  for (const o of candidates) {
    if (o.deletionTimestamp) actions.push(...ownerSteps(o, dependents.get(o.uid) ?? []));
    else if (o.ownerReferences.every((r) => !exists(r.uid))) actions.push({ type: 'deleteOrphaned', target: o });
  }
  return actions;
}

function uidsOf(objects: GcObject[]): (uid: string) => boolean {
  const uids = new Set(objects.map((o) => o.uid));
  return (uid) => uids.has(uid);
}

// What an owner being deleted asks of its dependents, by its finalizers.
function ownerSteps(owner: GcObject, deps: GcObject[]): GcAction[] {
  const out: GcAction[] = [];
  if (owner.finalizers.includes(ORPHAN_FINALIZER)) {
    for (const d of deps) out.push({ type: 'dropOwnerRefs', target: d, uids: [owner.uid] });
    if (deps.length === 0) out.push({ type: 'dropFinalizer', target: owner, finalizer: ORPHAN_FINALIZER });
    return out;
  }
  if (owner.finalizers.includes(FOREGROUND_FINALIZER)) {
    for (const d of deps) if (!d.deletionTimestamp) out.push({ type: 'deleteDependent', target: d, owner });
    const blocking = deps.filter((d) => d.ownerReferences.some((r) => r.uid === owner.uid && r.blockOwnerDeletion));
    if (blocking.length === 0) out.push({ type: 'dropFinalizer', target: owner, finalizer: FOREGROUND_FINALIZER });
  }
  return out;
}

/** The API path of an object. */
export function objectPath(kind: Pick<GcKind, 'group' | 'version' | 'plural' | 'namespaced'>, namespace: string | undefined, name: string): string {
  const base = kind.group ? `/apis/${kind.group}/${kind.version}` : `/api/${kind.version}`;
  return `${base}${kind.namespaced && namespace ? `/namespaces/${namespace}` : ''}/${kind.plural}/${encodeURIComponent(name)}`;
}

/**
 * The decisions of `cairn restore --from-agents` (docs/restore.md), pure:
 * from the copies the agents kept (agent/metadata-copy.ts) to the objects to
 * write, keyed by the apiserver's own storage layout (storage/keys.ts). For
 * every object the copy with the highest resourceVersion wins: all copies
 * come from the one lost store, whose revisions only grow, so the highest is
 * the latest any agent saw. What no agent kept is reported, with a hint,
 * rather than guessed.
 */
import type { ResourceDefinition } from '../resources.js';
import type { KubeObject } from '../storage/codec.js';
import { objectKey } from '../storage/keys.js';

/** The objects one agent kept, and which agent (its node name, or its data dir). */
export interface AgentCopy {
  source: string;
  objects: KubeObject[];
}

/** An object to write, with the copy it came from. */
export interface RestoredObject {
  key: string;
  def: ResourceDefinition;
  obj: KubeObject;
  source: string;
  /** Its resourceVersion in the lost store (0: none, e.g. a Token rebuilt from a node credential). */
  resourceVersion: number;
}

/** One copy of an object that lost to a fresher one. */
export interface CopyVersion {
  source: string;
  resourceVersion: number;
}

/** An object the agents held different copies of, and how that was settled. */
export interface Conflict {
  kind: string;
  /** namespace/name, or name for a cluster-scoped kind. */
  name: string;
  chosen: CopyVersion;
  others: CopyVersion[];
  reason: string;
}

/** Something the restore cannot bring back, why, and what to do. */
export interface Unrecovered {
  what: string;
  why: string;
  hint: string;
}

/** What the merge decided. */
export interface MergeResult {
  objects: RestoredObject[];
  conflicts: Conflict[];
  unrecovered: Unrecovered[];
  /** The highest resourceVersion any copy carries: the lost store had reached at least this revision. */
  highestRevision: number;
}

/** The kinds an agent keeps a copy of (agent/metadata-copy.ts, local-store.ts, its node credential). */
export const KEPT_BY_AGENTS: readonly string[] = ['Cluster', 'Node', 'WorkItem', 'Instance', 'Volume', 'Lease', 'Token'];

const KIND_HINTS: Record<string, string> = {
  Event: 'Events are history: new ones are recorded as things happen',
  Secret: 're-apply them from your manifests (cairn apply -f / kubectl apply -f)',
  ConfigMap: 're-apply them from your manifests (cairn apply -f / kubectl apply -f)',
  Role: "the server's bootstrap roles come back when it starts; re-apply your own from your manifests",
  ClusterRole: "the server's bootstrap roles come back when it starts; re-apply your own from your manifests",
  RoleBinding: 're-apply them from your manifests; until then only the admin kubeconfig and node credentials work',
  ClusterRoleBinding: 're-apply them from your manifests; until then only the admin kubeconfig and node credentials work',
};

/** Merges the agents' copies: the freshest copy of each object, the conflicts settled, and what is missing. */
export function mergeAgentCopies(copies: readonly AgentCopy[], defs: readonly ResourceDefinition[]): MergeResult {
  const unrecovered: Unrecovered[] = [];
  const byKey = new Map<string, RestoredObject[]>();
  for (const copy of copies) {
    for (const obj of copy.objects) {
      const candidate = toCandidate(copy.source, obj, defs);
      if ('why' in candidate) unrecovered.push(candidate);
      else byKey.set(candidate.key, [...(byKey.get(candidate.key) ?? []), candidate]);
    }
  }
  const objects: RestoredObject[] = [];
  const conflicts: Conflict[] = [];
  for (const candidates of byKey.values()) {
    const { chosen, conflict } = freshest(candidates);
    objects.push(chosen);
    if (conflict) conflicts.push(conflict);
  }
  objects.sort((a, b) => a.key.localeCompare(b.key));
  const highestRevision = Math.max(0, ...[...byKey.values()].flat().map((c) => c.resourceVersion));
  return { objects, conflicts, unrecovered: [...unrecovered, ...missingOwners(objects), ...missingClusters(objects), ...kindsNotKept(defs)], highestRevision };
}

function toCandidate(source: string, obj: KubeObject, defs: readonly ResourceDefinition[]): RestoredObject | Unrecovered {
  const name = obj.metadata?.name;
  const def = defs.find((d) => apiVersionOf(d) === obj.apiVersion && d.kind === obj.kind);
  if (!def || !name) {
    return { what: `${String(obj.kind)} ${name ?? '(no name)'} kept by ${source}`, why: def ? 'the copy has no metadata.name' : `${String(obj.apiVersion)} ${String(obj.kind)} is not a kind this server serves`, hint: 'a copy from another Cairn version, or a damaged file: re-create it by hand if it matters' };
  }
  const rv = Number(obj.metadata.resourceVersion ?? 0);
  return { key: objectKey(def, obj.metadata.namespace, name), def, obj, source, resourceVersion: Number.isSafeInteger(rv) && rv > 0 ? rv : 0 };
}

/** The copy to restore among one object's copies, and the conflict it settles (none when all agree). */
export function freshest(candidates: readonly RestoredObject[]): { chosen: RestoredObject; conflict?: Conflict } {
  // Highest resourceVersion first; among equals, the first source by name, so a rerun restores the same.
  const sorted = [...candidates].sort((a, b) => b.resourceVersion - a.resourceVersion || a.source.localeCompare(b.source));
  const chosen = sorted[0]!;
  const others = sorted.slice(1).filter((c) => c.resourceVersion !== chosen.resourceVersion || JSON.stringify(c.obj) !== JSON.stringify(chosen.obj));
  if (others.length === 0) return { chosen };
  const meta = chosen.obj.metadata;
  const reason = others.some((c) => c.resourceVersion === chosen.resourceVersion)
    ? `copies at the same resourceVersion differ: the copy of ${chosen.source} (first by name) was taken`
    : others.some((c) => c.obj.metadata.uid !== meta.uid)
      ? 'the object was deleted and re-created: the newest one (highest resourceVersion) was taken'
      : 'the copy with the highest resourceVersion was taken';
  const versions = others.map((c) => ({ source: c.source, resourceVersion: c.resourceVersion }));
  return { chosen, conflict: { kind: chosen.def.kind, name: meta.namespace ? `${meta.namespace}/${meta.name}` : meta.name!, chosen: { source: chosen.source, resourceVersion: chosen.resourceVersion }, others: versions, reason } };
}

/** Instances and Volumes whose WorkItems were restored but of which no agent kept a copy. */
function missingOwners(objects: readonly RestoredObject[]): Unrecovered[] {
  const present = new Set(objects.map((o) => `${o.def.kind}/${o.obj.metadata.namespace}/${o.obj.metadata.name}`));
  const orphans = new Map<string, string[]>();
  for (const o of objects) {
    const owner = o.def.kind === 'WorkItem' ? (o.obj.spec as { owner?: { kind?: string; name?: string } } | undefined)?.owner : undefined;
    const id = owner && `${owner.kind}/${o.obj.metadata.namespace}/${owner.name}`;
    if (id && !present.has(id)) orphans.set(id, [...(orphans.get(id) ?? []), String(o.obj.metadata.name)]);
  }
  return [...orphans].sort(([a], [b]) => a.localeCompare(b)).map(([id, items]) => {
    const [kind, namespace, name] = id.split('/');
    return { what: `${kind} ${namespace}/${name}`, why: `no agent kept a copy, though its WorkItems ${items.join(', ')} were restored`, hint: `re-apply its manifest with the same name (cairn apply -f); until then its WorkItems have no owner` };
  });
}

/** Clusters whose objects were restored but of which no agent kept a copy. */
function missingClusters(objects: readonly RestoredObject[]): Unrecovered[] {
  const clusters = new Set(objects.filter((o) => o.def.kind === 'Cluster').map((o) => o.obj.metadata.name));
  const used = new Set(objects.map((o) => o.obj.metadata.namespace).filter((ns): ns is string => !!ns && !clusters.has(ns)));
  return [...used].sort().map((ns) => ({ what: `Cluster ${ns}`, why: 'no agent kept a copy, though objects in it were restored', hint: `re-apply its manifest (cairn apply -f) before starting the server's controller` }));
}

/** One line per stored kind no agent keeps, and the parts of kept kinds they do not. */
function kindsNotKept(defs: readonly ResourceDefinition[]): Unrecovered[] {
  const stored = defs.filter((d) => d.verbs.includes('list') && !d.refusal && !(d.group === '' && d.plural === 'namespaces'));
  const lines = stored
    .filter((d) => !KEPT_BY_AGENTS.includes(d.kind))
    .map((d) => ({ what: `every ${d.kind} (${d.group ? `${d.plural}.${d.group}` : d.plural})`, why: 'no agent keeps a copy', hint: KIND_HINTS[d.kind] ?? 're-apply them from your manifests (cairn apply -f / kubectl apply -f)' }));
  return [
    ...lines,
    { what: 'user and join Tokens', why: 'agents keep only their own node credential', hint: 'create them again: cairn user create / cairn token create --cluster <cluster>' },
    { what: 'Instances and Volumes on no node', why: 'only the agents of the nodes an Instance or Volume is placed on keep it: Pending, Stopped and unscheduled ones, and those of agents whose data dirs were not given, are unknown', hint: 're-apply their manifests (cairn apply -f); applying one that was restored changes nothing' },
  ];
}

function apiVersionOf(def: ResourceDefinition): string {
  return def.group ? `${def.group}/${def.version}` : def.version;
}

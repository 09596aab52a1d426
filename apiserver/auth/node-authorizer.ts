/**
 * Node authorization (kube's Node authorizer + NodeRestriction admission):
 * a node credential (user `system:node:<cluster>:<node>`, UserInfo.node set)
 * may read and write only what its agent needs, decided from the watch
 * cache's view of which WorkItems are addressed to the node. Every other
 * request of a node is denied; other users get no opinion, and so do
 * non-resource paths (discovery, the credential rotation endpoint), which
 * later authorizers decide.
 *
 * What the agent does, and what allows it:
 *   - node-registration.ts: GET nodes/<node>; POST nodes (spec empty);
 *     PATCH nodes/<node> (metadata.labels); PUT nodes/<node>/status.
 *   - fencing/node-fence.ts (LeaseLock): GET, POST, PUT leases/node-<node>.
 *   - fencing/claims.ts (LeaseLock): GET, POST, PUT leases/instance-<instance>
 *     (claims) for the instances of its WorkItems, never taking one another
 *     node holds; PUT also for any claim it holds (holderIdentity = node
 *     name), to release one after its WorkItem went (`InstanceClaims.release`
 *     clears the holder by PUT: a node deletes nothing but its own Events, so
 *     the controller deletes the claim with its Instance).
 *   - agent.ts (Informer): LIST and WATCH workitems in its namespace with
 *     fieldSelector spec.nodeName=<node>.
 *   - reconciler.ts: PUT workitems/<w>/status; PATCH workitems/<w> with
 *     metadata.finalizers (dropping cairn.dev/agent) and resourceVersion.
 *   - credentials.ts: POST /cairn/v1/rotate (a non-resource path, allowed by
 *     credentialExchangeAuthorizer).
 *   - Events: the agent records none yet; an EventRecorder with host = the
 *     node name (runtime/events.ts) is what the rules expect:
 *     create, and update/patch/delete of Events naming the node in
 *     source.host or reportingInstance.
 * Instances and Volumes its WorkItems are pieces of may be read (get); the
 * agent does not need to list or watch them. Its own Cluster may be read
 * (get) too: metadata-copy.ts keeps it, with the Instances and Volumes, for
 * `cairn restore --from-agents`.
 *
 * Spec restrictions are admission checks returned with the allow: the
 * ResourceStore runs them on the stored object and what would be stored, so
 * they judge the real data, not the cache.
 *
 * Concurrency and cost: look-ups read the cache synchronously, by key or by
 * the WorkItem indexes (spec.owner.name), so each costs O(WorkItems of one
 * owner). The cache may lag etcd (and another replica may have served the
 * agent's watch first), so a denial that a look-up decided is retried once
 * after the cache has caught up with etcd; creating a Lease, whose name is
 * known only to admission, waits for that up front.
 */
import type { Registry } from '../registry.js';
import type { ResourceDefinition } from '../resources.js';
import type { KubeObject } from '../storage/codec.js';
import { objectKey } from '../storage/keys.js';
import type { Predicate } from '../storage/events.js';
import type { RequestAttributes, ResourceAttributes } from './attributes.js';
import { refusedWrite, type Authorizer, type Decision, type WriteAdmission } from './authorizer.js';
import {
  eventOwnershipProblem,
  fencedInstance,
  heartbeatLease,
  holderIdentity,
  isNodesWorkItem,
  claimTakeoverProblem,
  leaseHolderProblem,
  nodeWriteProblem,
  selectsOnlyNode,
  workItemStatusProblem,
  workItemWriteProblem,
} from './node-rules.js';
import type { NodeIdentity } from './user.js';

/** The part of a kind's watch cache the authorizer reads. */
export interface CachedKind {
  readonly objects: ReadonlyMap<string, KubeObject>;
  list(matches: Predicate, exact?: { field: string; value: string }): KubeObject[];
}

/** The part of the watch cache the authorizer reads (WatchCache has it). */
export interface NodeGraphCache {
  forResource(def: ResourceDefinition): CachedKind;
  /** Resolves once the cache holds everything etcd had when called (false on timeout). */
  waitFresh(timeoutMs: number): Promise<boolean>;
}

/** Tuning of the node authorizer. */
export interface NodeAuthorizerOptions {
  /** Longest wait for the cache to catch up before a look-up's denial stands; default 2 s. */
  freshnessWaitMs?: number;
}

/** What one request gets before the cache has been brought up to date, if it needs that. */
type Ruling = Decision | { decision: 'denyUnlessFresher'; reason: string } | { decision: 'allowWhenFresh'; admit: WriteAdmission };

/** A node request being decided: the request, the node, the resource. */
interface NodeRequest {
  a: RequestAttributes;
  node: NodeIdentity;
  r: ResourceAttributes;
}

const allow = (admit?: WriteAdmission): Decision => ({ decision: 'allow', ...(admit ? { admit } : {}) });
const deny = (reason: string): Decision => ({ decision: 'deny', reason });

/** Admission from a problem finder: refuses the write with the reason it returns. */
function admitUnless(a: RequestAttributes, problem: (before: KubeObject | undefined, after: KubeObject | undefined) => string | undefined): WriteAdmission {
  return (before, after) => {
    const why = problem(before, after);
    if (why) throw refusedWrite(a, why);
  };
}

/** Authorizes node credentials; no opinion on anyone else. */
export class NodeAuthorizer implements Authorizer {
  private readonly workItems: ResourceDefinition;
  private readonly leases: ResourceDefinition;
  private readonly events: ResourceDefinition;
  private readonly rules: Map<string, (q: NodeRequest) => Ruling>;
  private readonly waitMs: number;

  constructor(
    private readonly cache: NodeGraphCache,
    registry: Pick<Registry, 'find'>,
    opts: NodeAuthorizerOptions = {},
  ) {
    this.workItems = required(registry, 'cairn.dev', 'v1alpha1', 'workitems');
    this.leases = required(registry, 'coordination.k8s.io', 'v1', 'leases');
    this.events = required(registry, '', 'v1', 'events');
    this.waitMs = opts.freshnessWaitMs ?? 2000;
    this.rules = new Map([
      ['cairn.dev/nodes', (q) => this.nodeRule(q)],
      ['coordination.k8s.io/leases', (q) => this.leaseRule(q)],
      ['cairn.dev/workitems', (q) => this.workItemRule(q)],
      ['cairn.dev/instances', (q) => this.ownerRule(q, 'Instance')],
      ['cairn.dev/volumes', (q) => this.ownerRule(q, 'Volume')],
      ['/events', (q) => this.eventRule(q)],
      ['cairn.dev/clusters', (q) => this.clusterRule(q)],
    ]);
  }

  async authorize(a: RequestAttributes): Promise<Decision> {
    const node = a.user.node;
    if (!node || !a.resource) return { decision: 'noOpinion' };
    const q = { a, node, r: a.resource };
    const first = this.rule(q);
    if (first.decision !== 'denyUnlessFresher' && first.decision !== 'allowWhenFresh') return first;
    const caughtUp = await this.cache.waitFresh(this.waitMs);
    if (first.decision === 'allowWhenFresh') return caughtUp ? allow(first.admit) : deny(`the apiserver's cache did not catch up with etcd within ${this.waitMs} ms; retry`);
    const again = this.rule(q);
    if (again.decision === 'denyUnlessFresher') return deny(again.reason);
    return again.decision === 'allowWhenFresh' ? allow(again.admit) : again;
  }

  private rule(q: NodeRequest): Ruling {
    const { r, node } = q;
    const rule = this.rules.get(`${r.apiGroup}/${r.resource}`);
    if (!rule) return deny(`node identities may use only nodes, leases, workitems, instances, volumes, events and their own cluster, not ${qualified(r)}`);
    if (r.resource === 'clusters') return rule(q); // cluster-scoped: no namespace to compare
    if (r.namespace !== node.cluster) return deny(`node identities act only in their own cluster's namespace "${node.cluster}"`);
    return rule(q);
  }

  /** Its own Node: get, register (create), labels and annotations (update/patch), status freely, and its tunnel (create). */
  private nodeRule({ a, node, r }: NodeRequest): Ruling {
    const own = `a node may only read and write its own Node ${node.cluster}/${node.name}`;
    if (r.subresource === 'status') return r.name === node.name && ['get', 'update', 'patch'].includes(a.verb) ? allow() : deny(`${own} and its status (get, update, patch)`);
    if (r.subresource === 'tunnel') return r.name === node.name && a.verb === 'create' ? allow() : deny(`a node may only open the tunnel of its own Node ${node.cluster}/${node.name}`);
    if (r.subresource) return deny(`${own}, not its ${r.subresource}`);
    if (a.verb === 'create') return allow(admitUnless(a, (before, after) => nodeWriteProblem(before, after, node)));
    if (r.name !== node.name) return deny(own);
    if (a.verb === 'get') return allow();
    if (a.verb === 'update' || a.verb === 'patch') return allow(admitUnless(a, (before, after) => nodeWriteProblem(before, after, node)));
    return deny(`${own}: get, create, update and patch (a node deletes nothing but its own Events)`);
  }

  /** Its heartbeat Lease and the fencing Leases of its instances (or held by it): get, create, update, patch. */
  private leaseRule(q: NodeRequest): Ruling {
    const { a, node, r } = q;
    const which = `its heartbeat Lease ${heartbeatLease(node)} and the fencing Leases instance-<name> of the instances placed on it`;
    if (a.verb === 'create' && !r.name) return { decision: 'allowWhenFresh', admit: admitUnless(a, (_b, after) => this.leaseCreateProblem(after, node)) };
    if (!['get', 'create', 'update', 'patch'].includes(a.verb) || !r.name) return deny(`a node may only get, create, update and patch ${which} (a node deletes nothing but its own Events)`);
    if (r.name === heartbeatLease(node)) return allow(admitUnless(a, (_b, after) => leaseHolderProblem(after, node)));
    const holderCheck = admitUnless(a, (before, after) => leaseHolderProblem(after, node) ?? claimTakeoverProblem(before, after, node));
    const instance = fencedInstance(r.name);
    if (instance === undefined) return deny(`a node may only use ${which}`);
    const placements = this.placements(node, 'Instance', instance);
    if (placements.length > 0) {
      const peer = migrationTarget(placements);
      if (peer === undefined) return allow(holderCheck);
      // A migration source may hand over only a lease it holds (checked on the stored object).
      return allow(admitUnless(a, (before, after) => leaseHolderProblem(after, node, leaseHolderOf(before) === holderIdentity(node) ? peer : undefined) ?? claimTakeoverProblem(before, after, node)));
    }
    if (this.leaseHolder(node, r.name) === holderIdentity(node)) {
      // Authorized by holding it: the stored lease must still be the node's (no re-creating it).
      return allow(admitUnless(a, (before, after) => (leaseHolderOf(before) === holderIdentity(node) ? leaseHolderProblem(after, node) : `the node does not hold Lease ${r.name}`)));
    }
    return { decision: 'denyUnlessFresher', reason: `no WorkItem places instance ${instance} on node ${node.name}, and the node does not hold its fencing Lease` };
  }

  private leaseCreateProblem(after: KubeObject | undefined, node: NodeIdentity): string | undefined {
    const name = after?.metadata.name ?? '';
    const instance = fencedInstance(name);
    if (name !== heartbeatLease(node) && (instance === undefined || !this.placed(node, 'Instance', instance))) {
      return `a node may only create its heartbeat Lease ${heartbeatLease(node)} and the fencing Leases of instances placed on it, not ${name}`;
    }
    return leaseHolderProblem(after, node);
  }

  /** Its WorkItems: list/watch by spec.nodeName, get, status writes, and its finalizer, labels and annotations. */
  private workItemRule({ a, node, r }: NodeRequest): Ruling {
    if (a.verb === 'list' || a.verb === 'watch') {
      return selectsOnlyNode(r.fieldSelector, node) ? allow() : deny(`a node may only ${a.verb} the WorkItems addressed to it: add fieldSelector spec.nodeName=${node.name}`);
    }
    if (!r.name || (r.subresource && r.subresource !== 'status') || !['get', 'update', 'patch'].includes(a.verb)) {
      return deny('a node may only get the WorkItems addressed to it, write their status, and add or remove its finalizer, labels and annotations');
    }
    const w = this.cached(this.workItems, node, r.name);
    if (!w || !isNodesWorkItem(w, node)) return { decision: 'denyUnlessFresher', reason: `WorkItem ${node.cluster}/${r.name} is not addressed to node ${node.name}` };
    if (a.verb === 'get') return allow();
    if (r.subresource === 'status') return allow(admitUnless(a, (before) => workItemStatusProblem(before, node)));
    return allow(admitUnless(a, (before, after) => workItemWriteProblem(before, after, node)));
  }

  /** The Instance or Volume a WorkItem of the node is a piece of: get. */
  private ownerRule({ a, node, r }: NodeRequest, kind: 'Instance' | 'Volume'): Ruling {
    const what = `a node may only get the ${kind}s its WorkItems are pieces of`;
    if (a.verb !== 'get' || !r.name || r.subresource) return deny(what);
    return this.placed(node, kind, r.name) ? allow() : { decision: 'denyUnlessFresher', reason: `no WorkItem of node ${node.name} is a piece of ${kind} ${node.cluster}/${r.name}` };
  }

  /** Its own Cluster: get (the agent keeps a copy for a restore of etcd, agent/metadata-copy.ts). */
  private clusterRule({ a, node, r }: NodeRequest): Ruling {
    return a.verb === 'get' && r.name === node.cluster && !r.subresource ? allow() : deny(`a node may only get its own Cluster ${node.cluster}`);
  }

  /** Events it reports: create, update, patch, and delete of its own. */
  private eventRule({ a, node, r }: NodeRequest): Ruling {
    const ownership = (ev: KubeObject | undefined) => (ev ? eventOwnershipProblem(ev, node) : undefined);
    if (a.verb === 'create') return allow(admitUnless(a, (_b, after) => ownership(after)));
    if ((a.verb === 'update' || a.verb === 'patch') && r.name) return allow(admitUnless(a, (before, after) => ownership(before) ?? ownership(after)));
    if (a.verb === 'delete' && r.name) {
      const ev = this.cached(this.events, node, r.name);
      const problem = ev ? eventOwnershipProblem(ev, node) : `Event ${node.cluster}/${r.name} is not known`;
      return problem ? { decision: 'denyUnlessFresher', reason: problem } : allow();
    }
    return deny(`a node may only create Events, and update, patch and delete those it reported (source.host or reportingInstance "${node.name}")`);
  }

  /** Whether a WorkItem places a piece of the Instance or Volume on the node. */
  private placed(node: NodeIdentity, kind: 'Instance' | 'Volume', name: string): boolean {
    return this.placements(node, kind, name).length > 0;
  }

  /** The node's WorkItems of one Instance or Volume. */
  private placements(node: NodeIdentity, kind: 'Instance' | 'Volume', name: string): KubeObject[] {
    return this.cache.forResource(this.workItems).list((w) => isNodesWorkItem(w, node, { kind, name }), { field: 'spec.owner.name', value: name });
  }

  private leaseHolder(node: NodeIdentity, name: string): string | undefined {
    return leaseHolderOf(this.cached(this.leases, node, name));
  }

  private cached(def: ResourceDefinition, node: NodeIdentity, name: string): KubeObject | undefined {
    return this.cache.forResource(def).objects.get(objectKey(def, node.cluster, name));
  }
}

/** The target node of a live migration whose source is the node of these WorkItems, as their spec says. */
function migrationTarget(placements: KubeObject[]): string | undefined {
  const migrations = placements.map((w) => (w.spec as { instance?: { migration?: { role?: string; peerNodeName?: string } } }).instance?.migration);
  return migrations.find((m) => m?.role === 'Source')?.peerNodeName;
}

function leaseHolderOf(lease: KubeObject | undefined): string | undefined {
  return (lease?.spec as { holderIdentity?: string | null } | undefined)?.holderIdentity ?? undefined;
}

function qualified(r: ResourceAttributes): string {
  return `${r.apiGroup ? `${r.resource}.${r.apiGroup}` : r.resource}${r.subresource ? `/${r.subresource}` : ''}`;
}

function required(registry: Pick<Registry, 'find'>, group: string, version: string, plural: string): ResourceDefinition {
  const def = registry.find(group, version, plural);
  if (!def) throw new Error(`the node authorizer needs ${plural}${group ? `.${group}` : ''}/${version} in the registry; is its CRD in the CRD directory?`);
  return def;
}

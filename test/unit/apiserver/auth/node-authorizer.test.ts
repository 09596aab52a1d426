/**
 * The node authorizer against a real ResourceCache filled by hand (no etcd):
 * what a node may read and write, the admission checks on what it writes,
 * the second look after the cache caught up, and the cost of a look-up.
 */
import { expect } from 'chai';
import { NodeAuthorizer, type NodeGraphCache } from '../../../../apiserver/auth/node-authorizer.js';
import { eventOwnershipProblem, fencedInstance, metadataOnlyChange, selectsOnlyNode } from '../../../../apiserver/auth/node-rules.js';
import type { RequestAttributes, ResourceAttributes } from '../../../../apiserver/auth/attributes.js';
import type { Decision } from '../../../../apiserver/auth/authorizer.js';
import { eventDefinition } from '../../../../apiserver/builtin/event.js';
import { leaseDefinition } from '../../../../apiserver/builtin/lease.js';
import { loadCrds } from '../../../../apiserver/crd-loader.js';
import { ApiError } from '../../../../apiserver/errors.js';
import { Registry } from '../../../../apiserver/registry.js';
import type { ResourceDefinition } from '../../../../apiserver/resources.js';
import type { KubeObject } from '../../../../apiserver/storage/codec.js';
import { objectKey, resourcePrefix } from '../../../../apiserver/storage/keys.js';
import { ResourceCache } from '../../../../apiserver/storage/resource-cache.js';
import { CRD_DIR } from '../../../support/paths.js';

const registry = new Registry([...loadCrds(CRD_DIR), leaseDefinition, eventDefinition]);
const def = (group: string, version: string, plural: string) => registry.find(group, version, plural)!;
const WORKITEMS = def('cairn.dev', 'v1alpha1', 'workitems');
const NODE_A = { name: 'system:node:c1:node-a', groups: ['system:nodes', 'system:authenticated'], node: { cluster: 'c1', name: 'node-a' } };

/** A watch cache whose objects the test sets; `lagging` objects appear only once someone waits for freshness. */
class FakeCache implements NodeGraphCache {
  readonly caches = new Map<ResourceDefinition, ResourceCache>();
  lagging: [ResourceDefinition, KubeObject][] = [];
  freshWaits = 0;

  forResource(d: ResourceDefinition): ResourceCache {
    let c = this.caches.get(d);
    if (!c) this.caches.set(d, (c = new ResourceCache(d, resourcePrefix(d), 100)));
    return c;
  }

  put(d: ResourceDefinition, obj: KubeObject): void {
    const key = objectKey(d, obj.metadata.namespace, obj.metadata.name!);
    this.forResource(d).apply({ type: 'put', key, rev: 1, obj, prev: null });
  }

  async waitFresh(): Promise<boolean> {
    this.freshWaits++;
    for (const [d, obj] of this.lagging.splice(0)) this.put(d, obj);
    return true;
  }
}

const workItem = (name: string, nodeName: string, owner: { kind: string; name: string }, extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({
  apiVersion: 'cairn.dev/v1alpha1',
  kind: 'WorkItem',
  metadata: { name, namespace: 'c1', finalizers: ['cairn.dev/agent'], ...extra },
  spec: { nodeName, type: owner.kind === 'Instance' ? 'InstanceRuntime' : 'VolumeReplica', owner },
});
const lease = (name: string, holder?: string, namespace = 'c1'): KubeObject => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace }, spec: { holderIdentity: holder, leaseDurationSeconds: 30 } });
const event = (name: string, host?: string, extra: Record<string, unknown> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Event', metadata: { name, namespace: 'c1' }, involvedObject: { kind: 'WorkItem', name: 'w', namespace: 'c1' }, ...(host ? { source: { component: 'cairn-agent', host } } : {}), ...extra });

const GROUP_OF: Record<string, string> = { leases: 'coordination.k8s.io', events: '', tokens: 'auth.cairn.dev', namespaces: '', roles: 'rbac.authorization.k8s.io' };
function req(verb: string, resource: string, rest: Partial<ResourceAttributes> = {}, user = NODE_A): RequestAttributes {
  const [plural, subresource] = resource.split('/');
  return { user, verb, resource: { apiGroup: GROUP_OF[plural!] ?? 'cairn.dev', resource: plural!, namespace: 'c1', ...(subresource ? { subresource } : {}), ...rest } };
}

/** The refusal an admission check throws, or undefined when it lets the write through. */
function admission(d: Decision, before: KubeObject | undefined, after: KubeObject | undefined): string | undefined {
  expect(d.decision, JSON.stringify(d)).to.equal('allow');
  try {
    (d as { admit?: (b?: KubeObject, a?: KubeObject) => void }).admit?.(before, after);
    return undefined;
  } catch (err) {
    expect(err).to.be.instanceOf(ApiError);
    expect((err as ApiError).code).to.equal(403);
    return (err as ApiError).message;
  }
}

describe('node authorizer', () => {
  let cache: FakeCache;
  let authz: NodeAuthorizer;
  const decide = (a: RequestAttributes) => authz.authorize(a);
  const decision = async (a: RequestAttributes) => (await decide(a)).decision;

  beforeEach(() => {
    cache = new FakeCache();
    authz = new NodeAuthorizer(cache, registry, { freshnessWaitMs: 10 });
    cache.put(WORKITEMS, workItem('web.node-a', 'node-a', { kind: 'Instance', name: 'web' }));
    cache.put(WORKITEMS, workItem('db.node-b', 'node-b', { kind: 'Instance', name: 'db' }));
    cache.put(WORKITEMS, workItem('data.r0.node-a', 'node-a', { kind: 'Volume', name: 'data' }));
    cache.put(leaseDefinition, lease('node-node-a', 'node-a'));
    cache.put(leaseDefinition, lease('node-node-b', 'node-b'));
    cache.put(leaseDefinition, lease('instance-old', 'node-a'));
    cache.put(eventDefinition, event('mine', 'node-a'));
    cache.put(eventDefinition, event('theirs', 'node-b'));
  });

  it('has no opinion on other users and on non-resource paths', async () => {
    expect(await decision(req('delete', 'instances', { name: 'x' }, { name: 'alice', groups: [] } as never))).to.equal('noOpinion');
    expect(await decision({ user: NODE_A, verb: 'post', nonResourcePath: '/cairn/v1/rotate' })).to.equal('noOpinion');
    expect(await decision({ user: NODE_A, verb: 'get', nonResourcePath: '/apis' })).to.equal('noOpinion');
  });

  it('denies every kind a node has no business with, and every other namespace', async () => {
    for (const r of ['tokens', 'namespaces', 'roles']) {
      const d = await decide(req('get', r, { name: 'x' }));
      expect(d.decision, r).to.equal('deny');
      expect((d as { reason: string }).reason).to.match(/node identities may use only nodes, leases, workitems, instances, volumes, events and their own cluster/);
    }
    const other = await decide(req('get', 'leases', { name: 'cairn-controller', namespace: 'cairn-system' }));
    expect(other).to.deep.equal({ decision: 'deny', reason: 'node identities act only in their own cluster\'s namespace "c1"' });
  });

  describe('Nodes', () => {
    const node = (name: string, spec: Record<string, unknown> = {}, labels: Record<string, string> = {}): KubeObject => ({ metadata: { name, namespace: 'c1', labels }, spec, status: { phase: 'Ready' } });

    it('reads, registers and labels its own Node and writes its status; nothing of another node', async () => {
      expect(await decision(req('get', 'nodes', { name: 'node-a' }))).to.equal('allow');
      expect(await decision(req('update', 'nodes/status', { name: 'node-a' }))).to.equal('allow');
      expect(await decision(req('patch', 'nodes/status', { name: 'node-a' }))).to.equal('allow');
      for (const [verb, r, name] of [['get', 'nodes', 'node-b'], ['update', 'nodes/status', 'node-b'], ['patch', 'nodes', 'node-b'], ['list', 'nodes', undefined], ['watch', 'nodes', undefined], ['delete', 'nodes', 'node-a'], ['deletecollection', 'nodes', undefined]] as const) {
        expect(await decision(req(verb, r, name ? { name } : {})), `${verb} ${r} ${name}`).to.equal('deny');
      }
    });

    it('admits a registration of itself with an operator-neutral spec only', async () => {
      const d = await decide(req('create', 'nodes'));
      expect(admission(d, undefined, node('node-a', { unschedulable: false, drain: false }))).to.equal(undefined);
      expect(admission(d, undefined, node('node-b'))).to.match(/may only register itself \(Node c1\/node-a\), not c1\/node-b/);
      expect(admission(d, undefined, node('node-a', { drain: true }))).to.match(/spec.drain is for operators to set/);
    });

    it('admits label and annotation changes of its Node, not spec changes', async () => {
      const d = await decide(req('patch', 'nodes', { name: 'node-a' }));
      expect(admission(d, node('node-a'), { ...node('node-a', {}, { zone: 'b' }), metadata: { ...node('node-a').metadata, labels: { zone: 'b' }, annotations: { x: 'y' }, resourceVersion: '9' } })).to.equal(undefined);
      expect(admission(d, node('node-a'), node('node-a', { unschedulable: true }))).to.match(/^patch nodes.cairn.dev "node-a" in namespace "c1" is forbidden for User "system:node:c1:node-a": a node may not change spec/);
      expect(admission(d, node('node-a'), { ...node('node-a'), metadata: { ...node('node-a').metadata, ownerReferences: [{ name: 'x' }] } })).to.match(/may not change metadata.ownerReferences/);
    });

    it("leaves labels in the cairn.dev domain to operators: a node may not give itself one (to draw another team's nodeSelector), change or remove one", async () => {
      const patch = await decide(req('patch', 'nodes', { name: 'node-a' }));
      const create = await decide(req('create', 'nodes'));
      const claim = /may not set or change metadata.labels\["dedicated.cairn.dev\/team"\]: keys in the cairn.dev domain/;
      expect(admission(create, undefined, node('node-a', {}, { 'dedicated.cairn.dev/team': 'db' }))).to.match(claim);
      expect(admission(patch, node('node-a'), node('node-a', {}, { 'dedicated.cairn.dev/team': 'db' }))).to.match(claim);
      expect(admission(patch, node('node-a', {}, { 'cairn.dev/pool': 'a' }), node('node-a'))).to.match(/metadata.labels\["cairn.dev\/pool"\]/);
      expect(admission(patch, node('node-a', {}, { 'cairn.dev/pool': 'a' }), node('node-a', {}, { 'cairn.dev/pool': 'a', zone: 'b', 'notcairn.dev/x': 'y' }))).to.equal(undefined);
    });
  });

  describe('Leases', () => {
    it('gets, creates and renews its heartbeat and the fencing leases of its instances; never deletes or lists', async () => {
      for (const name of ['node-node-a', 'instance-web']) {
        for (const verb of ['get', 'update', 'patch']) expect(await decision(req(verb, 'leases', { name })), `${verb} ${name}`).to.equal('allow');
        expect(await decision(req('delete', 'leases', { name })), `delete ${name}`).to.equal('deny');
      }
      for (const verb of ['list', 'watch', 'deletecollection']) expect(await decision(req(verb, 'leases')), verb).to.equal('deny');
    });

    it('denies another node heartbeat, fencing leases of instances placed elsewhere, and other leases', async () => {
      for (const name of ['node-node-b', 'instance-db', 'instance-nowhere', 'cairn-controller', 'instance-']) {
        expect(await decision(req('get', 'leases', { name })), name).to.equal('deny');
      }
      const d = await decide(req('update', 'leases', { name: 'instance-db' }));
      expect((d as { reason: string }).reason).to.equal('no WorkItem places instance db on node node-a, and the node does not hold its fencing Lease');
    });

    it('refuses to hand a lease to another holder, allows releasing it', async () => {
      const d = await decide(req('update', 'leases', { name: 'instance-web' }));
      expect(admission(d, lease('instance-web', 'node-a'), lease('instance-web', undefined))).to.equal(undefined);
      expect(admission(d, lease('instance-web', 'node-a'), lease('instance-web', 'node-b'))).to.match(/may only hold a Lease itself \(spec.holderIdentity "node-a"\) or release it, not give it to "node-b"/);
    });

    it('hands a fencing lease it holds to the target its WorkItem names as the source of a live migration, and to no one else', async () => {
      const source = workItem('vm.node-a', 'node-a', { kind: 'Instance', name: 'vm' });
      (source.spec as Record<string, unknown>).instance = { migration: { id: 'm1', role: 'Source', peerNodeName: 'node-b' } };
      cache.put(WORKITEMS, source);
      const d = await decide(req('update', 'leases', { name: 'instance-vm' }));
      expect(admission(d, lease('instance-vm', 'node-a'), lease('instance-vm', 'node-b'))).to.equal(undefined);
      expect(admission(d, lease('instance-vm', 'node-a'), lease('instance-vm', 'node-c'))).to.match(/not give it to "node-c"/);
      expect(admission(d, lease('instance-vm', 'node-c'), lease('instance-vm', 'node-b'))).to.match(/not give it to "node-b"/);
      (source.spec as { instance: { migration: { role: string } } }).instance.migration.role = 'Target';
      cache.put(WORKITEMS, source);
      const asTarget = await decide(req('update', 'leases', { name: 'instance-vm' }));
      expect(admission(asTarget, lease('instance-vm', 'node-a'), lease('instance-vm', 'node-b'))).to.match(/not give it to "node-b"/);
    });

    it('renews or releases a fencing lease it still holds after its WorkItem went, but may not re-create it', async () => {
      const d = await decide(req('update', 'leases', { name: 'instance-old' }));
      expect(admission(d, lease('instance-old', 'node-a'), lease('instance-old', undefined))).to.equal(undefined);
      expect(admission(d, lease('instance-old', 'node-b'), lease('instance-old', 'node-a'))).to.match(/does not hold Lease instance-old/);
      expect(admission(d, undefined, lease('instance-old', 'node-a'))).to.match(/does not hold Lease instance-old/);
    });

    it('creates only its heartbeat and fencing leases of its instances, after the cache caught up', async () => {
      const d = await decide(req('create', 'leases'));
      expect(cache.freshWaits).to.equal(1);
      expect(admission(d, undefined, lease('node-node-a', 'node-a'))).to.equal(undefined);
      expect(admission(d, undefined, lease('instance-web', 'node-a'))).to.equal(undefined);
      expect(admission(d, undefined, lease('node-node-b', 'node-b'))).to.match(/may only create its heartbeat Lease node-node-a .* not node-node-b/);
      expect(admission(d, undefined, lease('instance-db', 'node-a'))).to.match(/not instance-db/);
    });
  });

  describe('WorkItems', () => {
    it('lists and watches only with a field selector demanding its node, other requirements allowed', async () => {
      for (const verb of ['list', 'watch']) {
        expect(await decision(req(verb, 'workitems', { fieldSelector: 'spec.nodeName=node-a' }))).to.equal('allow');
        expect(await decision(req(verb, 'workitems', { fieldSelector: 'spec.type=InstanceRuntime,spec.nodeName==node-a' }))).to.equal('allow');
        for (const fieldSelector of [undefined, '', 'spec.nodeName=node-b', 'spec.nodeName!=node-b', 'spec.type=InstanceRuntime', 'spec.nodeName=node-a\\']) {
          expect(await decision(req(verb, 'workitems', fieldSelector === undefined ? {} : { fieldSelector })), `${verb} ${fieldSelector}`).to.equal('deny');
        }
      }
      expect(await decision(req('list', 'workitems', { namespace: undefined, fieldSelector: 'spec.nodeName=node-a' }))).to.equal('deny');
      const d = await decide(req('list', 'workitems'));
      expect((d as { reason: string }).reason).to.equal('a node may only list the WorkItems addressed to it: add fieldSelector spec.nodeName=node-a');
    });

    it('gets its WorkItems and writes their status; not another node one; never creates or deletes', async () => {
      for (const verb of ['get', 'update', 'patch']) {
        expect(await decision(req(verb, 'workitems', { name: 'web.node-a' })), verb).to.equal('allow');
        expect(await decision(req(verb, 'workitems', { name: 'db.node-b' })), verb).to.equal('deny');
      }
      expect(await decision(req('update', 'workitems/status', { name: 'web.node-a' }))).to.equal('allow');
      expect(await decision(req('update', 'workitems/status', { name: 'db.node-b' }))).to.equal('deny');
      for (const verb of ['create', 'delete', 'deletecollection']) expect(await decision(req(verb, 'workitems', verb === 'delete' ? { name: 'web.node-a' } : {})), verb).to.equal('deny');
    });

    it('admits removing or adding its own finalizer, labels and annotations; not spec or other finalizers', async () => {
      const d = await decide(req('patch', 'workitems', { name: 'web.node-a' }));
      const before = workItem('web.node-a', 'node-a', { kind: 'Instance', name: 'web' }, { finalizers: ['cairn.dev/agent', 'other'] });
      const withMeta = (m: Partial<KubeObject['metadata']>) => ({ ...before, metadata: { ...before.metadata, ...m } });
      expect(admission(d, before, withMeta({ finalizers: ['other'], labels: { a: 'b' } }))).to.equal(undefined);
      expect(admission(d, before, withMeta({ finalizers: ['cairn.dev/agent'] }))).to.match(/may not add or remove the finalizer other \(only its own, cairn.dev\/agent\)/);
      expect(admission(d, before, { ...before, spec: { ...before.spec, nodeName: 'node-b' } })).to.match(/may not change spec/);
      // The controller finds a WorkItem's owner by these labels: relabelled, node-a's piece of web would pass for a piece of db.
      const owned = workItem('web.node-a', 'node-a', { kind: 'Instance', name: 'web' }, { labels: { 'cairn.dev/owner-name': 'web', app: 'x' }, annotations: { 'cairn.dev/spec-hash': 'h' } });
      const withOwned = (m: Partial<KubeObject['metadata']>) => ({ ...owned, metadata: { ...owned.metadata, ...m } });
      expect(admission(d, owned, withOwned({ labels: { 'cairn.dev/owner-name': 'db', app: 'x' } }))).to.match(/may not set or change metadata.labels\["cairn.dev\/owner-name"\]/);
      expect(admission(d, owned, withOwned({ annotations: {} }))).to.match(/metadata.annotations\["cairn.dev\/spec-hash"\]/);
      expect(admission(d, owned, withOwned({ labels: { 'cairn.dev/owner-name': 'web', app: 'y' } }))).to.equal(undefined);
      // Admission judges the stored object, not the cache: a WorkItem moved meanwhile is refused.
      expect(admission(d, workItem('web.node-a', 'node-b', { kind: 'Instance', name: 'web' }), before)).to.match(/addressed to node node-b, not to node-a/);
      const status = await decide(req('update', 'workitems/status', { name: 'web.node-a' }));
      expect(admission(status, before, { ...before, status: { phase: 'Done' } })).to.equal(undefined);
      expect(admission(status, workItem('web.node-a', 'node-b', { kind: 'Instance', name: 'web' }), before)).to.match(/addressed to node node-b/);
    });

    it('looks again once the cache caught up before denying (a WorkItem another replica served first)', async () => {
      cache.lagging.push([WORKITEMS, workItem('new.node-a', 'node-a', { kind: 'Instance', name: 'new' })]);
      expect(await decision(req('update', 'workitems/status', { name: 'new.node-a' }))).to.equal('allow');
      expect(await decision(req('update', 'leases', { name: 'instance-new' }))).to.equal('allow');
      expect(cache.freshWaits).to.equal(1);
      expect(await decision(req('get', 'workitems', { name: 'missing' }))).to.equal('deny');
      expect(cache.freshWaits).to.equal(2);
    });
  });

  it('reads its own Cluster (kept for a restore from the agents), only by get; no other Cluster', async () => {
    const cluster = (verb: string, name?: string) => req(verb, 'clusters', { namespace: undefined, ...(name ? { name } : {}) });
    expect(await decision(cluster('get', 'c1'))).to.equal('allow');
    expect(await decide(cluster('get', 'c2'))).to.deep.equal({ decision: 'deny', reason: 'a node may only get its own Cluster c1' });
    for (const verb of ['list', 'watch', 'update', 'patch', 'delete']) expect(await decision(cluster(verb, ['list', 'watch'].includes(verb) ? undefined : 'c1')), verb).to.equal('deny');
  });

  it('reads only the Instances and Volumes its WorkItems are pieces of, and only by get', async () => {
    expect(await decision(req('get', 'instances', { name: 'web' }))).to.equal('allow');
    expect(await decision(req('get', 'volumes', { name: 'data' }))).to.equal('allow');
    expect(await decision(req('get', 'volumes', { name: 'web' }))).to.equal('deny');
    expect(await decision(req('get', 'instances', { name: 'db' }))).to.equal('deny');
    for (const verb of ['list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection']) {
      expect(await decision(req(verb, 'instances', ['list', 'watch', 'create', 'deletecollection'].includes(verb) ? {} : { name: 'web' })), verb).to.equal('deny');
    }
    expect(await decision(req('update', 'instances/status', { name: 'web' }))).to.equal('deny');
  });

  describe('Events', () => {
    it('creates Events it reports, patches and deletes only its own, never reads them', async () => {
      const create = await decide(req('create', 'events'));
      expect(admission(create, undefined, event('e1', 'node-a'))).to.equal(undefined);
      expect(admission(create, undefined, event('e1', undefined, { reportingInstance: 'node-a' }))).to.equal(undefined);
      expect(admission(create, undefined, event('e1', 'node-b'))).to.match(/source.host "node-b": a node writes only Events it reports itself/);
      expect(admission(create, undefined, event('e1'))).to.match(/must name its node in source.host or reportingInstance/);
      const patch = await decide(req('patch', 'events', { name: 'theirs' }));
      expect(admission(patch, event('theirs', 'node-b'), event('theirs', 'node-a'))).to.match(/source.host "node-b"/);
      expect(admission(patch, event('mine', 'node-a'), { ...event('mine', 'node-a'), count: 2 })).to.equal(undefined);
      expect(await decision(req('delete', 'events', { name: 'mine' }))).to.equal('allow');
      expect(await decision(req('delete', 'events', { name: 'theirs' }))).to.equal('deny');
      for (const verb of ['get', 'list', 'watch', 'deletecollection']) expect(await decision(req(verb, 'events', verb === 'get' ? { name: 'mine' } : {})), verb).to.equal('deny');
    });
  });

  it('decides a fencing lease by the owner index: O(WorkItems of that instance), not of the cluster', async () => {
    for (let i = 0; i < 5000; i++) cache.put(WORKITEMS, workItem(`i${i}.node-a`, 'node-a', { kind: 'Instance', name: `i${i}` }));
    const wi = cache.forResource(WORKITEMS);
    let calls = 0;
    const list = wi.list.bind(wi);
    wi.list = (pred, exact) => list((o) => (calls++, pred(o)), exact);
    expect(await decision(req('update', 'leases', { name: 'instance-i4999' }))).to.equal('allow');
    expect(calls).to.equal(1);
  });
});

describe('node rules', () => {
  const node = { cluster: 'c1', name: 'node-a' };

  it('names fencing leases instance-<instance>', () => {
    expect(fencedInstance('instance-web')).to.equal('web');
    expect(fencedInstance('instance-')).to.equal(undefined);
    expect(fencedInstance('node-web')).to.equal(undefined);
  });

  it('a selector selects only the node when it demands spec.nodeName=<node>', () => {
    expect(selectsOnlyNode('spec.nodeName=node-a', node)).to.equal(true);
    expect(selectsOnlyNode('metadata.name=x,spec.nodeName=node-a', node)).to.equal(true);
    expect(selectsOnlyNode('spec.nodeName=node-ab', node)).to.equal(false);
    expect(selectsOnlyNode('spec.nodeName in (node-a)', node)).to.equal(false);
  });

  it('a metadata-only change ignores what the server sets and status', () => {
    const before: KubeObject = { metadata: { name: 'n', resourceVersion: '1', generation: 1 }, spec: { a: 1 }, status: { x: 1 } };
    expect(metadataOnlyChange(before, { ...before, metadata: { name: 'n', resourceVersion: '2', generation: 2, labels: { a: 'b' } }, status: { x: 2 } })).to.equal(undefined);
    expect(metadataOnlyChange(before, { ...before, extra: true })).to.equal('a node may not change extra');
  });

  it('an Event is the node own when it names it and nobody else, about its cluster', () => {
    const ev = (o: Record<string, unknown>): KubeObject => ({ metadata: { name: 'e', namespace: 'c1' }, ...o });
    expect(eventOwnershipProblem(ev({ source: { host: 'node-a' }, reportingInstance: 'node-a' }), node)).to.equal(undefined);
    expect(eventOwnershipProblem(ev({ source: { host: 'node-a' }, reportingInstance: 'node-b' }), node)).to.match(/reportingInstance "node-b"/);
    expect(eventOwnershipProblem(ev({ source: { host: 'node-a' }, involvedObject: { namespace: 'c2' } }), node)).to.match(/about an object in namespace c2/);
  });
});

/**
 * Controller acceptance, deletion with finalizers, against a real etcd +
 * apiserver with fake agents. An Instance or Volume being deleted keeps
 * its controller finalizer until its WorkItems are gone, and a WorkItem
 * stays until its node's agent removed the agent finalizer; deleting the
 * Cluster takes everything in its namespace down the same way. Afterwards
 * nothing is left: no Cairn object and no fencing lease.
 */
import { expect } from 'chai';
import { getCondition } from '../../../api/conditions.js';
import type { Instance } from '../../../api/instance.js';
import { AGENT_FINALIZER, CLUSTER_FINALIZER, CONTROLLER_FINALIZER, OWNER_KIND_LABEL, OWNER_NAME_LABEL } from '../../../api/names.js';
import type { WorkItem } from '../../../api/workitem.js';
import { dumpLogs, startControllerEnv, until, type ControllerEnv } from '../../support/controller-env.js';
import { rawRequest } from '../../support/http.js';
import type { FakeAgent } from '../../support/fake-agent.js';

const NS = 'del';

function instanceSpec(name: string): Instance {
  return { metadata: { name, namespace: NS }, spec: { cpus: 1, memory: '128Mi', process: { command: ['/bin/sleep', '3600'] } } };
}

describe('controller: deletion with finalizers leaves nothing behind (real etcd + apiserver, fake agents)', function () {
  this.timeout(60_000);
  let c: ControllerEnv;
  let agents: FakeAgent[];

  const workItemsOf = async (kind: 'Instance' | 'Volume', name: string): Promise<WorkItem[]> =>
    (await c.client.list('WorkItem', { namespace: NS, labelSelector: `${OWNER_KIND_LABEL}=${kind},${OWNER_NAME_LABEL}=${name}` })).items;
  const holdCleanup = (hold: boolean) => agents?.forEach((a) => (a.finalize = !hold));
  const ready = async () => {
    await until('workloads Running/Ready', async () => {
      const is = (await c.client.list('Instance', { namespace: NS })).items;
      const vs = (await c.client.list('Volume', { namespace: NS })).items;
      return is.every((i) => i.status?.phase === 'Running') && vs.every((v) => v.status?.phase === 'Ready') ? true : undefined;
    });
  };

  before(async () => {
    c = await startControllerEnv();
    await c.createCluster(NS);
    agents = [await c.startAgent(NS, 'n1'), await c.startAgent(NS, 'n2')];
    await c.client.create('Instance', instanceSpec('app'));
    await c.client.create('Volume', { metadata: { name: 'store', namespace: NS }, spec: { size: '1Gi', replicas: 2 } });
    await ready();
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') dumpLogs(c);
    holdCleanup(false);
  });
  after(async () => c?.stop());

  it('deleting an instance: the Instance waits for its WorkItem, which waits for the agent; then both are gone with the fencing lease', async () => {
    const [wi] = await workItemsOf('Instance', 'app');
    const agent = agents.find((a) => a.nodeName === wi!.spec.nodeName)!;
    expect(agent.heldClaims).to.include('instance-app');
    holdCleanup(true);
    await c.client.delete('Instance', NS, 'app');

    const stuck = await until('WorkItem terminating', async () => {
      const [w] = await workItemsOf('Instance', 'app');
      return w?.metadata.deletionTimestamp ? w : undefined;
    });
    expect(stuck.metadata.finalizers).to.deep.equal([AGENT_FINALIZER]);
    const inst = await until('Instance Stopping', async () => {
      const i = await c.client.get('Instance', NS, 'app');
      return i?.status?.phase === 'Stopping' ? i : undefined;
    });
    expect(inst.metadata.deletionTimestamp).to.be.a('string');
    expect(inst.metadata.finalizers).to.deep.equal([CONTROLLER_FINALIZER]);
    expect(inst.status!.reason).to.equal('Deleting');
    // Held while the agent has not let go.
    await new Promise((r) => setTimeout(r, 500));
    expect(await c.client.get('Instance', NS, 'app')).to.not.equal(undefined);

    holdCleanup(false);
    await until('Instance and its WorkItem gone', async () => ((await c.client.get('Instance', NS, 'app')) || (await workItemsOf('Instance', 'app')).length ? undefined : true));
    expect(agent.records.some((r) => r.what === 'finalized' && r.workItem === stuck.metadata.name)).to.equal(true);
    expect((await c.leases(NS)).map((l) => l.metadata!.name)).to.not.include('instance-app');
  });

  it('deleting a volume: both replica WorkItems are finalized by their agents, then the Volume is gone', async () => {
    holdCleanup(true);
    await c.client.delete('Volume', NS, 'store');
    const vol = await until('Volume Deleting with terminating replicas', async () => {
      const v = await c.client.get('Volume', NS, 'store');
      const items = await workItemsOf('Volume', 'store');
      const replicasDeleting = v?.status?.replicas?.length === 2 && v.status.replicas.every((r) => r.state === 'Deleting');
      return v?.status?.phase === 'Deleting' && replicasDeleting && items.length === 2 && items.every((w) => w.metadata.deletionTimestamp) ? v : undefined;
    });
    expect(vol.metadata.finalizers).to.deep.equal([CONTROLLER_FINALIZER]);
    expect(getCondition(vol.status!.conditions, 'Ready')).to.include({ status: 'False', reason: 'Deleting' });
    holdCleanup(false);
    await until('Volume and WorkItems gone', async () => ((await c.client.get('Volume', NS, 'store')) || (await workItemsOf('Volume', 'store')).length ? undefined : true));
    const finalized = agents.flatMap((a) => a.records.filter((r) => r.what === 'finalized' && r.workItem.startsWith('store.r')).map((r) => r.workItem));
    expect(finalized.sort()).to.have.length(2);
  });

  it('deleting the Cluster deletes its instances, volumes, WorkItems and nodes, then the Cluster itself', async () => {
    for (const n of ['x1', 'x2', 'x3']) await c.client.create('Instance', instanceSpec(n));
    await c.client.create('Volume', { metadata: { name: 'v2', namespace: NS }, spec: { size: '1Gi', replicas: 2 } });
    await ready();
    const cluster = await c.client.get('Cluster', undefined, NS);
    expect(cluster!.metadata.finalizers).to.include(CLUSTER_FINALIZER);
    // What else a tenant keeps in the namespace, and the Tokens bound to it: a Cluster made again under the name must not inherit them.
    const admin = (method: string, path: string, body?: unknown) => rawRequest(c.env.kubeconfig, { method, path, ...(body ? { body: JSON.stringify(body) } : {}) });
    const RBAC = `/apis/rbac.authorization.k8s.io/v1/namespaces/${NS}`;
    const contents = {
      [`/api/v1/namespaces/${NS}/secrets`]: { metadata: { name: 'db' }, stringData: { pw: 'x' } },
      [`/api/v1/namespaces/${NS}/configmaps`]: { metadata: { name: 'settings' }, data: { a: 'b' } },
      [`${RBAC}/roles`]: { metadata: { name: 'reader' }, rules: [{ apiGroups: [''], resources: ['secrets'], verbs: ['get'] }] },
      [`${RBAC}/rolebindings`]: { metadata: { name: 'bob-reads' }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' }, subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: 'bob' }] },
    };
    for (const [collection, body] of Object.entries(contents)) expect((await admin('POST', collection, body)).status, collection).to.equal(201);
    const token = (name: string, cluster: string) => ({ metadata: { name }, spec: { type: 'join', cluster, secretHash: '0'.repeat(64) } });
    for (const [name, cl] of [['ownjoin', NS], ['otherjoin', 'elsewhere']]) expect((await admin('POST', '/apis/auth.cairn.dev/v1alpha1/tokens', token(name!, cl!))).status).to.equal(201);

    holdCleanup(true);
    await c.client.delete('Cluster', undefined, NS);
    const deleting = await until('Cluster Deleting', async () => {
      const cl = await c.client.get('Cluster', undefined, NS);
      return cl?.status?.phase === 'Deleting' ? cl : undefined;
    });
    expect(deleting.metadata.deletionTimestamp).to.be.a('string');
    await until('every instance and volume marked for deletion', async () => {
      const is = (await c.client.list('Instance', { namespace: NS })).items;
      const vs = (await c.client.list('Volume', { namespace: NS })).items;
      return [...is, ...vs].every((o) => o.metadata.deletionTimestamp) ? true : undefined;
    });
    // Nodes are kept while anything still runs on them (their agents must clean up first).
    await new Promise((r) => setTimeout(r, 500));
    expect((await c.client.list('Node', { namespace: NS })).items).to.have.length(2);
    expect(await c.client.get('Cluster', undefined, NS)).to.not.equal(undefined);

    holdCleanup(false);
    await until('Cluster gone', async () => ((await c.client.get('Cluster', undefined, NS)) ? undefined : true), 20_000);
    const left = await c.everything(NS);
    // Leases are deleted with the Cluster; an agent still running may recreate its heartbeat lease before the
    // Cluster is gone, so only those may remain.
    const { Lease: leases = [], ...objects } = left;
    expect(objects, 'no Node, Instance, Volume or WorkItem left').to.deep.equal({});
    expect(leases.filter((l) => !l.startsWith('node-')), 'no fencing lease left').to.deep.equal([]);
    expect(agents.flatMap((a) => a.heldClaims)).to.deep.equal([]);
    for (const collection of Object.keys(contents)) expect((await admin('GET', collection)).json.items, collection).to.deep.equal([]);
    const tokens = (await admin('GET', '/apis/auth.cairn.dev/v1alpha1/tokens')).json.items.map((t: { metadata: { name: string } }) => t.metadata.name);
    expect(tokens).to.include('otherjoin').and.not.include('ownjoin');
  });
});

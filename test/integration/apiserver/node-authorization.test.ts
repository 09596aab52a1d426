/**
 * Issue 7, acceptance 2: what a node identity may do, against a real etcd
 * and apiserver. Node tokens of c1/node-a and c1/node-b are Token objects;
 * a matrix walks every (verb, resource) pair as node-a and asserts which
 * are allowed and which are 403s naming the identity, the verb and the
 * resource. Then a real `cairn agent` running with node-a's token (and a
 * controller in this process) registers its Node, renews its heartbeat and
 * runs an instance, never refused.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import winston from 'winston';
import { CairnClient } from '../../../api/client/cairn-client.js';
import { newToken } from '../../../api/token-format.js';
import { buildKubeconfig, writeKubeconfig } from '../../../apiserver/kubeconfig.js';
import { startControllerManager, type ControllerManager } from '../../../controller/manager.js';
import { DEFAULT_LEADER_TIMINGS } from '../../../runtime/leader-election.js';
import { killMarked, startAgentProcess, type AgentProcess } from '../../support/agent-process.js';
import { FAST_FAILURE_DETECTION } from '../../support/controller-env.js';
import { eventually } from '../../support/eventually.js';
import { rawRequest, type RawResponse } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';

const NODE_A = 'system:node:c1:node-a';
const VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete', 'deletecollection'] as const;
type Verb = (typeof VERBS)[number];

const cairn = (plural: string, ns?: string) => `/apis/cairn.dev/v1alpha1${ns ? `/namespaces/${ns}` : ''}/${plural}`;
const LEASES = (ns: string) => `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
const EVENTS = '/api/v1/namespaces/c1/events';
const TOKENS = '/apis/auth.cairn.dev/v1alpha1/tokens';

/** One row of the matrix: a collection, an object in it (or a selector), and the verbs node-a may use on it. */
interface Target {
  label: string;
  collection: string;
  name?: string;
  subresource?: 'status';
  /** Query of list, watch and deletecollection (a field selector). */
  query?: string;
  allowed: Verb[];
  /** The verbs to try; every one by default (a status subresource has only get, update and patch). */
  verbs?: readonly Verb[];
  /** Body of create for a target without a name. */
  createBody?: Record<string, unknown>;
}

const workItem = (name: string, nodeName: string, owner: { kind: 'Instance' | 'Volume'; name: string }) => ({
  apiVersion: 'cairn.dev/v1alpha1',
  kind: 'WorkItem',
  metadata: { name, namespace: 'c1' },
  spec:
    owner.kind === 'Instance'
      ? { nodeName, type: 'InstanceRuntime', owner, instance: { driver: 'process', runState: 'Running', cpus: 1, memory: '16Mi', process: { command: ['/bin/true'] } } }
      : { nodeName, type: 'VolumeReplica', owner, volumeReplica: { volumeName: owner.name, index: 0, size: '1Mi' } },
});
const lease = (ns: string, name: string, holder: string, durationSeconds = 30) => ({
  apiVersion: 'coordination.k8s.io/v1',
  kind: 'Lease',
  metadata: { name, namespace: ns },
  spec: { holderIdentity: holder, leaseDurationSeconds: durationSeconds, renewTime: new Date().toISOString() },
});
const event = (name: string, host: string) => ({
  apiVersion: 'v1',
  kind: 'Event',
  metadata: { name, namespace: 'c1' },
  involvedObject: { apiVersion: 'cairn.dev/v1alpha1', kind: 'WorkItem', name: 'web.node-a', namespace: 'c1' },
  reason: 'Started',
  message: 'test event',
  type: 'Normal',
  count: 1,
  source: { component: 'cairn-agent', host },
  reportingComponent: 'cairn-agent',
  reportingInstance: host,
});
const instance = (name: string, nodeName: string) => ({
  apiVersion: 'cairn.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name, namespace: 'c1' },
  spec: { driver: 'process', runState: 'Running', cpus: 1, memory: '16Mi', process: { command: ['sleep', '3600'] }, placement: { nodeName } },
});

describe('node authorization (real etcd + apiserver)', function () {
  this.timeout(180_000);
  let env: TestEnv;
  const tokens: Record<string, { id: string; token: string }> = {};

  const as = (token: string, method: string, p: string, body?: unknown): Promise<RawResponse> =>
    rawRequest(env.kubeconfig, { method, path: p, authorization: `Bearer ${token}`, ...(body === undefined ? {} : { body: JSON.stringify(body), contentType: method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }) });
  const admin = async (method: string, p: string, body?: unknown): Promise<RawResponse> => {
    const r = await as(env.token, method, p, body);
    if (r.status >= 300) throw new Error(`admin ${method} ${p}: ${r.status} ${r.text}`);
    return r;
  };
  const nodeToken = async (node: string) => {
    const t = newToken();
    await admin('POST', TOKENS, { metadata: { name: t.id }, spec: { type: 'node', secretHash: t.secretHash, cluster: 'c1', nodeName: node } });
    return { id: t.id, token: t.token };
  };

  before(async () => {
    env = await startTestEnv();
    await admin('POST', cairn('clusters'), { metadata: { name: 'c1' }, spec: { failureDetection: FAST_FAILURE_DETECTION } });
    tokens['node-a'] = await nodeToken('node-a');
    tokens['node-b'] = await nodeToken('node-b');
    for (const n of ['node-a', 'node-b']) await admin('POST', cairn('nodes', 'c1'), { metadata: { name: n, namespace: 'c1' }, spec: {} });
    for (const [name, holder] of [['node-node-a', 'node-a'], ['node-node-b', 'node-b'], ['instance-web', 'node-a'], ['instance-db', 'node-b'], ['instance-gone', 'node-a']]) {
      await admin('POST', LEASES('c1'), lease('c1', name!, holder!));
    }
    await admin('POST', LEASES('cairn-system'), lease('cairn-system', 'cairn-controller', 'matrix-controller', 1));
    for (const i of ['web', 'db', 'lonely']) await admin('POST', cairn('instances', 'c1'), { ...instance(i, 'node-a'), spec: { ...instance(i, 'node-a').spec, placement: undefined } });
    for (const v of ['data', 'vol-b']) await admin('POST', cairn('volumes', 'c1'), { metadata: { name: v, namespace: 'c1' }, spec: { size: '1Mi' } });
    await admin('POST', cairn('workitems', 'c1'), workItem('web.node-a', 'node-a', { kind: 'Instance', name: 'web' }));
    await admin('POST', cairn('workitems', 'c1'), workItem('data.r0.node-a', 'node-a', { kind: 'Volume', name: 'data' }));
    await admin('POST', cairn('workitems', 'c1'), workItem('db.node-b', 'node-b', { kind: 'Instance', name: 'db' }));
    await admin('POST', cairn('workitems', 'c1'), workItem('vol-b.r0.node-b', 'node-b', { kind: 'Volume', name: 'vol-b' }));
    await admin('POST', EVENTS, event('mine', 'node-a'));
    await admin('POST', EVENTS, event('theirs', 'node-b'));
  });
  after(async () => env?.stop());

  /** The request one verb makes of a target, as node-a. */
  async function attempt(t: Target, verb: Verb): Promise<RawResponse> {
    const item = t.name ? `${t.collection}/${t.name}${t.subresource ? `/${t.subresource}` : ''}` : t.collection;
    const byName = t.name ? `fieldSelector=${encodeURIComponent(`metadata.name=${t.name}`)}` : undefined;
    const query = t.query ?? byName;
    const token = tokens['node-a']!.token;
    switch (verb) {
      case 'get':
        return as(token, 'GET', item);
      case 'list':
        return as(token, 'GET', `${t.collection}${t.query ? `?${t.query}` : ''}`);
      case 'watch':
        return as(token, 'GET', `${t.collection}?watch=true&timeoutSeconds=1${query ? `&${query}` : ''}`);
      case 'create': {
        const current = t.name ? (await admin('GET', `${t.collection}/${t.name}`)).json : t.createBody;
        const { metadata, status: _s, ...rest } = current;
        return as(token, 'POST', t.collection, { ...rest, metadata: { name: metadata.name, ...(metadata.namespace ? { namespace: metadata.namespace } : {}), labels: metadata.labels } });
      }
      case 'update':
        return as(token, 'PUT', item, (await admin('GET', item)).json);
      case 'patch':
        return as(token, 'PATCH', item, { metadata: { labels: { matrix: 'yes' } } });
      case 'delete':
        return as(token, 'DELETE', item);
      case 'deletecollection':
        return as(token, 'DELETE', `${t.collection}${t.query ? `?${t.query}` : ''}`);
    }
  }

  /** Whether a response is what the matrix expects; a reason when not. */
  function check(t: Target, verb: Verb, r: RawResponse): string | undefined {
    const allowed = t.allowed.includes(verb);
    if (allowed) {
      // Past authorization: done, or refused for another reason (create of an existing name).
      return [200, 201, 409].includes(r.status) ? undefined : `expected it allowed, got ${r.status} ${r.text.slice(0, 300)}`;
    }
    if (r.status !== 403) return `expected 403, got ${r.status} ${r.text.slice(0, 200)}`;
    const message = String(r.json?.message ?? '');
    const plural = t.collection.split('/').pop()!;
    const missing = [NODE_A, verb, plural].filter((w) => !message.includes(w));
    return missing.length > 0 ? `403 message lacks ${missing.join(', ')}: ${message}` : undefined;
  }

  async function targets(): Promise<Target[]> {
    const status = ['get', 'update', 'patch'] as const;
    const rw = ['get', 'create', 'update', 'patch'] as Verb[];
    const rows: Target[] = [
      { label: 'own Node', collection: cairn('nodes', 'c1'), name: 'node-a', allowed: rw },
      { label: "another node's Node", collection: cairn('nodes', 'c1'), name: 'node-b', allowed: [] },
      { label: 'own Node status', collection: cairn('nodes', 'c1'), name: 'node-a', subresource: 'status', verbs: status, allowed: [...status] },
      { label: "another node's Node status", collection: cairn('nodes', 'c1'), name: 'node-b', subresource: 'status', verbs: status, allowed: [] },
      { label: 'own heartbeat Lease', collection: LEASES('c1'), name: 'node-node-a', allowed: rw },
      { label: "another node's heartbeat Lease", collection: LEASES('c1'), name: 'node-node-b', allowed: [] },
      { label: 'fencing Lease of an instance on node-a', collection: LEASES('c1'), name: 'instance-web', allowed: rw },
      { label: 'fencing Lease of an instance on node-b', collection: LEASES('c1'), name: 'instance-db', allowed: [] },
      { label: 'fencing Lease node-a still holds, its WorkItem gone', collection: LEASES('c1'), name: 'instance-gone', allowed: ['get', 'update', 'patch'] },
      { label: 'controller leader Lease', collection: LEASES('cairn-system'), name: 'cairn-controller', allowed: [] },
      { label: 'own WorkItem', collection: cairn('workitems', 'c1'), name: 'web.node-a', allowed: ['get', 'update', 'patch'] },
      { label: "another node's WorkItem", collection: cairn('workitems', 'c1'), name: 'db.node-b', allowed: [] },
      { label: 'own WorkItem status', collection: cairn('workitems', 'c1'), name: 'web.node-a', subresource: 'status', verbs: status, allowed: [...status] },
      { label: "another node's WorkItem status", collection: cairn('workitems', 'c1'), name: 'db.node-b', subresource: 'status', verbs: status, allowed: [] },
      {
        label: 'WorkItems selected by spec.nodeName=node-a (and more)',
        collection: cairn('workitems', 'c1'),
        query: `fieldSelector=${encodeURIComponent('spec.type=InstanceRuntime,spec.nodeName=node-a')}`,
        verbs: ['list', 'watch', 'create', 'deletecollection'],
        allowed: ['list', 'watch'],
        createBody: workItem('new.node-a', 'node-a', { kind: 'Instance', name: 'web' }),
      },
      { label: 'WorkItems without a field selector', collection: cairn('workitems', 'c1'), verbs: ['list', 'watch', 'deletecollection'], allowed: [] },
      { label: 'WorkItems of every namespace', collection: cairn('workitems'), query: `fieldSelector=${encodeURIComponent('spec.nodeName=node-a')}`, verbs: ['list', 'watch'], allowed: [] },
      { label: 'Instance placed on node-a', collection: cairn('instances', 'c1'), name: 'web', allowed: ['get'] },
      { label: 'Instance placed on node-b', collection: cairn('instances', 'c1'), name: 'db', allowed: [] },
      { label: 'Instance placed nowhere', collection: cairn('instances', 'c1'), name: 'lonely', allowed: [] },
      { label: 'Volume with a replica on node-a', collection: cairn('volumes', 'c1'), name: 'data', allowed: ['get'] },
      { label: 'Volume with a replica on node-b', collection: cairn('volumes', 'c1'), name: 'vol-b', allowed: [] },
      // Read for the agent's metadata copy (agent/metadata-copy.ts), which a restore of etcd uses.
      { label: 'own Cluster', collection: cairn('clusters'), name: 'c1', allowed: ['get'] },
      { label: 'own Event', collection: EVENTS, name: 'mine', allowed: ['create', 'update', 'patch', 'delete'] },
      { label: "another node's Event", collection: EVENTS, name: 'theirs', allowed: [] },
      { label: 'own Token', collection: TOKENS, name: tokens['node-a']!.id, allowed: [] },
      { label: 'own namespace', collection: '/api/v1/namespaces', name: 'c1', allowed: [] },
    ];
    return [...rows, ...(await rbacTargets())];
  }

  // RBAC kinds join the matrix once the apiserver serves them.
  async function rbacTargets(): Promise<Target[]> {
    const group = await as(env.token, 'GET', '/apis/rbac.authorization.k8s.io/v1');
    if (group.status !== 200) return [];
    const base = '/apis/rbac.authorization.k8s.io/v1';
    const served = new Set((group.json.resources as { name: string }[]).map((r) => r.name));
    const rows: Target[] = [];
    for (const [plural, ns] of [['roles', 'c1'], ['rolebindings', 'c1'], ['clusterroles', undefined], ['clusterrolebindings', undefined]] as const) {
      if (!served.has(plural)) continue;
      const collection = ns ? `${base}/namespaces/${ns}/${plural}` : `${base}/${plural}`;
      const first = (await as(env.token, 'GET', collection)).json?.items?.[0]?.metadata?.name as string | undefined;
      rows.push({ label: `RBAC ${plural}`, collection, name: first ?? 'cairn:viewer', verbs: first ? VERBS : ['get', 'list', 'watch', 'delete', 'deletecollection'], allowed: [] });
    }
    return rows;
  }

  it('walks every (verb, resource) pair as node-a: only its own objects, 403 naming it, the verb and the resource for the rest', async () => {
    const wrong: string[] = [];
    let tried = 0;
    for (const t of await targets()) {
      for (const verb of t.verbs ?? VERBS) {
        const why = check(t, verb, await attempt(t, verb));
        tried++;
        if (why) wrong.push(`${verb} ${t.label}: ${why}`);
      }
    }
    expect(wrong, wrong.join('\n')).to.deep.equal([]);
    expect(tried).to.be.greaterThan(150);
  });

  it('refuses spec changes and foreign finalizers on its own objects, naming what it may change', async () => {
    const token = tokens['node-a']!.token;
    const node = await as(token, 'PATCH', `${cairn('nodes', 'c1')}/node-a`, { spec: { unschedulable: true } });
    expect(node.status).to.equal(403);
    expect(node.json.message).to.equal(`patch nodes.cairn.dev "node-a" in namespace "c1" is forbidden for User "${NODE_A}": a node may not change spec (only metadata.labels and metadata.annotations, and status through the status subresource)`);
    const wi = await as(token, 'PATCH', `${cairn('workitems', 'c1')}/web.node-a`, { spec: { nodeName: 'node-b' } });
    expect(wi.status).to.equal(403);
    await admin('PATCH', `${cairn('workitems', 'c1')}/web.node-a`, { metadata: { finalizers: ['cairn.dev/agent', 'cairn.dev/other'] } });
    const foreign = await as(token, 'PATCH', `${cairn('workitems', 'c1')}/web.node-a`, { metadata: { finalizers: ['cairn.dev/agent'] } });
    expect(foreign.status).to.equal(403);
    expect(foreign.json.message).to.contain('may not add or remove the finalizer cairn.dev/other (only its own, cairn.dev/agent)');
    const own = await as(token, 'PATCH', `${cairn('workitems', 'c1')}/web.node-a`, { metadata: { finalizers: ['cairn.dev/other'] } });
    expect(own.status, own.text).to.equal(200);
    await admin('PATCH', `${cairn('workitems', 'c1')}/web.node-a`, { metadata: { finalizers: null } });
    const handOver = await as(token, 'PATCH', `${LEASES('c1')}/instance-web`, { spec: { holderIdentity: 'node-b' } });
    expect(handOver.status).to.equal(403);
    expect(handOver.json.message).to.contain('not give it to "node-b"');
  });

  it("never takes an instance's claim another node holds (docs/fencing.md), though it may take it once free", async () => {
    const token = tokens['node-a']!.token;
    const before = await admin('GET', `${LEASES('c1')}/instance-web`);
    await admin('PATCH', `${LEASES('c1')}/instance-web`, { spec: { holderIdentity: 'node-b' } });
    const take = await as(token, 'PATCH', `${LEASES('c1')}/instance-web`, { spec: { holderIdentity: 'node-a' } });
    expect(take.status).to.equal(403);
    expect(take.json.message).to.contain('is held by node node-b: a node claims an instance only when its claim is free');
    await admin('PATCH', `${LEASES('c1')}/instance-web`, { spec: { holderIdentity: null } });
    const free = await as(token, 'PATCH', `${LEASES('c1')}/instance-web`, { spec: { holderIdentity: 'node-a' } });
    expect(free.status, free.text).to.equal(200);
    await admin('PATCH', `${LEASES('c1')}/instance-web`, { spec: { holderIdentity: before.json.spec.holderIdentity ?? null } });
  });

  it('node-b gets the mirror image: its own Node and WorkItems, not node-a ones', async () => {
    const token = tokens['node-b']!.token;
    expect((await as(token, 'GET', `${cairn('nodes', 'c1')}/node-b`)).status).to.equal(200);
    expect((await as(token, 'GET', `${cairn('workitems', 'c1')}/db.node-b`)).status).to.equal(200);
    const other = await as(token, 'GET', `${cairn('workitems', 'c1')}/web.node-a`);
    expect(other.status).to.equal(403);
    expect(other.json.message).to.contain('User "system:node:c1:node-b" cannot get resource "workitems"');
  });

  describe('a real agent with node-a credential (e2e)', () => {
    let controller: ControllerManager | undefined;
    let agent: AgentProcess | undefined;
    let dir: string;

    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-nodeauth-'));
      // The matrix objects go; what remains (Nodes, heartbeats) is what an agent meets on a restart.
      for (const plural of ['workitems', 'instances', 'volumes']) await admin('DELETE', cairn(plural, 'c1'));
      for (const name of ['instance-web', 'instance-db', 'instance-gone']) await admin('DELETE', `${LEASES('c1')}/${name}`);
      controller = await startControllerManager({
        connection: { kubeconfig: env.server.kubeconfigPath },
        identity: 'node-authz-test',
        // The only controller: the usual timings, so that a stall of this loaded process cannot depose it.
        timings: DEFAULT_LEADER_TIMINGS,
        workers: 2,
        resyncMs: 0,
        metricsHost: '127.0.0.1',
        metricsPort: -1,
        log: winston.createLogger({ silent: true }),
      });
      const kubeconfig = path.join(dir, 'node-a.kubeconfig');
      const caCertPem = fs.readFileSync(path.join(env.dataDir, 'pki', 'ca.crt'), 'utf8');
      await writeKubeconfig(kubeconfig, buildKubeconfig({ server: env.server.url, token: tokens['node-a']!.token, caCertPem, namespace: 'c1', user: 'node-a' }));
      agent = await startAgentProcess({ kubeconfig, cluster: 'c1', nodeName: 'node-a', dataDir: path.join(dir, 'agent') });
    });
    after(async () => {
      await agent?.stop(3000).catch(() => undefined);
      if (dir) killMarked(dir);
      await controller?.stop();
      if (dir) fs.rmSync(dir, { recursive: true, force: true });
    });

    it('registers its Node, renews its heartbeat and runs a process instance to Running, never refused', async () => {
      const client = new CairnClient(env.kubeconfig);
      await eventually('node-a Ready', async () => (await client.get('Node', 'c1', 'node-a'))?.status?.phase === 'Ready', 30_000, 200);
      const renewTime = async () => (await admin('GET', `${LEASES('c1')}/node-node-a`)).json.spec.renewTime as string;
      const first = await renewTime();
      await eventually('heartbeat renewed', async () => (await renewTime()) !== first, 10_000, 200);
      await client.create('Instance', instance('sleeper', 'node-a') as never);
      await eventually('sleeper Running', async () => (await client.get('Instance', 'c1', 'sleeper'))?.status?.phase === 'Running', 60_000, 200);
      const fence = await admin('GET', `${LEASES('c1')}/instance-sleeper`);
      expect(fence.json.spec.holderIdentity).to.equal('node-a');
      expect(agent!.logs()).not.to.match(/forbidden|Unauthorized/i);
    });
  });
});

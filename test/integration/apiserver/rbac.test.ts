/**
 * Issue 7, acceptance 3: users and roles against a real etcd and apiserver.
 * The built-in ClusterRoles exist after start and are put back by
 * ensureBootstrapRoles, however many replicas run it at once. User tokens
 * (Token objects) for vera (ClusterRoleBinding to cairn:viewer), otto
 * (RoleBinding to cairn:operator in Cluster a) and nobody (no binding):
 * vera reads everything and every write of hers is a 403 naming her, the
 * verb and the resource; otto writes in a only, never RBAC or tokens; and
 * stock `kubectl auth can-i` (a kubeconfig with the user's token) answers
 * yes exactly when the real request gets past authorization, for a matrix
 * of verbs, resources, namespaces and users.
 */
import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import path from 'node:path';
import winston from 'winston';
import WebSocket from 'ws';
import { TUNNEL_PROTOCOL } from '../../../api/tunnel.js';
import { newToken } from '../../../api/token-format.js';
import { BOOTSTRAP_ROLES, ensureBootstrapRoles } from '../../../apiserver/auth/bootstrap-roles.js';
import { rbacDefinitions } from '../../../apiserver/builtin/rbac.js';
import { buildKubeconfig, writeKubeconfig } from '../../../apiserver/kubeconfig.js';
import { Registry } from '../../../apiserver/registry.js';
import { Namespaces } from '../../../apiserver/rest/namespaces.js';
import { ResourceStore } from '../../../apiserver/rest/resource-store.js';
import { EtcdStore } from '../../../apiserver/storage/etcd-store.js';
import { LeaseManager } from '../../../apiserver/storage/lease-manager.js';
import { WatchCache } from '../../../apiserver/storage/watch-cache.js';
import { loadCrds } from '../../../apiserver/crd-loader.js';
import { rawRequest, type RawResponse } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';
import { Kubectl } from '../../support/kubectl.js';
import { CRD_DIR } from '../../support/paths.js';

const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const TOKENS = '/apis/auth.cairn.dev/v1alpha1/tokens';
const WRITES = ['create', 'update', 'patch', 'delete', 'deletecollection'] as const;
const VERBS = ['get', 'list', 'watch', ...WRITES] as const;
type Verb = (typeof VERBS)[number];

/** A kind the tests act on: where its collection is, and an object of it each namespace holds. */
interface Kind {
  plural: string;
  group: string;
  collection(ns: string | undefined): string;
  /** The fixture's name in namespace ns (for a cluster-scoped kind, the object the test targets). */
  name(ns: string): string;
  body(ns: string, name: string): Record<string, unknown>;
}

const cairnKind = (plural: string, kind: string, spec: (ns: string) => Record<string, unknown>): Kind => ({
  plural,
  group: 'cairn.dev',
  collection: (ns) => `/apis/cairn.dev/v1alpha1${ns ? `/namespaces/${ns}` : ''}/${plural}`,
  name: () => 'fixture',
  body: (ns, name) => ({ apiVersion: 'cairn.dev/v1alpha1', kind, metadata: { name, namespace: ns }, spec: spec(ns) }),
});

const CLUSTERS: Kind = {
  plural: 'clusters',
  group: 'cairn.dev',
  collection: () => '/apis/cairn.dev/v1alpha1/clusters',
  name: (ns) => ns,
  body: (_ns, name) => ({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name }, spec: {} }),
};
const INSTANCES = cairnKind('instances', 'Instance', () => ({ driver: 'process', runState: 'Stopped', cpus: 1, memory: '16Mi', process: { command: ['sleep', '1'] } }));
const LEASES: Kind = {
  plural: 'leases',
  group: 'coordination.k8s.io',
  collection: (ns) => `/apis/coordination.k8s.io/v1${ns ? `/namespaces/${ns}` : ''}/leases`,
  name: () => 'fixture',
  body: (ns, name) => ({ apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name, namespace: ns }, spec: { holderIdentity: 'someone', leaseDurationSeconds: 30 } }),
};
const EVENTS: Kind = {
  plural: 'events',
  group: '',
  collection: (ns) => `/api/v1${ns ? `/namespaces/${ns}` : ''}/events`,
  name: () => 'fixture',
  body: (ns, name) => ({
    apiVersion: 'v1',
    kind: 'Event',
    metadata: { name, namespace: ns },
    involvedObject: { apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', name: 'fixture', namespace: ns },
    reason: 'Tested',
    message: 'rbac test',
    type: 'Normal',
  }),
};
/** Every kind a Cairn user works with; created in Clusters a and b. */
const KINDS: Kind[] = [
  CLUSTERS,
  cairnKind('nodes', 'Node', () => ({})),
  INSTANCES,
  cairnKind('volumes', 'Volume', () => ({ size: '1Mi' })),
  cairnKind('workitems', 'WorkItem', () => ({
    nodeName: 'fixture',
    type: 'InstanceRuntime',
    owner: { kind: 'Instance', name: 'fixture' },
    instance: { driver: 'process', runState: 'Stopped', cpus: 1, memory: '16Mi', process: { command: ['sleep', '1'] } },
  })),
  LEASES,
  EVENTS,
];
const NAMESPACED = KINDS.filter((k) => k !== CLUSTERS);

describe('RBAC (real etcd + apiserver)', function () {
  this.timeout(300_000);
  let env: TestEnv;
  const users: Record<string, { token: string; id: string; kubectl: Kubectl }> = {};

  const as = (token: string, method: string, p: string, body?: unknown): Promise<RawResponse> =>
    rawRequest(env.kubeconfig, {
      method,
      path: p,
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { body: JSON.stringify(body), contentType: method === 'PATCH' ? 'application/merge-patch+json' : 'application/json' }),
    });
  const admin = async (method: string, p: string, body?: unknown): Promise<RawResponse> => {
    const r = await as(env.token, method, p, body);
    if (r.status >= 300) throw new Error(`admin ${method} ${p}: ${r.status} ${r.text}`);
    return r;
  };

  /** A user token, and a kubeconfig (no namespace) holding it for kubectl. */
  async function addUser(name: string): Promise<void> {
    const t = newToken();
    await admin('POST', TOKENS, { metadata: { name: t.id }, spec: { type: 'user', secretHash: t.secretHash, user: name, groups: ['testers'] } });
    const file = path.join(env.dataDir, `${name}.kubeconfig`);
    const caCertPem = Buffer.from(env.kubeconfig.getCurrentCluster()!.caData!, 'base64').toString('utf8');
    await writeKubeconfig(file, buildKubeconfig({ server: env.server.url, token: t.token, user: name, caCertPem }));
    users[name] = { token: t.token, id: t.id, kubectl: new Kubectl(file) };
  }

  const binding = (kind: 'RoleBinding' | 'ClusterRoleBinding', name: string, role: string, user: string, ns?: string) => ({
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind,
    metadata: { name, ...(ns ? { namespace: ns } : {}) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'User', apiGroup: 'rbac.authorization.k8s.io', name: user }],
  });

  before(async () => {
    env = await startTestEnv();
    for (const ns of ['a', 'b']) await admin('POST', CLUSTERS.collection(undefined), CLUSTERS.body(ns, ns));
    for (const ns of ['a', 'b']) for (const k of NAMESPACED) await admin('POST', k.collection(ns), k.body(ns, k.name(ns)));
    for (const u of ['vera', 'otto', 'nobody']) await addUser(u);
    await admin('POST', `${RBAC}/clusterrolebindings`, binding('ClusterRoleBinding', 'vera-views', 'cairn:viewer', 'vera'));
    await admin('POST', `${RBAC}/namespaces/a/rolebindings`, binding('RoleBinding', 'otto-operates', 'cairn:operator', 'otto', 'a'));
    for (const ns of ['a', 'b']) await admin('POST', `${RBAC}/namespaces/${ns}/rolebindings`, binding('RoleBinding', 'fixture', 'cairn:viewer', 'someone-else', ns));
  });
  after(async () => {
    try {
      await env?.stop();
    } finally {
      for (const u of Object.values(users)) u.kubectl.cleanup();
    }
  });

  /** The request a verb makes of a kind in a namespace, as a user; writes are dry runs, so nothing changes. */
  async function attempt(token: string, verb: Verb, k: Kind, ns: string): Promise<RawResponse> {
    const scope = k === CLUSTERS ? undefined : ns;
    const item = `${k.collection(scope)}/${k.name(ns)}`;
    switch (verb) {
      case 'get':
        return as(token, 'GET', item);
      case 'list':
        return as(token, 'GET', k.collection(scope));
      case 'watch':
        return as(token, 'GET', `${k.collection(scope)}?watch=true&timeoutSeconds=1`);
      case 'create':
        return as(token, 'POST', `${k.collection(scope)}?dryRun=All`, k.body(ns, `new-${verb}`));
      case 'update':
        return as(token, 'PUT', `${item}?dryRun=All`, (await admin('GET', item)).json);
      case 'patch':
        return as(token, 'PATCH', `${item}?dryRun=All`, { metadata: { labels: { touched: 'yes' } } });
      case 'delete':
        return as(token, 'DELETE', `${item}?dryRun=All`);
      case 'deletecollection':
        return as(token, 'DELETE', `${k.collection(scope)}?dryRun=All`);
    }
  }

  /** Why a response is not the 403 expected of user for verb on plural, or undefined when it is. */
  function notForbidden(r: RawResponse, user: string, verb: string, plural: string): string | undefined {
    if (r.status !== 403) return `expected 403, got ${r.status} ${r.text.slice(0, 200)}`;
    const message = String(r.json?.message ?? '');
    const missing = [`User "${user}"`, ` ${verb} `, `"${plural}"`].filter((w) => !message.includes(w));
    return missing.length > 0 ? `403 message lacks ${missing.join(', ')}: ${message}` : undefined;
  }

  describe('built-in roles', () => {
    it('exist after start, labelled as kube labels its bootstrap roles', async () => {
      for (const [name, rules] of Object.entries(BOOTSTRAP_ROLES)) {
        const role = (await admin('GET', `${RBAC}/clusterroles/${name}`)).json;
        expect(role.rules, name).to.deep.equal(rules);
        expect(role.metadata.labels).to.include({ 'kubernetes.io/bootstrapping': 'rbac-defaults' });
      }
    });

    it('are created or restored by any number of apiservers at once, never failing their start', async () => {
      const viewer = (await admin('GET', `${RBAC}/clusterroles/cairn:viewer`)).json;
      await admin('PUT', `${RBAC}/clusterroles/cairn:viewer`, { ...viewer, rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }] });
      await admin('DELETE', `${RBAC}/clusterroles/cairn:operator`);
      const client = new Etcd3({ hosts: [env.etcd.endpoint] });
      try {
        const etcd = new EtcdStore(client);
        const registry = new Registry([...loadCrds(CRD_DIR), ...rbacDefinitions]);
        const log = winston.createLogger({ silent: true });
        const namespaces = new Namespaces(etcd, new WatchCache(etcd, registry.defs, log), registry.find('cairn.dev', 'v1alpha1', 'clusters')!, new Date().toISOString());
        const store = new ResourceStore({ etcd, registry, namespaces, eventLeases: new LeaseManager(etcd, 60), now: () => new Date() });
        await Promise.all(Array.from({ length: 6 }, () => ensureBootstrapRoles(store, registry, log)));
      } finally {
        client.close();
      }
      for (const name of ['cairn:viewer', 'cairn:operator']) expect((await admin('GET', `${RBAC}/clusterroles/${name}`)).json.rules, name).to.deep.equal(BOOTSTRAP_ROLES[name]);
    });

    it('serves the RBAC kinds with kube-style names and validation', async () => {
      const bad = await as(env.token, 'POST', `${RBAC}/clusterrolebindings`, { ...binding('ClusterRoleBinding', 'x', 'cairn:viewer', 'x'), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' } });
      expect(bad.status, bad.text).to.equal(422);
      expect(bad.json.message).to.include('roleRef.kind');
      const list = (await admin('GET', `${RBAC}/namespaces/a/rolebindings`)).json;
      expect(list.items.map((b: { metadata: { name: string } }) => b.metadata.name)).to.deep.equal(['fixture', 'otto-operates']);
    });
  });

  describe('a viewer (ClusterRoleBinding to cairn:viewer)', () => {
    it('gets, lists and watches every kind in every Cluster', async () => {
      const wrong: string[] = [];
      await Promise.all(
        KINDS.flatMap((k) =>
          ['a', 'b'].flatMap((ns) =>
            (['get', 'list', 'watch'] as const).map(async (verb) => {
              const r = await attempt(users.vera!.token, verb, k, ns);
              if (r.status !== 200) wrong.push(`${verb} ${k.plural} in ${ns}: ${r.status} ${r.text.slice(0, 200)}`);
            }),
          ),
        ),
      );
      expect(wrong, wrong.join('\n')).to.deep.equal([]);
    });

    it('gets a 403 naming her, the verb and the resource for every write of every kind', async () => {
      const wrong: string[] = [];
      for (const k of KINDS) {
        for (const verb of WRITES) {
          const why = notForbidden(await attempt(users.vera!.token, verb, k, 'a'), 'vera', verb, k.plural);
          if (why) wrong.push(`${verb} ${k.plural}: ${why}`);
        }
      }
      expect(wrong, wrong.join('\n')).to.deep.equal([]);
    });

    it('reads no tokens and no RBAC objects', async () => {
      for (const p of [TOKENS, `${RBAC}/clusterroles`, `${RBAC}/namespaces/a/rolebindings`]) {
        const plural = p.split('/').pop()!;
        expect(notForbidden(await as(users.vera!.token, 'GET', p), 'vera', 'list', plural)).to.equal(undefined);
      }
    });
  });

  describe('an operator of Cluster a (RoleBinding to cairn:operator in a)', () => {
    it('writes every kind in a', async () => {
      const wrong: string[] = [];
      for (const k of NAMESPACED) {
        for (const verb of VERBS) {
          const r = await attempt(users.otto!.token, verb, k, 'a');
          if (r.status >= 300) wrong.push(`${verb} ${k.plural}: ${r.status} ${r.text.slice(0, 200)}`);
        }
      }
      expect(wrong, wrong.join('\n')).to.deep.equal([]);
    });

    it('creates, changes and deletes an Instance in a for real', async () => {
      const token = users.otto!.token;
      expect((await as(token, 'POST', INSTANCES.collection('a'), INSTANCES.body('a', 'otto-made'))).status).to.equal(201);
      expect((await as(token, 'PATCH', `${INSTANCES.collection('a')}/otto-made`, { metadata: { labels: { by: 'otto' } } })).status).to.equal(200);
      expect((await as(token, 'DELETE', `${INSTANCES.collection('a')}/otto-made`)).status).to.equal(200);
    });

    it('gets a 403 for everything in b, and for writes across all Clusters', async () => {
      const wrong: string[] = [];
      for (const k of NAMESPACED) {
        for (const verb of VERBS) {
          const why = notForbidden(await attempt(users.otto!.token, verb, k, 'b'), 'otto', verb, k.plural);
          if (why) wrong.push(`${verb} ${k.plural} in b: ${why}`);
        }
        const why = notForbidden(await as(users.otto!.token, 'GET', k.collection(undefined)), 'otto', 'list', k.plural);
        if (why) wrong.push(`list ${k.plural} of every Cluster: ${why}`);
      }
      for (const verb of VERBS) {
        const why = notForbidden(await attempt(users.otto!.token, verb, CLUSTERS, 'b'), 'otto', verb, 'clusters');
        if (why) wrong.push(`${verb} Cluster b: ${why}`);
      }
      expect(wrong, wrong.join('\n')).to.deep.equal([]);
    });

    it('a user who may patch or update but not create cannot create by server-side apply or PUT (kube asks for create too)', async () => {
      await addUser('pat');
      await admin('POST', `${RBAC}/namespaces/a/roles`, { metadata: { name: 'patcher', namespace: 'a' }, rules: [{ apiGroups: ['cairn.dev', 'coordination.k8s.io'], resources: ['instances', 'leases'], verbs: ['get', 'patch', 'update'] }] });
      await admin('POST', `${RBAC}/namespaces/a/rolebindings`, { ...binding('RoleBinding', 'pat-patches', 'patcher', 'pat', 'a'), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'patcher' } });
      const token = users.pat!.token;
      const applyAs = (name: string) =>
        rawRequest(env.kubeconfig, { method: 'PATCH', path: `${INSTANCES.collection('a')}/${name}?fieldManager=pat`, authorization: `Bearer ${token}`, body: JSON.stringify(INSTANCES.body('a', name)), contentType: 'application/apply-patch+yaml' });
      const created = await applyAs('pat-made');
      expect(notForbidden(created, 'pat', 'create', 'instances')).to.equal(undefined);
      expect((await as(env.token, 'GET', `${INSTANCES.collection('a')}/pat-made`)).status, 'nothing was created').to.equal(404);
      expect((await applyAs(INSTANCES.name('a'))).status, 'an apply to an existing object is a patch').to.equal(200);
      const lease = await as(token, 'PUT', `${LEASES.collection('a')}/pat-lease`, LEASES.body('a', 'pat-lease'));
      expect(notForbidden(lease, 'pat', 'create', 'leases')).to.equal(undefined);
    });

    it("gets a 403 for a node's tunnel in a, which only the node's own credential opens (it once took the agent's place)", async () => {
      const url = `${env.server.url.replace(/^http/, 'ws')}/apis/cairn.dev/v1alpha1/namespaces/a/nodes/n1/tunnel`;
      const ca = Buffer.from(env.kubeconfig.getCurrentCluster()!.caData!, 'base64');
      const status = await new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(url, [TUNNEL_PROTOCOL], { ca, headers: { Authorization: `Bearer ${users.otto!.token}` } });
        ws.on('unexpected-response', (_req, res) => (resolve(res.statusCode ?? 0), ws.terminate()));
        ws.on('open', () => (resolve(101), ws.close()));
        ws.on('error', reject);
      });
      expect(status).to.equal(403);
    });

    it('gets a 403 on RBAC objects and tokens, even in a', async () => {
      const token = users.otto!.token;
      const rb = binding('RoleBinding', 'otto-more', 'cairn:admin', 'otto', 'a');
      const cases: [string, string, unknown, string, string][] = [
        ['GET', `${RBAC}/namespaces/a/rolebindings`, undefined, 'list', 'rolebindings'],
        ['POST', `${RBAC}/namespaces/a/rolebindings`, rb, 'create', 'rolebindings'],
        ['DELETE', `${RBAC}/namespaces/a/rolebindings/otto-operates`, undefined, 'delete', 'rolebindings'],
        ['PATCH', `${RBAC}/clusterroles/cairn:operator`, { rules: [] }, 'patch', 'clusterroles'],
        ['GET', TOKENS, undefined, 'list', 'tokens'],
        ['GET', `${TOKENS}/${users.otto!.id}`, undefined, 'get', 'tokens'],
        ['POST', TOKENS, { metadata: { name: 'x' }, spec: { type: 'user', secretHash: '0'.repeat(64), user: 'otto' } }, 'create', 'tokens'],
      ];
      const wrong: string[] = [];
      for (const [method, p, body, verb, plural] of cases) {
        const why = notForbidden(await as(token, method, p, body), 'otto', verb, plural);
        if (why) wrong.push(`${method} ${p}: ${why}`);
      }
      expect(wrong, wrong.join('\n')).to.deep.equal([]);
    });
  });

  describe('escalation (kube refuses to grant what the author lacks)', () => {
    it('lets a user who may write bindings in a grant only roles whose rules they hold there, as kube does', async () => {
      await addUser('dana');
      const delegate = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'bindings-writer' }, rules: [{ verbs: ['create'], apiGroups: ['rbac.authorization.k8s.io'], resources: ['rolebindings'] }] };
      await admin('POST', `${RBAC}/clusterroles`, delegate);
      await admin('POST', `${RBAC}/namespaces/a/rolebindings`, binding('RoleBinding', 'dana-delegates', 'bindings-writer', 'dana', 'a'));
      await admin('POST', `${RBAC}/namespaces/a/rolebindings`, binding('RoleBinding', 'dana-views', 'cairn:viewer', 'dana', 'a'));
      const token = users.dana!.token;
      const toAdmin = await as(token, 'POST', `${RBAC}/namespaces/a/rolebindings`, binding('RoleBinding', 'dana-admin', 'cairn:admin', 'dana', 'a'));
      expect(toAdmin.status, toAdmin.text).to.equal(403);
      expect(toAdmin.json.message).to.match(/rolebindings\.rbac\.authorization\.k8s\.io "dana-admin" is forbidden: user "dana" .*attempting to grant RBAC permissions not currently held in namespace "a"/);
      const toViewer = await as(token, 'POST', `${RBAC}/namespaces/a/rolebindings`, binding('RoleBinding', 'friend-views', 'cairn:viewer', 'friend', 'a'));
      expect(toViewer.status, toViewer.text).to.equal(201);
      const elsewhere = await as(token, 'POST', `${RBAC}/namespaces/b/rolebindings`, binding('RoleBinding', 'friend-views', 'cairn:viewer', 'friend', 'b'));
      expect(elsewhere.status, 'no right to write bindings in b at all').to.equal(403);
    });
  });

  describe('impersonation (kubectl --as)', () => {
    const asAdmin = (user: string, method: string, p: string, groups: string[] = []) =>
      rawRequest(env.kubeconfig, { method, path: p, headers: { 'Impersonate-User': user, ...(groups.length ? { 'Impersonate-Group': groups.join(',') } : {}) } });

    it('lets the admin act as another user, held to that user\'s rights: stock kubectl --as answers and is refused as them', async () => {
      const admin = new Kubectl(env.server.kubeconfigPath);
      try {
        expect((await admin.run(['auth', 'can-i', 'delete', 'instances.cairn.dev', '-n', 'a', '--as=nobody'])).stdout.trim()).to.match(/^no\b/);
        expect((await admin.run(['auth', 'can-i', 'delete', 'instances.cairn.dev', '-n', 'a', '--as=otto'])).stdout.trim()).to.equal('yes');
        const refused = await admin.run(['delete', 'instances.cairn.dev', 'fixture', '-n', 'a', '--as=nobody']);
        expect(refused.code).to.not.equal(0);
        expect(refused.stderr).to.include('User "nobody" cannot delete resource "instances" in API group "cairn.dev"');
      } finally {
        admin.cleanup();
      }
      const listed = await asAdmin('vera', 'GET', INSTANCES.collection('a'));
      expect(listed.status).to.equal(200);
      expect((await asAdmin('vera', 'DELETE', `${INSTANCES.collection('a')}/fixture`)).status).to.equal(403);
    });

    it('refuses a user without the impersonate right (403), and groups without a user (400)', async () => {
      const r = await rawRequest(env.kubeconfig, { path: INSTANCES.collection('a'), authorization: `Bearer ${users.otto!.token}`, headers: { 'Impersonate-User': 'admin' } });
      expect(r.status).to.equal(403);
      expect(r.json.message).to.include('User "otto" cannot impersonate resource "users" in API group ""');
      expect((await rawRequest(env.kubeconfig, { path: INSTANCES.collection('a'), headers: { 'Impersonate-Group': 'system:masters' } })).status).to.equal(400);
      // An empty Impersonate-Group still asks for impersonation (the stored-tokens property test found it served as the caller).
      expect((await rawRequest(env.kubeconfig, { path: '/apis', authorization: `Bearer ${users.otto!.token}`, headers: { 'Impersonate-Group': '' } })).status).to.equal(400);
      expect((await asAdmin('nobody', 'GET', INSTANCES.collection('a'), ['system:masters'])).status, 'the admin may grant the group too').to.equal(200);
    });
  });

  describe('kubectl auth can-i', () => {
    it('finds selfsubjectaccessreviews in discovery', async () => {
      const out = await users.nobody!.kubectl.ok(['api-resources', '--api-group=authorization.k8s.io', '-o', 'wide']);
      expect(out).to.match(/selfsubjectaccessreviews\s.*false\s+SelfSubjectAccessReview\s+create/);
    });

    it('kubectl auth whoami names the user (as impersonated too); auth can-i --list lists the rules held in the namespace', async () => {
      expect(await users.otto!.kubectl.ok(['auth', 'whoami'])).to.match(/Username\s+otto\n/);
      const admin = new Kubectl(env.server.kubeconfigPath);
      try {
        const who = JSON.parse(await admin.ok(['auth', 'whoami', '--as=vera', '--as-group=auditors', '-o', 'json']));
        expect(who.status.userInfo).to.deep.equal({ username: 'vera', groups: ['auditors', 'system:authenticated'] });
      } finally {
        admin.cleanup();
      }
      const inA = await users.otto!.kubectl.ok(['auth', 'can-i', '--list', '-n', 'a']);
      expect(inA).to.match(/^\*\.cairn\.dev\s+\[\]\s+\[\]\s+\[\*\]$/m);
      expect(inA).to.match(/^selfsubjectrulesreviews\.authorization\.k8s\.io\s.*\[create\]$/m);
      expect(await users.otto!.kubectl.ok(['auth', 'can-i', '--list', '-n', 'b'])).to.not.include('cairn.dev');
      const vera = await users.vera!.kubectl.ok(['auth', 'can-i', '--list', '-n', 'b']);
      expect(vera).to.match(/^\*\.cairn\.dev\s+\[\]\s+\[\]\s+\[get list watch\]$/m);
    });

    it('answers JSON reviews through the enforcing chain, paths included, and refuses malformed ones', async () => {
      const SSAR = '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews';
      const review = (spec: unknown) => ({ apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectAccessReview', spec });
      const discovery = await as(users.nobody!.token, 'POST', SSAR, review({ nonResourceAttributes: { path: '/apis', verb: 'get' } }));
      expect(discovery.status, discovery.text).to.equal(201);
      expect(discovery.json.status.allowed).to.equal(true);
      const health = await as(users.vera!.token, 'POST', SSAR, review({ nonResourceAttributes: { path: '/cairn/v1/anything', verb: 'post' } }));
      expect(health.json.status).to.deep.include({ allowed: false });
      const scoped = await as(users.otto!.token, 'POST', SSAR, review({ resourceAttributes: { namespace: 'a', verb: 'delete', group: 'cairn.dev', resource: 'instances', name: 'x' } }));
      expect(scoped.json.status.allowed).to.equal(true);
      expect(scoped.json.status.reason).to.include('RoleBinding "a/otto-operates"');
      expect((await as(users.otto!.token, 'POST', SSAR, review({}))).status).to.equal(422);
      expect((await as(users.otto!.token, 'POST', SSAR, review({ resourceAttributes: { verb: 1 } }))).status).to.equal(422);
      expect((await as(users.otto!.token, 'GET', SSAR)).status).to.equal(405);
    });

    it('agrees with enforcement for every verb, resource, namespace and user tried', async () => {
      const TOKEN_KIND: Kind = { plural: 'tokens', group: 'auth.cairn.dev', collection: () => TOKENS, name: () => users.nobody!.id, body: (_ns, name) => ({ metadata: { name }, spec: { type: 'user', secretHash: '0'.repeat(64) } }) };
      const BINDINGS: Kind = { plural: 'rolebindings', group: 'rbac.authorization.k8s.io', collection: (ns) => `${RBAC}/namespaces/${ns}/rolebindings`, name: () => 'fixture', body: (ns, name) => binding('RoleBinding', name, 'cairn:viewer', 'x', ns) };
      const kinds = [INSTANCES, LEASES, EVENTS, CLUSTERS, TOKEN_KIND, BINDINGS];
      const cases = [
        ...kinds.flatMap((k) => VERBS.flatMap((verb) => ['a', 'b'].map((ns) => ({ user: 'otto', verb, k, ns })))),
        ...kinds.flatMap((k) => VERBS.map((verb) => ({ user: 'vera', verb, k, ns: 'a' }))),
        ...[INSTANCES, CLUSTERS].flatMap((k) => (['get', 'create'] as const).map((verb) => ({ user: 'nobody', verb, k, ns: 'a' }))),
      ];
      const disagreements: string[] = [];
      const tally = { yes: 0, no: 0 };
      await inParallel(cases, 4, async ({ user, verb, k, ns }) => {
        const named = ['get', 'update', 'patch', 'delete'].includes(verb);
        const target = `${k.plural}${k.group ? `.${k.group}` : ''}${named ? `/${k.name(ns)}` : ''}`;
        const r = await users[user]!.kubectl.run(['auth', 'can-i', verb, target, '-n', ns]);
        const answer = r.stdout.trim().split(/\s/)[0];
        if (answer !== 'yes' && answer !== 'no') throw new Error(`kubectl auth can-i ${verb} ${target} -n ${ns} as ${user}: exit ${r.code}: ${r.stdout}${r.stderr}`);
        const enforced = (await attempt(users[user]!.token, verb, k, ns)).status !== 403;
        tally[answer]++;
        if ((answer === 'yes') !== enforced) disagreements.push(`${user}: can-i ${verb} ${target} -n ${ns} says ${r.stdout.trim()}, the request was ${enforced ? 'allowed' : 'refused'}`);
      });
      expect(disagreements, disagreements.join('\n')).to.deep.equal([]);
      expect(tally.yes, 'some allowed').to.be.greaterThan(20);
      expect(tally.no, 'some refused').to.be.greaterThan(20);
    });
  });
});

/** Runs `fn` on every item with at most `limit` at once; throws the first failure once all have ended. */
async function inParallel<T>(items: T[], limit: number, fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  const failed = (await Promise.allSettled(Array.from({ length: limit }, worker))).find((r) => r.status === 'rejected');
  if (failed) throw (failed as PromiseRejectedResult).reason;
}

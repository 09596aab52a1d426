/**
 * Issue 15, items 1 and 5: core/v1 Secrets and ConfigMaps through the same
 * storage, cache, RBAC and audit as every kind, against a real etcd and
 * apiserver and stock kubectl. Secrets are encrypted at rest (a direct etcd
 * read never shows a value), stringData is folded into data, node
 * credentials get 403, and kubectl's protobuf bodies (create namespace,
 * secret, configmap, role, rolebinding) are understood.
 */
import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import fs from 'node:fs';
import path from 'node:path';
import { newToken } from '../../../api/token-format.js';
import { rawRequest, type RawResponse } from '../../support/http.js';
import { formatKeyFile, newKey, parseKeyFile, type EncryptionKey } from '../../../apiserver/storage/encryption.js';
import { kubeconfigFor, startTestEnv, type TestEnv } from '../../support/in-process.js';
import { Kubectl } from '../../support/kubectl.js';

const SECRETS = (ns: string) => `/api/v1/namespaces/${ns}/secrets`;
const CONFIGMAPS = (ns: string) => `/api/v1/namespaces/${ns}/configmaps`;
const TOKENS = '/apis/auth.cairn.dev/v1alpha1/tokens';

describe('Secrets and ConfigMaps (real etcd + apiserver + kubectl)', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let kubectl: Kubectl;
  let etcd: Etcd3;

  const as = (token: string, method: string, p: string, body?: unknown): Promise<RawResponse> =>
    rawRequest(env.kubeconfig, { method, path: p, authorization: `Bearer ${token}`, ...(body === undefined ? {} : { body: JSON.stringify(body) }) });
  const admin = (method: string, p: string, body?: unknown) => as(env.token, method, p, body);
  const rawEtcd = async (key: string) => (await etcd.get(key).buffer()) ?? Buffer.alloc(0);

  before(async () => {
    env = await startTestEnv();
    kubectl = new Kubectl(env.server.kubeconfigPath);
    etcd = new Etcd3({ hosts: env.etcd.endpoint });
    expect((await admin('POST', '/apis/cairn.dev/v1alpha1/clusters', { metadata: { name: 'demo' }, spec: {} })).status).to.equal(201);
  });

  after(async () => {
    etcd?.close();
    kubectl?.cleanup();
    await env?.stop();
  });

  it('kubectl create secret: served back with its data, stored encrypted (no value, key or name in clear in etcd)', async () => {
    await kubectl.ok(['create', 'secret', 'generic', 'db', '-n', 'demo', '--from-literal=password=hunter2-pw', '--from-literal=user=alice']);
    const got = JSON.parse(await kubectl.ok(['get', 'secret', 'db', '-n', 'demo', '-o', 'json']));
    expect(got.type).to.equal('Opaque');
    expect(Buffer.from(got.data.password, 'base64').toString()).to.equal('hunter2-pw');
    const stored = await rawEtcd('/registry/secrets/demo/db');
    expect(stored.subarray(0, 18).toString()).to.equal('k8s:enc:aesgcm:v1:');
    for (const clear of ['hunter2-pw', got.data.password, 'alice', '"password"', '"Secret"']) expect(stored.includes(Buffer.from(clear)), clear).to.equal(false);
    const keyFile = fs.readFileSync(path.join(env.dataDir, 'encryption-keys.yaml'), 'utf8');
    const keyName = /name: (\S+)/.exec(keyFile)![1]!;
    expect(stored.toString('latin1')).to.include(`k8s:enc:aesgcm:v1:${keyName}:`);
    expect(fs.statSync(path.join(env.dataDir, 'encryption-keys.yaml')).mode & 0o777).to.equal(0o600);
  });

  it('ConfigMaps are stored as they are; stringData is folded into data and never stored; a watch sees Secrets decrypted', async () => {
    await kubectl.ok(['create', 'configmap', 'settings', '-n', 'demo', '--from-literal=mode=fast']);
    expect((await rawEtcd('/registry/configmaps/demo/settings')).toString()).to.include('"mode":"fast"');
    const watch = kubectl.run(['get', 'secrets', '-n', 'demo', '--watch-only', '-o', 'jsonpath={.metadata.name}={.data.token}{"\\n"}', '--request-timeout=5s'], { timeoutMs: 10_000 });
    await new Promise((r) => setTimeout(r, 1000));
    const created = await admin('POST', SECRETS('demo'), { metadata: { name: 'api' }, stringData: { token: 'abc' }, data: { other: 'eA==' } });
    expect(created.status, created.text).to.equal(201);
    expect(created.json.data).to.deep.equal({ other: 'eA==', token: 'YWJj' });
    expect(created.json.stringData).to.equal(undefined);
    expect((await watch).stdout).to.include('api=YWJj');
  });

  it('a Secret may be replaced without a resourceVersion, as Helm updates its releases; immutable holds its data', async () => {
    const put = await admin('PUT', `${SECRETS('demo')}/api`, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'api' }, data: { token: 'eQ==' } });
    expect(put.status, put.text).to.equal(200);
    expect((await admin('POST', CONFIGMAPS('demo'), { metadata: { name: 'fixed' }, data: { a: 'b' }, immutable: true })).status).to.equal(201);
    const changed = await rawRequest(env.kubeconfig, { method: 'PATCH', path: `${CONFIGMAPS('demo')}/fixed`, body: JSON.stringify({ data: { a: 'c' } }), contentType: 'application/merge-patch+json' });
    expect(changed.status, changed.text).to.equal(422);
    expect(changed.json.message).to.include('data: Forbidden: field is immutable');
  });

  it('a key rotation as docs/security.md gives it: replacing the unchanged Secrets reseals them with the new key, so the old key can go', async () => {
    expect((await admin('POST', SECRETS('demo'), { metadata: { name: 'rotated' }, data: { pw: 'c2VjcmV0' } })).status).to.equal(201);
    const oldKeys = parseKeyFile('old', fs.readFileSync(path.join(env.dataDir, 'encryption-keys.yaml'), 'utf8'));
    const fresh = newKey();
    const keyFile = (name: string, keys: EncryptionKey[]) => {
      const file = path.join(env.dataDir, name);
      fs.writeFileSync(file, formatKeyFile(keys), { mode: 0o600 });
      return file;
    };
    // Steps 1-3: the new key first, then every Secret read and replaced as it is (kubectl get -o json | kubectl replace -f -).
    const rotating = kubeconfigFor(await env.addServer({ encryptionKeyFile: keyFile('rotating.yaml', [fresh, ...oldKeys]) }));
    const secret = (await rawRequest(rotating, { method: 'GET', path: `${SECRETS('demo')}/rotated` })).json;
    const replaced = await rawRequest(rotating, { method: 'PUT', path: `${SECRETS('demo')}/rotated`, body: JSON.stringify(secret) });
    expect(replaced.status, replaced.text).to.equal(200);
    expect((await rawEtcd('/registry/secrets/demo/rotated')).toString('latin1')).to.include(`k8s:enc:aesgcm:v1:${fresh.name}:`);
    // A value already sealed with the first key is not written again by an unchanged replace.
    const again = await rawRequest(rotating, { method: 'PUT', path: `${SECRETS('demo')}/rotated`, body: JSON.stringify(replaced.json) });
    expect(again.json.metadata.resourceVersion).to.equal(replaced.json.metadata.resourceVersion);
    // Step 4: the old key removed, the Secret still opens.
    const rotated = kubeconfigFor(await env.addServer({ encryptionKeyFile: keyFile('rotated.yaml', [fresh]) }));
    const read = await rawRequest(rotated, { method: 'GET', path: `${SECRETS('demo')}/rotated` });
    expect(read.status, read.text).to.equal(200);
    expect(read.json.data).to.deep.equal({ pw: 'c2VjcmV0' });
  });

  it('node credentials get 403 on Secrets and ConfigMaps; viewers read ConfigMaps but not Secrets', async () => {
    const t = newToken();
    expect((await admin('POST', TOKENS, { metadata: { name: t.id }, spec: { type: 'node', secretHash: t.secretHash, cluster: 'demo', nodeName: 'node-a' } })).status).to.equal(201);
    for (const p of [`${SECRETS('demo')}/db`, SECRETS('demo'), CONFIGMAPS('demo')]) {
      const r = await as(t.token, 'GET', p);
      expect(r.status, `${p}: ${r.text}`).to.equal(403);
      expect(r.json.message).to.match(/node identities may use only/);
    }
    const rules = await as(t.token, 'POST', '/apis/authorization.k8s.io/v1/selfsubjectrulesreviews', { apiVersion: 'authorization.k8s.io/v1', kind: 'SelfSubjectRulesReview', spec: { namespace: 'demo' } });
    expect(rules.json.status, 'a node lists no rules of its own: the node authorizer is not RBAC').to.include({ incomplete: true });
    const u = newToken();
    await admin('POST', TOKENS, { metadata: { name: u.id }, spec: { type: 'user', secretHash: u.secretHash, user: 'vera' } });
    await admin('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: 'vera-views' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cairn:viewer' },
      subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'vera' }],
    });
    expect((await as(u.token, 'GET', CONFIGMAPS('demo'))).status).to.equal(200);
    expect((await as(u.token, 'GET', `${SECRETS('demo')}/db`)).status).to.equal(403);
  });

  it('kubectl create namespace and apply of a Namespace make and label a Cluster; create role and rolebinding (protobuf bodies) store what was asked', async () => {
    expect(await kubectl.ok(['create', 'namespace', 'team-b'])).to.include('namespace/team-b created');
    const cluster = (await admin('GET', '/apis/cairn.dev/v1alpha1/clusters/team-b')).json;
    expect(cluster.kind).to.equal('Cluster');
    const again = await kubectl.run(['create', 'namespace', 'team-b']);
    expect(again.stderr).to.include('namespaces "team-b" already exists');
    expect((await kubectl.run(['create', 'namespace', 'default'])).stderr).to.include('already exists');
    const manifest = (team: string) => `apiVersion: v1\nkind: Namespace\nmetadata:\n  name: gitops\n  labels:\n    team: ${team}\n`;
    expect(await kubectl.ok(['apply', '-f', '-'], { stdin: manifest('a') })).to.include('namespace/gitops created');
    expect(await kubectl.ok(['apply', '-f', '-'], { stdin: manifest('a') })).to.include('namespace/gitops unchanged');
    expect(await kubectl.ok(['apply', '-f', '-'], { stdin: manifest('b') })).to.include('namespace/gitops configured');
    await kubectl.ok(['label', 'namespace', 'gitops', 'env=prod']);
    expect((await admin('GET', '/apis/cairn.dev/v1alpha1/clusters/gitops')).json.metadata.labels).to.deep.equal({ team: 'b', env: 'prod' });
    expect((await kubectl.run(['delete', 'namespace', 'gitops'])).stderr).to.include('namespaces are Clusters in Cairn');
    // Server-side apply, as Flux and Argo CD send it: a dry run first, then the apply, creating the Cluster.
    const ssa = (args: string[], team: string) => kubectl.ok(['apply', '--server-side', '--field-manager', 'flux', ...args, '-f', '-'], { stdin: manifest(team).replace('gitops', 'ssa') });
    expect(await ssa(['--dry-run=server'], 'c')).to.include('namespace/ssa serverside-applied (server dry run)');
    expect((await admin('GET', '/apis/cairn.dev/v1alpha1/clusters/ssa')).status).to.equal(404);
    expect(await ssa([], 'c')).to.include('namespace/ssa serverside-applied');
    expect(await ssa([], 'd')).to.include('namespace/ssa serverside-applied');
    const applied = (await admin('GET', '/apis/cairn.dev/v1alpha1/clusters/ssa')).json;
    expect(applied.metadata.labels).to.deep.equal({ team: 'd' });
    expect(applied.metadata.managedFields.map((f: { manager: string; operation: string }) => `${f.manager} ${f.operation}`)).to.include('flux Apply');
    expect(await kubectl.ok(['apply', '--server-side', '-f', '-'], { stdin: 'apiVersion: v1\nkind: Namespace\nmetadata:\n  name: default\n' })).to.include('namespace/default serverside-applied');
    await kubectl.ok(['create', 'role', 'reader', '-n', 'team-b', '--verb=get,list', '--resource=instances.cairn.dev']);
    await kubectl.ok(['create', 'rolebinding', 'reader', '-n', 'team-b', '--role=reader', '--user=bob']);
    const role = JSON.parse(await kubectl.ok(['get', 'role', 'reader', '-n', 'team-b', '-o', 'json']));
    expect(role.rules).to.deep.equal([{ apiGroups: ['cairn.dev'], resources: ['instances'], verbs: ['get', 'list'] }]);
    expect(role.metadata).to.not.have.property('generateName');
    const binding = JSON.parse(await kubectl.ok(['get', 'rolebinding', 'reader', '-n', 'team-b', '-o', 'json']));
    expect(binding.subjects).to.deep.equal([{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: 'bob' }]);
    expect(binding.roleRef).to.deep.equal({ apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'reader' });
  });
});

/**
 * CairnClient and PooledKubeConfig (api/client/) against a real etcd and
 * an in-process apiserver: typed CRUD, the status subresource, merge patch,
 * paging, 404 → undefined/false, 409 on a stale resourceVersion or failed
 * precondition as ApiStatusError; and connection reuse: a pooled KubeConfig
 * opens one TLS connection for sequential calls where a stock one opens one
 * per call (counted at https.Agent.prototype.createConnection); a large
 * body asked for and read gzipped.
 */
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { CairnClient } from '../../../api/client/cairn-client.js';
import { ApiStatusError } from '../../../api/client/errors.js';
import { jsonBody, jsonHeaders, requestUrl, send } from '../../../api/client/http-exchange.js';
import { loadKubeConfig, PooledKubeConfig } from '../../../api/client/kubeconfig.js';
import type { Cluster } from '../../../api/cluster.js';
import type { Instance } from '../../../api/instance.js';
import { cluster, instance } from '../../support/fixtures.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';

const NS = 'cc';
const inst = (name: string, extra: Record<string, unknown> = {}) => instance(name, NS, extra) as unknown as Instance;

async function rejection(p: Promise<unknown>): Promise<ApiStatusError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(ApiStatusError);
    return err as ApiStatusError;
  }
  throw new Error('expected the call to fail');
}

/** Counts new TLS connections opened by any https.Agent while fn runs. */
async function countConnections(fn: () => Promise<void>): Promise<number> {
  const proto = https.Agent.prototype as unknown as { createConnection: (...args: unknown[]) => unknown };
  const original = proto.createConnection;
  let n = 0;
  proto.createConnection = function (this: unknown, ...args: unknown[]) {
    n++;
    return original.apply(this, args);
  };
  try {
    await fn();
  } finally {
    proto.createConnection = original;
  }
  return n;
}

describe('CairnClient and PooledKubeConfig (real etcd, in-process apiserver)', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let kc: PooledKubeConfig;
  let client: CairnClient;

  before(async () => {
    env = await startTestEnv();
    kc = loadKubeConfig({ kubeconfig: env.server.kubeconfigPath });
    client = new CairnClient(kc, 'runtime-test');
    await client.create('Cluster', cluster(NS) as unknown as Cluster);
  });
  after(async () => {
    kc?.destroyAgent();
    await env?.stop();
  });

  describe('CRUD', () => {
    it('create then get returns the stored object; a missing object or namespace is undefined', async () => {
      const created = await client.create('Instance', inst('a'));
      expect(created).to.include({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance' });
      expect(created.metadata).to.include({ name: 'a', namespace: NS });
      expect(created.metadata.uid).to.be.a('string');
      const got = await client.get('Instance', NS, 'a');
      expect(got?.metadata.resourceVersion).to.equal(created.metadata.resourceVersion);
      expect(got?.spec.cpus).to.equal(1);
      expect(await client.get('Instance', NS, 'nope')).to.equal(undefined);
      expect(await client.get('Instance', 'no-such-ns', 'a')).to.equal(undefined);
      expect((await client.get('Cluster', undefined, NS))?.metadata.name, 'cluster-scoped get').to.equal(NS);
      expect(await client.get('Cluster', undefined, 'nope')).to.equal(undefined);
    });

    it('create of a taken name → 409 AlreadyExists; of a namespaced kind without namespace → a clear error', async () => {
      await client.create('Instance', inst('dup'));
      const e = await rejection(client.create('Instance', inst('dup')));
      expect([e.code, e.reason]).to.deep.equal([409, 'AlreadyExists']);
      const noNs = inst('orphan');
      delete noNs.metadata.namespace;
      let thrown: unknown;
      try {
        await client.create('Instance', noNs);
      } catch (err) {
        thrown = err;
      }
      expect(String(thrown)).to.match(/Instance is namespaced: metadata\.namespace .* is required/);
    });

    it('replace writes with the resourceVersion read; a stale one → ApiStatusError 409 Conflict', async () => {
      const v1 = await client.create('Instance', inst('r'));
      const v2 = await client.replace('Instance', { ...v1, spec: { ...v1.spec, cpus: 2 } });
      expect(v2.spec.cpus).to.equal(2);
      expect(v2.metadata.resourceVersion).to.not.equal(v1.metadata.resourceVersion);
      expect(v2.metadata.generation).to.equal((v1.metadata.generation ?? 1) + 1);
      const e = await rejection(client.replace('Instance', { ...v1, spec: { ...v1.spec, cpus: 4 } }));
      expect([e.code, e.reason]).to.deep.equal([409, 'Conflict']);
      expect(e.message).to.match(/modified/);
      expect((await client.get('Instance', NS, 'r'))?.spec.cpus, 'the stale write changed nothing').to.equal(2);
    });

    it('replaceStatus writes only status (through the subresource); replace leaves status alone', async () => {
      const v1 = await client.create('Instance', inst('s'));
      const v2 = await client.replaceStatus('Instance', { ...v1, spec: { ...v1.spec, cpus: 9 }, status: { phase: 'Pending', observedGeneration: 1 } });
      expect(v2.status?.phase).to.equal('Pending');
      expect(v2.spec.cpus, 'spec is ignored by the status subresource').to.equal(1);
      const v3 = await client.replace('Instance', { ...v2, status: { phase: 'Running' } });
      expect(v3.status?.phase, 'status is ignored by the main resource').to.equal('Pending');
      const e = await rejection(client.replaceStatus('Instance', { ...v1, status: { phase: 'Failed' } }));
      expect(e.code).to.equal(409);
    });

    it('patch applies a JSON merge patch; with a stale metadata.resourceVersion → 409; on a missing object → 404', async () => {
      const v1 = await client.create('Instance', inst('p', { cpus: 1 }));
      const v2 = await client.patch('Instance', NS, 'p', { metadata: { labels: { tier: 'web' } }, spec: { cpus: 3 } });
      expect(v2.metadata.labels).to.deep.equal({ tier: 'web' });
      expect(v2.spec.cpus).to.equal(3);
      expect(v2.spec.memory, 'fields the patch leaves out are kept').to.equal('64Mi');
      const stale = await rejection(client.patch('Instance', NS, 'p', { metadata: { resourceVersion: v1.metadata.resourceVersion }, spec: { cpus: 5 } }));
      expect(stale.code).to.equal(409);
      const fresh = await client.patch('Instance', NS, 'p', { metadata: { resourceVersion: v2.metadata.resourceVersion }, spec: { cpus: 5 } });
      expect(fresh.spec.cpus).to.equal(5);
      const missing = await rejection(client.patch('Instance', NS, 'ghost', { spec: { cpus: 1 } }));
      expect([missing.code, missing.reason]).to.deep.equal([404, 'NotFound']);
    });

    it('delete → true, then false once gone; failed uid or resourceVersion preconditions → 409', async () => {
      const v1 = await client.create('Instance', inst('d'));
      const byRv = await rejection(client.delete('Instance', NS, 'd', { resourceVersion: '1' }));
      expect(byRv.code).to.equal(409);
      const byUid = await rejection(client.delete('Instance', NS, 'd', { uid: '00000000-0000-0000-0000-000000000000' }));
      expect(byUid.code).to.equal(409);
      expect(await client.get('Instance', NS, 'd')).to.not.equal(undefined);
      expect(await client.delete('Instance', NS, 'd', { uid: v1.metadata.uid, resourceVersion: v1.metadata.resourceVersion })).to.equal(true);
      expect(await client.get('Instance', NS, 'd')).to.equal(undefined);
      expect(await client.delete('Instance', NS, 'd')).to.equal(false);
    });

    it('list narrows by namespace and label; listAll follows continue tokens across pages', async () => {
      await client.create('Cluster', cluster('cc-list') as unknown as Cluster);
      for (let i = 0; i < 5; i++) await client.create('Instance', { ...(instance(`l${i}`, 'cc-list') as unknown as Instance), metadata: { name: `l${i}`, namespace: 'cc-list', labels: { parity: i % 2 ? 'odd' : 'even' } } });
      const page = await client.list('Instance', { namespace: 'cc-list', limit: 2 });
      expect(page.items).to.have.length(2);
      expect(page.metadata.continue).to.be.a('string').and.not.equal('');
      const all = await client.listAll('Instance', { namespace: 'cc-list', limit: 2 });
      expect(all.items.map((o) => o.metadata.name)).to.deep.equal(['l0', 'l1', 'l2', 'l3', 'l4']);
      expect(all.metadata.continue).to.equal(undefined);
      expect(all.metadata.resourceVersion).to.be.a('string');
      const odd = await client.listAll('Instance', { namespace: 'cc-list', labelSelector: 'parity=odd' });
      expect(odd.items.map((o) => o.metadata.name)).to.deep.equal(['l1', 'l3']);
      const everywhere = await client.listAll('Instance');
      expect(everywhere.items.some((o) => o.metadata.namespace === NS) && everywhere.items.some((o) => o.metadata.namespace === 'cc-list')).to.equal(true);
    });

    it('asks for gzip as client-node did, and reads a body the apiserver gzipped (128 KiB and up) as JSON', async () => {
      const big = inst('big');
      await client.create('Instance', { ...big, metadata: { ...big.metadata, annotations: { note: 'x'.repeat(200 * 1024) } } });
      const options: https.RequestOptions = { method: 'GET' };
      await kc.applyToHTTPSOptions(options);
      const { headers } = jsonHeaders({});
      const res = await send(requestUrl(kc.getCurrentCluster()!.server, client.collectionPath('Instance', NS) + '/big'), { ...options, headers: { ...options.headers, ...headers } });
      expect(res.headers['content-encoding'], 'the apiserver compressed it').to.equal('gzip');
      const read = await jsonBody<Instance>(res);
      expect(read.metadata.annotations?.note).to.have.length(200 * 1024);
      expect((await client.get('Instance', NS, 'big'))?.metadata.annotations?.note, 'through CairnClient').to.have.length(200 * 1024);
      await client.delete('Instance', NS, 'big');
    });

    it('collectionPath names the watch URL of a kind', () => {
      expect(client.collectionPath('Instance', 'x')).to.equal('/apis/cairn.dev/v1alpha1/namespaces/x/instances');
      expect(client.collectionPath('Instance')).to.equal('/apis/cairn.dev/v1alpha1/instances');
      expect(client.collectionPath('Cluster', 'x')).to.equal('/apis/cairn.dev/v1alpha1/clusters');
    });
  });

  describe('PooledKubeConfig', () => {
    it('hands every request of one KubeConfig the same keep-alive agent, and another KubeConfig its own', async () => {
      const a = (await kc.applyToFetchOptions({})).agent;
      const b = (await kc.applyToFetchOptions({})).agent;
      expect(a).to.be.instanceOf(https.Agent);
      expect(a).to.equal(b);
      expect((a as https.Agent & { keepAlive: boolean }).keepAlive).to.equal(true);
      const other = loadKubeConfig({ kubeconfig: env.server.kubeconfigPath });
      expect((await other.applyToFetchOptions({})).agent).to.not.equal(a);
      other.destroyAgent();
    });

    it('sequential calls reuse one TLS connection, where a stock KubeConfig opens one per call', async () => {
      const pooled = loadKubeConfig({ kubeconfig: env.server.kubeconfigPath });
      const pooledClient = new CairnClient(pooled);
      const viaPool = await countConnections(async () => {
        for (let i = 0; i < 6; i++) await pooledClient.get('Instance', NS, 'a');
      });
      pooled.destroyAgent();
      const stock = new KubeConfig();
      stock.loadFromFile(env.server.kubeconfigPath);
      const stockClient = new CairnClient(stock);
      const viaStock = await countConnections(async () => {
        for (let i = 0; i < 6; i++) await stockClient.get('Instance', NS, 'a');
      });
      expect({ viaPool, viaStock }).to.deep.equal({ viaPool: 1, viaStock: 6 });
    });

    it('destroyAgent closes the pool; the next call opens a fresh connection and works', async () => {
      const pooled = loadKubeConfig({ kubeconfig: env.server.kubeconfigPath });
      const c = new CairnClient(pooled);
      const first = (await pooled.applyToFetchOptions({})).agent;
      await c.get('Instance', NS, 'a');
      pooled.destroyAgent();
      const n = await countConnections(async () => {
        expect((await c.get('Instance', NS, 'a'))?.metadata.name).to.equal('a');
      });
      expect(n).to.equal(1);
      expect((await pooled.applyToFetchOptions({})).agent).to.not.equal(first);
      pooled.destroyAgent();
    });

    it('loadKubeConfig from a server URL, token and CA file reaches the apiserver; server overrides a file', async () => {
      const caFile = path.join(env.dataDir, 'runtime-test-ca.pem');
      fs.writeFileSync(caFile, Buffer.from(env.kubeconfig.getCurrentCluster()!.caData!, 'base64'));
      const direct = loadKubeConfig({ server: env.server.url, token: env.token, caFile });
      expect(direct).to.be.instanceOf(PooledKubeConfig);
      expect((await new CairnClient(direct).get('Cluster', undefined, NS))?.metadata.name).to.equal(NS);
      direct.destroyAgent();
      const badToken = loadKubeConfig({ server: env.server.url, token: 'wrong', caFile });
      const e = await rejection(new CairnClient(badToken).get('Cluster', undefined, NS));
      expect(e.code).to.equal(401);
      badToken.destroyAgent();
      const overridden = loadKubeConfig({ kubeconfig: env.server.kubeconfigPath, server: 'https://127.0.0.1:1' });
      expect(overridden.getCurrentCluster()?.server).to.equal('https://127.0.0.1:1');
    });
  });
});

/**
 * Regressions from review: foreign or oversized data, odd metadata and edge
 * parameters must give a clear 4xx (or be passed over) and never a 5xx or a
 * dead process.
 */
import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import { cairnPath, cluster, instance } from '../../support/fixtures.js';
import { rawRequest, type RawRequest } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';
import { openWatch } from '../../support/watch-stream.js';
import { eventually, sleep } from '../../support/eventually.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';
import { EtcdStore } from '../../../apiserver/storage/etcd-store.js';

describe('apiserver robustness', function () {
  this.timeout(60_000);
  let env: TestEnv;
  const send = (r: RawRequest) => rawRequest(env.kubeconfig, r);
  const json = (method: string, path: string, body: unknown, contentType?: string) => send({ method, path, body: JSON.stringify(body), contentType });

  before(async () => {
    env = await startTestEnv();
    await json('POST', cairnPath('clusters'), cluster('rob'));
  });
  after(async () => env?.stop());

  it('passes over a value in /registry/ that is not a Cairn object, and keeps serving', async () => {
    const etcd = new Etcd3({ hosts: env.etcd.endpoint });
    await etcd.put('/registry/cairn.dev/clusters/garbage').value('{"not":"an object with metadata"}');
    etcd.close();
    const list = await send({ path: cairnPath('clusters') });
    expect(list.status).to.equal(200);
    expect(list.json.items.map((c: { metadata: { name: string } }) => c.metadata.name)).to.deep.equal(['rob']);
    expect((await json('POST', cairnPath('clusters'), cluster('after-garbage'))).status).to.equal(201);
  });

  it('validates the name generateName produces', async () => {
    const r = await json('POST', cairnPath('clusters'), { ...cluster(''), metadata: { generateName: 'Bad/../' } });
    expect(r.status).to.equal(422);
    expect(r.json.details.causes[0].field).to.equal('metadata.generateName');
  });

  it('refuses metadata of the wrong shape with 422', async () => {
    const r = await json('POST', cairnPath('instances', 'rob'), { ...instance('owned', 'rob'), metadata: { name: 'owned', ownerReferences: 'me' } });
    expect(r.status).to.equal(422);
    expect(r.json.details.causes[0].field).to.equal('metadata.ownerReferences');
  });

  it('answers 413 for a patch that would make an object too big to store, and serves on', async () => {
    expect((await json('POST', cairnPath('instances', 'rob'), instance('big', 'rob'))).status).to.equal(201);
    const patch = { metadata: { annotations: { a: 'x'.repeat(200_000), b: 'x'.repeat(200_000) } }, spec: { process: { args: Array(7).fill('y'.repeat(200_000)) } } };
    const r = await json('PATCH', cairnPath('instances', 'rob', 'big'), patch, 'application/merge-patch+json');
    expect(r.status, r.text.slice(0, 200)).to.equal(413);
    expect((await send({ path: cairnPath('instances', 'rob') })).status).to.equal(200);
  });

  it('server-side apply to the status of a missing object is 404, not a create', async () => {
    const r = await send({ method: 'PATCH', path: `${cairnPath('clusters', undefined, 'gone')}/status?fieldManager=t`, contentType: 'application/apply-patch+yaml', body: 'apiVersion: cairn.dev/v1alpha1\nkind: Cluster\nmetadata: {name: gone}\nstatus: {}\n' });
    expect(r.status).to.equal(404);
    expect((await send({ path: cairnPath('clusters', undefined, 'gone') })).status).to.equal(404);
  });

  it('treats timeoutSeconds=0 as the default rather than ending the watch at once', async () => {
    const w = await openWatch(env.kubeconfig, `${cairnPath('instances', 'rob')}?watch=true&resourceVersion=0&timeoutSeconds=0`);
    let ended = false;
    void w.ended.then(() => (ended = true));
    await sleep(1000);
    w.close();
    expect(ended).to.equal(false);
  });

  it('filters namespaces by selector and does not advertise watching them', async () => {
    const byName = await send({ path: '/api/v1/namespaces?fieldSelector=metadata.name%3Drob' });
    expect(byName.json.items.map((n: { metadata: { name: string } }) => n.metadata.name)).to.deep.equal(['rob']);
    const discovery = await send({ path: '/api/v1' });
    const ns = discovery.json.resources.find((r: { name: string }) => r.name === 'namespaces');
    expect(ns.verbs, 'create makes a Cluster, patch sets its labels; no watch, delete or update').to.deep.equal(['create', 'get', 'list', 'patch']);
  });
});

describe('apiserver watch cache when etcd goes away', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let proxy: TcpProxy;

  before(async () => {
    env = await startTestEnv({}, async (endpoint) => (proxy = await startTcpProxy(endpoint)).url);
  });
  after(async () => {
    await env?.stop();
    await proxy?.close();
  });

  it('relists and serves again after its watch position was compacted away while disconnected', async () => {
    const send = (r: RawRequest) => rawRequest(env.kubeconfig, r);
    expect((await send({ method: 'POST', path: cairnPath('clusters'), body: JSON.stringify(cluster('gone')) })).status).to.equal(201);
    proxy.cut();
    // Meanwhile, through etcd directly: a new object, then compaction past everything the cache saw.
    const direct = new EtcdStore(new Etcd3({ hosts: env.etcd.endpoint }));
    for (const name of ['while-away', 'and-another']) {
      await direct.create(`/registry/cairn.dev/clusters/${name}`, { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name, uid: name }, spec: {} });
    }
    // Compacting to the newest revision removes the one the cache's watch would resume from.
    await direct.compact(await direct.currentRevision());
    direct.client.close();
    proxy.restore();
    await eventually('the cache to show the object written while it was away', async () => {
      const r = await send({ path: `${cairnPath('clusters')}?resourceVersion=0` }).catch(() => null);
      return !!r && r.status === 200 && r.json.items.some((c: { metadata: { name: string } }) => c.metadata.name === 'while-away');
    }, 30_000, 200);
    const started = Date.now();
    expect((await send({ path: cairnPath('clusters') })).status).to.equal(200);
    expect(Date.now() - started, 'a consistent list no longer waits out the freshness timeout').to.be.lessThan(900);
  });
});

/**
 * Acceptance 5 of issue 2: `kill -9` the apiserver in the middle of a write
 * load and restart it. Every write that was answered 2xx is there, and a
 * watch resumed from the last resourceVersion it saw receives every later
 * event exactly once (replayed from etcd, since the new process's cache
 * starts after it).
 */
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { URL } from 'node:url';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../../hack/etcd.js';
import { cairnPath, cluster, instance } from '../support/fixtures.js';
import { rawRequest } from '../support/http.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { openWatch } from '../support/watch-stream.js';

describe('apiserver durability across kill -9', function () {
  this.timeout(180_000);
  let etcd: ThrowawayEtcd;
  let first: ServerProcess;
  let second: ServerProcess | undefined;

  before(async () => {
    etcd = await startThrowawayEtcd();
    first = await startServerProcess({ etcdEndpoints: etcd.endpoint });
  });
  after(async () => {
    await second?.cleanup();
    await first?.cleanup();
    await etcd?.cleanup();
  });

  it('keeps every acknowledged write and resumes watches exactly once', async () => {
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(first.kubeconfig);
    const path = cairnPath('instances', 'dur');
    expect((await rawRequest(kc, { method: 'POST', path: cairnPath('clusters'), body: JSON.stringify(cluster('dur')) })).status).to.equal(201);
    const startRv = (await rawRequest(kc, { path })).json.metadata.resourceVersion;
    const watch = await openWatch(kc, `${path}?watch=true&resourceVersion=${startRv}`);

    const acknowledged: string[] = [];
    let n = 0;
    let loading = true;
    const worker = async () => {
      while (loading) {
        const name = `d-${n++}`;
        const r = await rawRequest(kc, { method: 'POST', path, body: JSON.stringify(instance(name, 'dur')) }).catch(() => null);
        if (r && r.status === 201) acknowledged.push(name);
        else if (!r) return;
      }
    };
    const workers = Array.from({ length: 16 }, worker);
    await new Promise((r) => setTimeout(r, 1500));
    await first.kill9();
    loading = false;
    await Promise.all(workers);
    await watch.ended;
    expect(acknowledged.length, 'writes acknowledged before the kill').to.be.greaterThan(50);
    const lastSeen = watch.events.at(-1)!.object.metadata.resourceVersion as string;

    second = await startServerProcess({ etcdEndpoints: etcd.endpoint, dataDir: first.dataDir, port: Number(new URL(first.url).port) });
    const missing: string[] = [];
    for (const name of acknowledged) {
      if ((await rawRequest(kc, { path: `${path}/${name}` })).status !== 200) missing.push(name);
    }
    expect(missing, 'acknowledged writes lost').to.deep.equal([]);

    const resumed = await openWatch(kc, `${path}?watch=true&resourceVersion=${lastSeen}`);
    for (let i = 0; i < 20; i++) await rawRequest(kc, { method: 'POST', path, body: JSON.stringify(instance(`after-${i}`, 'dur')) });
    const all = (await rawRequest(kc, { path })).json.items as { metadata: { name: string; resourceVersion: string } }[];
    const expected = all.filter((o) => Number(o.metadata.resourceVersion) > Number(lastSeen)).map((o) => o.metadata.name).sort();
    await resumed.until((evs) => evs.length >= expected.length);
    await new Promise((r) => setTimeout(r, 300));
    resumed.close();
    const got = resumed.events.map((e) => `${e.type} ${e.object.metadata.name}`);
    expect(got.length, 'no event twice').to.equal(new Set(got).size);
    expect(got.sort()).to.deep.equal(expected.map((name) => `ADDED ${name}`).sort());
  });
});

/**
 * Issue 17, defect 1: objects big enough that 1,000 of them, or a client's
 * `limit` of them, exceed gRPC's default 4 MiB message. 90 Instances of
 * 100 KiB (9 MiB) are enough: the apiserver must still restart over them,
 * and a `?limit=500` LIST must answer 200 with every item reachable
 * through `continue` (in more than one page: a page stops at 8 MiB).
 */
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../../hack/etcd.js';
import { cairnPath, cluster, instance } from '../support/fixtures.js';
import { rawRequest } from '../support/http.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const NS = 'big';
const COUNT = 90;
const PAD = 'x'.repeat(100 * 1024);

describe('apiserver with objects larger than a gRPC message in total', function () {
  this.timeout(60_000);
  let etcd: ThrowawayEtcd;
  let first: ServerProcess;
  let second: ServerProcess | undefined;
  let kc: k8s.KubeConfig;

  /** Every item of a paged LIST, following `continue` (each page must answer 200), and the number of pages. */
  const listAll = async (query: string): Promise<{ names: string[]; pages: number }> => {
    const names: string[] = [];
    let cont = '';
    for (let pages = 1; pages <= 100; pages++) {
      const r = await rawRequest(kc, { path: `${cairnPath('instances', NS)}?${query}${cont && `&continue=${encodeURIComponent(cont)}`}` });
      expect(r.status, r.text.slice(0, 300)).to.equal(200);
      names.push(...(r.json.items as { metadata: { name: string } }[]).map((o) => o.metadata.name));
      cont = r.json.metadata.continue ?? '';
      if (!cont) return { names, pages };
    }
    throw new Error(`${query}: still a continue token after 100 pages`);
  };
  const expected = Array.from({ length: COUNT }, (_, i) => `big-${String(i).padStart(2, '0')}`);

  before(async () => {
    etcd = await startThrowawayEtcd();
    first = await startServerProcess({ etcdEndpoints: etcd.endpoint });
    kc = new k8s.KubeConfig();
    kc.loadFromFile(first.kubeconfig);
    expect((await rawRequest(kc, { method: 'POST', path: cairnPath('clusters'), body: JSON.stringify(cluster(NS)) })).status).to.equal(201);
    for (let i = 0; i < COUNT; i += 10) {
      await Promise.all(expected.slice(i, i + 10).map(async (name) => {
        const obj = instance(name, NS);
        obj.metadata.annotations = { 'cairn.dev/pad': PAD };
        const r = await rawRequest(kc, { method: 'POST', path: cairnPath('instances', NS), body: JSON.stringify(obj) });
        expect(r.status, r.text.slice(0, 300)).to.equal(201);
      }));
    }
  });
  after(async () => {
    await second?.cleanup();
    await first?.cleanup();
    await etcd?.cleanup();
  });

  it('answers ?limit=500 with 200, every item reachable through continue', async () => {
    const big = await listAll('limit=500');
    expect(big.names).to.deep.equal(expected);
    expect(big.pages, 'pages of at most 8 MiB').to.equal(2);
    expect(await listAll('limit=7'), 'small pages').to.deep.equal({ names: expected, pages: 13 });
  });

  it('restarts over them, becomes ready and lists them all', async () => {
    await first.stop();
    second = await startServerProcess({ etcdEndpoints: etcd.endpoint, dataDir: first.dataDir });
    kc.loadFromFile(second.kubeconfig);
    expect((await rawRequest(kc, { path: '/readyz', authorization: null })).status).to.equal(200);
    const r = await rawRequest(kc, { path: cairnPath('instances', NS) });
    expect(r.status, r.text.slice(0, 300)).to.equal(200);
    expect((r.json.items as { metadata: { name: string } }[]).map((o) => o.metadata.name)).to.deep.equal(expected);
    expect((await listAll('limit=500')).names).to.deep.equal(expected);
  });
});

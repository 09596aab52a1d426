/**
 * A full etcd (its NOSPACE alarm raised at --quota-backend-bytes) costs
 * writes only: they answer 507 saying NOSPACE and the command that frees
 * space, while reads, lists, deletes and /readyz keep working, the alarm is
 * on /readyz and /metrics, and both the apiserver and etcd restart under
 * the alarm. `cairn etcd defrag` brings writes back.
 */
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../../hack/etcd.js';
import { runCairn } from '../support/cairn-cli.js';
import { eventually } from '../support/eventually.js';
import { cairnPath, cluster, instance } from '../support/fixtures.js';
import { rawRequest, type RawResponse } from '../support/http.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const QUOTA = 16 * 2 ** 20;
const PAD = 'x'.repeat(200 * 1024); // under the 256 KiB annotation limit

describe('etcd out of space (NOSPACE alarm)', function () {
  this.timeout(60_000);
  let etcd: ThrowawayEtcd;
  let server: ServerProcess | undefined;
  let kc: k8s.KubeConfig;

  before(async () => {
    etcd = await startThrowawayEtcd({ quotaBackendBytes: QUOTA });
  });
  after(async () => {
    await server?.cleanup();
    await etcd?.cleanup();
  });

  const startServer = async () => {
    server = await startServerProcess({ etcdEndpoints: etcd.endpoint });
    kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfig);
  };
  const create = (name: string, pad = '') => {
    const obj = instance(name, 'full');
    obj.metadata.annotations = { 'test/pad': pad };
    return rawRequest(kc, { method: 'POST', path: cairnPath('instances', 'full'), body: JSON.stringify(obj) });
  };
  const readyz = () => rawRequest(kc, { path: '/readyz', authorization: null });
  const expectNoSpace = (r: RawResponse) => {
    expect(r.status, r.text).to.equal(507);
    expect(r.json).to.include({ kind: 'Status', reason: 'InsufficientStorage' });
    expect(r.json.message).to.include('etcd is out of space (NOSPACE alarm)').and.include(`cairn etcd defrag --etcd-endpoints ${etcd.endpoint}`);
  };

  it('refuses writes with a NOSPACE error, serves reads and deletes, and recovers with cairn etcd defrag', async () => {
    await startServer();
    expect((await rawRequest(kc, { method: 'POST', path: cairnPath('clusters'), body: JSON.stringify(cluster('full')) })).status).to.equal(201);
    // History fills etcd (no compaction runs in the test): few live objects, rewritten until etcd refuses.
    for (let i = 0; i < 4; i++) expect((await create(`pad-${i}`, PAD)).status).to.equal(201);
    let updates = 0;
    let refused: RawResponse | undefined;
    while (!refused && updates < 200) {
      const body = JSON.stringify({ metadata: { annotations: { 'test/pad': `${updates}${PAD}` } } });
      const r = await rawRequest(kc, { method: 'PATCH', path: cairnPath('instances', 'full', `pad-${updates % 4}`), body, contentType: 'application/merge-patch+json' });
      if (r.status === 200) updates++;
      else refused = r;
    }
    expect(updates, 'updates written before etcd filled').to.be.within(20, 150);
    expectNoSpace(refused!);
    for (let i = 0; i < 5; i++) expectNoSpace(await create(`small-${i}`)); // not a 503 from an opened circuit breaker

    expect((await rawRequest(kc, { path: cairnPath('instances', 'full', 'pad-0') })).status).to.equal(200);
    const list = await rawRequest(kc, { path: cairnPath('instances', 'full') });
    expect(list.status).to.equal(200);
    expect(list.json.items).to.have.length(4);
    expect((await rawRequest(kc, { method: 'DELETE', path: cairnPath('instances', 'full', 'pad-3') })).status, 'DELETE').to.equal(200);

    const ready = await readyz();
    expect(ready.status, 'reads and deletes are served, so /readyz stays 200').to.equal(200);
    expect(ready.text).to.include('warning: etcd is out of space (NOSPACE alarm)');
    const metrics = await rawRequest(kc, { path: '/metrics' });
    expect(metrics.text).to.match(/^cairn_apiserver_etcd_alarm\{alarm="NOSPACE"\} 1$/m);
    expect(server!.logs()).to.include('etcd NOSPACE alarm raised');

    // Both restart under the alarm: etcd's /health is false while an alarm is raised.
    await server!.cleanup();
    await etcd.restart();
    await startServer();
    expectNoSpace(await create('after-restart'));
    await eventually('/readyz to report the alarm after the restart', async () => (await readyz()).text.includes('NOSPACE'), 10_000, 100);

    const defrag = await runCairn(['etcd', 'defrag', '--etcd-endpoints', etcd.endpoint], { timeoutMs: 20_000 });
    expect(defrag.code, defrag.stderr).to.equal(0);
    expect(defrag.stdout).to.include('disarmed the NOSPACE alarm');
    expect((await create('after-defrag')).status).to.equal(201);
    await eventually('/readyz to drop the warning', async () => {
      const r = await readyz();
      return r.status === 200 && r.text === 'ok';
    }, 10_000, 100);
    expect((await rawRequest(kc, { path: '/metrics' })).text).to.match(/^cairn_apiserver_etcd_alarm\{alarm="NOSPACE"\} 0$/m);
  });
});

/**
 * The apiserver's /metrics under kube-apiserver's names (issue 16): request
 * counters by verb, resource and code that rise with traffic, latency
 * histograms, open watches, watch-cache sizes and etcd latency; only for an
 * authenticated, authorized user.
 */
import { expect } from 'chai';
import { cairnPath, cluster, instance } from '../../support/fixtures.js';
import { eventually } from '../../support/eventually.js';
import { rawRequest } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';
import { openWatch } from '../../support/watch-stream.js';

/** The sum of the samples of `name` whose labels include every one of `labels`. */
function sample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([k, v]) => `${k}="${v}"`);
  return text
    .split('\n')
    .filter((l) => (l.startsWith(`${name}{`) || l.startsWith(`${name} `)) && wanted.every((w) => l.includes(w)))
    .reduce((sum, l) => sum + Number(l.split(' ').pop()), 0);
}

describe('apiserver /metrics (issue 16)', function () {
  this.timeout(60_000);
  let env: TestEnv;
  const ns = 'metrics';
  const metrics = async () => (await rawRequest(env.kubeconfig, { path: '/metrics' })).text;

  before(async () => {
    env = await startTestEnv();
    await rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('clusters'), body: JSON.stringify(cluster(ns)) });
  });
  after(async () => env?.stop());

  it('counts requests by verb, resource and code, rising with traffic, with their latency', async () => {
    const created = { verb: 'create', group: 'cairn.dev', version: 'v1alpha1', resource: 'instances', scope: 'namespace', code: '201' };
    const before = sample(await metrics(), 'apiserver_request_total', created);
    for (let i = 0; i < 5; i++) {
      const r = await rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('instances', ns), body: JSON.stringify(instance(`m-${i}`, ns)) });
      expect(r.status).to.equal(201);
    }
    expect((await rawRequest(env.kubeconfig, { path: cairnPath('instances', ns, 'nope') })).status).to.equal(404);
    const text = await metrics();
    expect(sample(text, 'apiserver_request_total', created) - before).to.equal(5);
    expect(sample(text, 'apiserver_request_total', { verb: 'get', resource: 'instances', scope: 'resource', code: '404' })).to.be.at.least(1);
    expect(sample(text, 'apiserver_request_duration_seconds_count', { verb: 'create', resource: 'instances' })).to.be.at.least(5);
    expect(sample(text, 'etcd_request_duration_seconds_count', { operation: 'create', type: 'instances.cairn.dev' })).to.be.at.least(5);
    expect(sample(text, 'apiserver_watch_cache_objects', { resource: 'instances.cairn.dev' })).to.equal(5);
  });

  it('shows open watches as long-running requests until they end', async () => {
    const open = { verb: 'watch', resource: 'instances', scope: 'namespace' };
    const watch = await openWatch(env.kubeconfig, `${cairnPath('instances', ns)}?watch=true`);
    await eventually('the watch counted', async () => sample(await metrics(), 'apiserver_longrunning_requests', open) === 1, 5_000, 50);
    watch.close();
    await eventually('the watch ended', async () => sample(await metrics(), 'apiserver_longrunning_requests', open) === 0, 5_000, 50);
    expect(sample(await metrics(), 'apiserver_request_total', { verb: 'watch', resource: 'instances', code: '200' })).to.be.at.least(1);
  });

  it('names what is not served `unknown`: made-up URLs, even without a token, add no series of their own', async () => {
    for (let i = 0; i < 20; i++) {
      const made = [`/apis/g${i}.example/v${i}/things${i}`, `/api/v1/namespaces/${ns}/stuff${i}`, `${cairnPath('instances', ns, 'm-0')}/sub${i}`];
      for (const path of made) expect((await rawRequest(env.kubeconfig, { path, authorization: i % 2 ? null : undefined })).status).to.be.oneOf([401, 404]);
    }
    const text = await metrics();
    expect(text).to.not.match(/things\d|stuff\d|sub\d|g\d+\.example/);
    expect(sample(text, 'apiserver_request_total', { resource: 'unknown' })).to.be.at.least(20);
    expect(sample(text, 'apiserver_request_total', { resource: 'instances', subresource: 'unknown' })).to.be.at.least(10);
    expect(sample(text, 'apiserver_request_total', { resource: 'instances', subresource: 'status', code: '200' }), 'a served subresource keeps its name').to.equal(0);
    expect((await rawRequest(env.kubeconfig, { path: `${cairnPath('instances', ns, 'm-0')}/status` })).status).to.equal(200);
    expect(sample(await metrics(), 'apiserver_request_total', { resource: 'instances', subresource: 'status', code: '200' })).to.equal(1);
  });

  it('is refused without a token', async () => {
    expect((await rawRequest(env.kubeconfig, { path: '/metrics', authorization: null })).status).to.equal(401);
  });
});

/**
 * Priority levels across HTTP (apiserver/http/priority-levels.ts): with one
 * workload seat and one place in the queue, a burst of lists gets 429
 * TooManyRequests with Retry-After for what does not fit, while Lease
 * requests sent in the same burst are all served, and a watch takes no seat.
 */
import { expect } from 'chai';
import type { ClientRequest } from 'node:http';
import https from 'node:https';
import { rawRequest } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';
import { openWatch } from '../../support/watch-stream.js';

describe('apiserver: priority levels', function () {
  this.timeout(60_000);
  let env: TestEnv;

  before(async () => {
    env = await startTestEnv({ maxRequestsInflight: 1, maxRequestsQueued: 1 });
    await rawRequest(env.kubeconfig, { method: 'POST', path: '/api/v1/namespaces', body: JSON.stringify({ metadata: { name: 'pl' } }), contentType: 'application/json' });
  });
  after(async () => env?.stop());

  it('refuses workload beyond its seat and queue with 429 and Retry-After; Leases and watches are never refused', async () => {
    const watch = await openWatch(env.kubeconfig, '/api/v1/namespaces/pl/configmaps?watch=true');
    const lists = Array.from({ length: 30 }, () => rawRequest(env.kubeconfig, { path: '/api/v1/namespaces/pl/configmaps' }));
    const leases = Array.from({ length: 30 }, (_, i) =>
      rawRequest(env.kubeconfig, { method: 'POST', path: '/apis/coordination.k8s.io/v1/namespaces/pl/leases', body: JSON.stringify({ metadata: { name: `l${i}` }, spec: { holderIdentity: 'n' } }), contentType: 'application/json' }));
    const listed = await Promise.all(lists);
    const refused = listed.filter((r) => r.status === 429);
    expect(refused.length, 'lists refused').to.be.greaterThan(0);
    expect(listed.filter((r) => r.status === 200).length, 'lists served').to.be.greaterThan(0);
    expect(refused[0]!.headers['retry-after']).to.equal('1');
    expect(refused[0]!.json).to.include({ kind: 'Status', reason: 'TooManyRequests', code: 429 });
    expect(refused[0]!.json.message).to.match(/overloaded.*--max-requests-inflight/);
    expect((await Promise.all(leases)).map((r) => r.status)).to.deep.equal(Array(30).fill(201));
    watch.close();
  });

  it('gives the seat back when a queued client goes away before its turn (it was never released, and the level starved)', async () => {
    const cluster = env.kubeconfig.getCurrentCluster()!;
    const auth = { ca: Buffer.from(cluster.caData!, 'base64'), headers: { authorization: `Bearer ${env.kubeconfig.getCurrentUser()!.token}`, 'content-type': 'application/json' } };
    const url = new URL('/api/v1/namespaces/pl/configmaps', cluster.server);
    // The seat's holder: a create whose body arrives slowly (the body is read once the seat is taken).
    const body = JSON.stringify({ metadata: { name: 'slow' } });
    let holder!: ClientRequest;
    const held = new Promise<number>((resolve) => {
      holder = https.request(url, { ...auth, method: 'POST', headers: { ...auth.headers, 'content-length': String(body.length) } }, (res) => (res.resume(), resolve(res.statusCode!)));
      holder.write(body.slice(0, 5));
    });
    await new Promise((r) => setTimeout(r, 200));
    const queued = https.get(url, auth, () => undefined).on('error', () => undefined);
    await new Promise((r) => setTimeout(r, 200));
    queued.destroy(); // gone while it waits in the queue
    await new Promise((r) => setTimeout(r, 200));
    holder.end(body.slice(5));
    expect(await held).to.equal(201);
    const next = await Promise.race([rawRequest(env.kubeconfig, { path: '/api/v1/namespaces/pl/configmaps' }), new Promise<undefined>((r) => setTimeout(r, 5000))]);
    expect(next?.status, 'a list after them is served').to.equal(200);
  });
});

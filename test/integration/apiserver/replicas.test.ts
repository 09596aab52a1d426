/**
 * Acceptance 6 of issue 2: apiserver replicas are stateless; a write
 * through one is seen by a watch on another.
 */
import { expect } from 'chai';
import { cairnPath, cluster, instance } from '../../support/fixtures.js';
import { rawRequest } from '../../support/http.js';
import { kubeconfigFor, startTestEnv, type TestEnv } from '../../support/in-process.js';
import { openWatch } from '../../support/watch-stream.js';

describe('two apiservers over one etcd', function () {
  this.timeout(60_000);
  let env: TestEnv;

  before(async () => {
    env = await startTestEnv();
  });
  after(async () => env?.stop());

  it('a write through one is seen by a watch on the other', async () => {
    const other = kubeconfigFor(await env.addServer());
    await rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('clusters'), body: JSON.stringify(cluster('two')) });
    const list = await rawRequest(other, { path: cairnPath('instances', 'two') });
    const watch = await openWatch(other, `${cairnPath('instances', 'two')}?watch=true&resourceVersion=${list.json.metadata.resourceVersion}`);
    const created = await rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('instances', 'two'), body: JSON.stringify(instance('x', 'two')) });
    expect(created.status).to.equal(201);
    await rawRequest(env.kubeconfig, { method: 'DELETE', path: cairnPath('instances', 'two', 'x') });
    await watch.until((evs) => evs.length >= 2);
    watch.close();
    expect(watch.events.map((e) => e.type)).to.deep.equal(['ADDED', 'DELETED']);
    expect(watch.events[0]!.object.metadata.resourceVersion).to.equal(created.json.metadata.resourceVersion);
    // A read on the second server right after a write on the first sees it (lists are consistent reads).
    await rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('instances', 'two'), body: JSON.stringify(instance('y', 'two')) });
    const after = await rawRequest(other, { path: cairnPath('instances', 'two') });
    expect(after.json.items.map((i: { metadata: { name: string } }) => i.metadata.name)).to.deep.equal(['y']);
  });
});

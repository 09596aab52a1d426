/**
 * Acceptance 4 of issue 2: compare-and-swap under contention. Many clients
 * race to create one name or to update from one resourceVersion; exactly one
 * wins and the rest get the right 409.
 */
import { expect } from 'chai';
import https from 'node:https';
import { cairnPath, cluster, instance } from '../../support/fixtures.js';
import { rawRequest } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';

describe('apiserver concurrency (real etcd)', function () {
  this.timeout(120_000);
  let env: TestEnv;

  before(async () => {
    env = await startTestEnv();
    const r = await rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('clusters'), body: JSON.stringify(cluster('race')) });
    expect(r.status).to.equal(201);
  });
  after(async () => env?.stop());

  it('100 concurrent creates of one name: exactly one 201, 99 AlreadyExists', async () => {
    const body = JSON.stringify(instance('one', 'race'));
    const results = await Promise.all(
      Array.from({ length: 100 }, () => rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('instances', 'race'), body })),
    );
    const created = results.filter((r) => r.status === 201);
    const exists = results.filter((r) => r.status === 409 && r.json?.reason === 'AlreadyExists');
    expect(created).to.have.length(1);
    expect(exists).to.have.length(99);
  });

  it('20 concurrent server-side applies of a missing object by different managers: one creates it, the others update it; none fails', async () => {
    // Connections opened beforehand, so that the applies arrive together rather than one TLS handshake apart.
    const agent = new https.Agent({ keepAlive: true });
    await Promise.all(Array.from({ length: 20 }, () => rawRequest(env.kubeconfig, { path: cairnPath('instances', 'race'), agent })));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) => {
        const body = { ...instance('applied', 'race'), metadata: { name: 'applied', namespace: 'race', labels: { [`by-${i}`]: 'yes' } } };
        return rawRequest(env.kubeconfig, { method: 'PATCH', path: `${cairnPath('instances', 'race', 'applied')}?fieldManager=m${i}`, body: JSON.stringify(body), contentType: 'application/apply-patch+yaml', agent });
      }),
    );
    agent.destroy();
    expect(results.map((r) => r.status).sort()).to.deep.equal([...Array(19).fill(200), 201]);
    const final = await rawRequest(env.kubeconfig, { path: cairnPath('instances', 'race', 'applied') });
    expect(Object.keys(final.json.metadata.labels)).to.have.length(20);
  });

  it('50 concurrent updates from the same resourceVersion: exactly one succeeds, 49 Conflict', async () => {
    const created = await rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('instances', 'race'), body: JSON.stringify(instance('upd', 'race')) });
    const obj = created.json;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => {
        const next = { ...obj, spec: { ...obj.spec, cpus: i + 2 } };
        return rawRequest(env.kubeconfig, { method: 'PUT', path: cairnPath('instances', 'race', 'upd'), body: JSON.stringify(next) });
      }),
    );
    const ok = results.filter((r) => r.status === 200);
    const conflicts = results.filter((r) => r.status === 409 && r.json?.reason === 'Conflict');
    expect(ok).to.have.length(1);
    expect(conflicts).to.have.length(49);
    const final = await rawRequest(env.kubeconfig, { path: cairnPath('instances', 'race', 'upd') });
    expect(final.json.spec.cpus).to.equal(ok[0]!.json.spec.cpus);
    expect(final.json.metadata.generation).to.equal(2);
  });

  it('concurrent merge patches without a resourceVersion are all applied (retried, never lost)', async () => {
    await rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('instances', 'race'), body: JSON.stringify(instance('labels', 'race')) });
    const results = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        rawRequest(env.kubeconfig, {
          method: 'PATCH',
          path: cairnPath('instances', 'race', 'labels'),
          contentType: 'application/merge-patch+json',
          body: JSON.stringify({ metadata: { labels: { [`l${i}`]: 'x' } } }),
        }),
      ),
    );
    expect(results.map((r) => r.status)).to.deep.equal(Array(30).fill(200));
    const final = await rawRequest(env.kubeconfig, { path: cairnPath('instances', 'race', 'labels') });
    expect(Object.keys(final.json.metadata.labels)).to.have.length(30);
  });
});

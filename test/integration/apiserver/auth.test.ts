/**
 * Acceptance 8 of issue 2: every endpoint but health and version needs the
 * bearer token; plain HTTP is not served unless asked for on loopback.
 */
import { expect } from 'chai';
import http from 'node:http';
import { URL } from 'node:url';
import { startApiServer } from '../../../apiserver/server.js';
import { rawRequest } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';
import { CRD_DIR } from '../../support/paths.js';

function plainGet(url: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = http.get(url, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.setTimeout(5000, () => req.destroy(new Error('timeout')));
  });
}

describe('apiserver authentication and transport', function () {
  this.timeout(60_000);
  let env: TestEnv;

  before(async () => {
    env = await startTestEnv();
  });
  after(async () => env?.stop());

  for (const path of ['/api', '/apis', '/apis/cairn.dev/v1alpha1/clusters', '/openapi/v3', '/api/v1/namespaces']) {
    it(`GET ${path}: no token → 401, wrong token → 401, right token → 200`, async () => {
      const none = await rawRequest(env.kubeconfig, { path, authorization: null });
      const wrong = await rawRequest(env.kubeconfig, { path, authorization: 'Bearer not-the-token' });
      const basic = await rawRequest(env.kubeconfig, { path, authorization: 'Basic YWRtaW46YWRtaW4=' });
      const right = await rawRequest(env.kubeconfig, { path });
      for (const r of [none, wrong, basic]) {
        expect(r.status).to.equal(401);
        expect(r.json).to.include({ kind: 'Status', reason: 'Unauthorized', code: 401 });
      }
      expect(right.status).to.equal(200);
    });
  }

  it('writes need the token too, and are not performed without it', async () => {
    const r = await rawRequest(env.kubeconfig, { method: 'POST', path: '/apis/cairn.dev/v1alpha1/clusters', authorization: null, body: '{"metadata":{"name":"nope"}}' });
    expect(r.status).to.equal(401);
    const get = await rawRequest(env.kubeconfig, { path: '/apis/cairn.dev/v1alpha1/clusters/nope' });
    expect(get.status).to.equal(404);
  });

  it('serves /healthz, /readyz and /version without a token', async () => {
    for (const path of ['/healthz', '/readyz', '/version']) {
      expect((await rawRequest(env.kubeconfig, { path, authorization: null })).status, path).to.equal(200);
    }
    const v = await rawRequest(env.kubeconfig, { path: '/version', authorization: null });
    expect(v.json).to.include({ major: '1', minor: '32' });
  });

  it('does not serve plain HTTP on its port', async () => {
    const url = new URL(env.server.url);
    const status = await plainGet(`http://127.0.0.1:${url.port}/version`).catch(() => 0);
    expect(status).to.not.equal(200);
  });

  it('refuses --insecure-http on a non-loopback address', async () => {
    const err = await startApiServer({
      etcdEndpoints: [env.etcd.endpoint], dataDir: env.dataDir, listen: '0.0.0.0', port: 0, insecureHttp: true, crdDir: CRD_DIR,
      compactionIntervalMs: 0, eventTtlSeconds: 60, logLevel: 'error',
    }).then(() => null, (e: Error) => e);
    expect(err?.message).to.match(/only allowed on a loopback/);
  });
});

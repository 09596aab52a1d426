/** Large answers are gzipped for clients that accept it (kube-apiserver's 128 KiB threshold); small ones and other clients get plain JSON. */
import { expect } from 'chai';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import zlib from 'node:zlib';
import { rawRequest } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';

describe('response compression', function () {
  this.timeout(30_000);
  let env: TestEnv;
  const get = (p: string, encoding?: string) =>
    new Promise<{ headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
      const headers = { Authorization: `Bearer ${env.token}`, ...(encoding ? { 'Accept-Encoding': encoding } : {}) };
      https.get(`${env.server.url}${p}`, { ca: fs.readFileSync(path.join(env.dataDir, 'pki', 'ca.crt')), headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ headers: res.headers, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });

  before(async () => {
    env = await startTestEnv();
    await rawRequest(env.kubeconfig, { method: 'POST', path: '/api/v1/namespaces', body: JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'big' } }) });
    for (let i = 0; i < 80; i++) {
      const r = await rawRequest(env.kubeconfig, { method: 'POST', path: '/api/v1/namespaces/big/configmaps', body: JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: `c${i}` }, data: { text: 'x'.repeat(2048) } }) });
      expect(r.status).to.equal(201);
    }
  });
  after(async () => env?.stop());

  it('gzips a list over 128 KiB for a client accepting gzip', async () => {
    const r = await get('/api/v1/namespaces/big/configmaps', 'gzip, deflate');
    expect(r.headers['content-encoding']).to.equal('gzip');
    expect(r.headers.vary).to.equal('Accept-Encoding');
    const json = JSON.parse(zlib.gunzipSync(r.body).toString()) as { items: unknown[] };
    expect(json.items).to.have.length(80);
    expect(r.body.length).to.be.below(20 * 1024);
  });

  it('sends plain JSON to a client not accepting gzip (or refusing it with q=0), and for small answers', async () => {
    for (const encoding of [undefined, 'identity', 'gzip;q=0']) {
      const r = await get('/api/v1/namespaces/big/configmaps', encoding);
      expect(r.headers['content-encoding'], String(encoding)).to.equal(undefined);
      expect((JSON.parse(r.body.toString()) as { items: unknown[] }).items).to.have.length(80);
    }
    expect((await get('/api/v1/namespaces/big/configmaps/c1', 'gzip')).headers['content-encoding']).to.equal(undefined);
  });
});

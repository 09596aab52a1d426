/** The dashboard's files at /ui/: open to all, cached as their names allow, gzipped, the page for any other /ui/ path. */
import { expect } from 'chai';
import fs from 'node:fs';
import https from 'node:https';
import path from 'node:path';
import zlib from 'node:zlib';
import { DASHBOARD_DIR } from '../../../apiserver/http/dashboard.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';

describe('the dashboard files at /ui/', function () {
  this.timeout(30_000);
  let env: TestEnv;
  const get = (p: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }>((resolve, reject) => {
      https.get(`${env.server.url}${p}`, { ca: fs.readFileSync(path.join(env.dataDir, 'pki', 'ca.crt')), headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
      }).on('error', reject);
    });

  before(async () => {
    if (!fs.existsSync(path.join(DASHBOARD_DIR, 'index.html'))) throw new Error(`the dashboard is not built in ${DASHBOARD_DIR}: run npm run build`);
    env = await startTestEnv();
  });
  after(async () => env?.stop());

  it('redirects /ui to /ui/ and serves the page without a token, revalidated and with a CSP', async () => {
    const bare = await get('/ui');
    expect([bare.status, bare.headers.location]).to.deep.equal([301, '/ui/']);
    const page = await get('/ui/');
    expect(page.status).to.equal(200);
    expect(page.body.toString()).to.include('<div id="app"');
    expect(page.headers['cache-control']).to.equal('no-cache');
    expect(page.headers['content-security-policy']).to.match(/default-src 'self'/);
    expect((await get('/ui/anything/else')).body.toString()).to.equal(page.body.toString());
  });

  it('serves hashed assets gzipped and cached for a year, and 404s a missing one', async () => {
    const page = (await get('/ui/')).body.toString();
    const script = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(page)![1]!;
    const asset = await get(script, { 'Accept-Encoding': 'gzip' });
    expect(asset.status).to.equal(200);
    expect(asset.headers['content-encoding']).to.equal('gzip');
    expect(asset.headers['cache-control']).to.equal('public, max-age=31536000, immutable');
    expect(zlib.gunzipSync(asset.body).length).to.be.greaterThan(asset.body.length);
    expect((await get('/ui/assets/nope-123.js')).status).to.equal(404);
  });

  it('keeps the API behind authentication', async () => {
    expect((await get('/apis/cairn.dev/v1alpha1/instances')).status).to.equal(401);
  });
});

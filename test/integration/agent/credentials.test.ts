/**
 * The agent's node credential rotation against a real apiserver: a renewed
 * token is used at once even when it cannot be saved (the old one is retired
 * a minute after its successor is issued), and a credential that lives longer
 * than Node's longest timer does not rotate in a loop.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'winston';
import { CredentialRotator, type StoredCredential } from '../../../agent/credentials.js';
import { loadKubeConfig } from '../../../api/client/kubeconfig.js';
import { JOIN_PATH, type NodeCredential } from '../../../api/credentials.js';
import { newToken } from '../../../api/token-format.js';
import { realClock } from '../../../runtime/clock.js';
import { sleep } from '../../support/eventually.js';
import { FakeClock } from '../../support/fake-clock.js';
import { rawRequest } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';

describe('node credential rotation (real apiserver)', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let dir: string;
  let caFile: string;
  const messages: string[] = [];
  const log = { info: (m: string) => messages.push(m), warn: (m: string) => messages.push(m), error: (m: string) => messages.push(m) } as unknown as Logger;

  before(async () => {
    env = await startTestEnv();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-cred-'));
    caFile = path.join(dir, 'ca.crt');
    fs.writeFileSync(caFile, Buffer.from(env.kubeconfig.getCurrentCluster()!.caData!, 'base64'));
    const r = await rawRequest(env.kubeconfig, { method: 'POST', path: '/apis/cairn.dev/v1alpha1/clusters', body: JSON.stringify({ metadata: { name: 'c1' }, spec: {} }) });
    expect(r.status, r.text).to.equal(201);
  });
  after(async () => {
    await env?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });
  beforeEach(() => (messages.length = 0));

  async function joined(nodeName: string): Promise<NodeCredential> {
    const t = newToken();
    const stored = await rawRequest(env.kubeconfig, { method: 'POST', path: '/apis/auth.cairn.dev/v1alpha1/tokens', body: JSON.stringify({ metadata: { name: t.id }, spec: { type: 'join', cluster: 'c1', secretHash: t.secretHash } }) });
    expect(stored.status, stored.text).to.equal(201);
    const r = await rawRequest(env.kubeconfig, { method: 'POST', path: JOIN_PATH, authorization: `Bearer ${t.token}`, body: JSON.stringify({ nodeName }) });
    expect(r.status, r.text).to.equal(201);
    return r.json as NodeCredential;
  }

  function rotator(cred: StoredCredential, dataDir: string, clock = realClock) {
    const kc = loadKubeConfig({ server: env.server.url, caFile, token: cred.token });
    return { kc, rotator: new CredentialRotator(kc, cred, { dataDir, connection: { server: env.server.url, caFile }, clock, log }) };
  }

  it('uses the renewed token at once though the data dir cannot hold it, and keeps trying to save it', async () => {
    const cred = await joined('n1');
    const clock = new FakeClock(Date.now());
    const unwritable = path.join(caFile, 'not-a-dir'); // under a file: every write fails (ENOTDIR), even as root
    const { kc, rotator: r } = rotator({ ...cred, server: env.server.url, receivedAt: clock.now() - 365 * 86_400_000 }, unwritable, clock);
    r.start(); // long past two thirds of its life: due now
    await clock.advanceAsync(0);
    const saveFailed = () => messages.some((m) => m.startsWith('cannot save the renewed node credential'));
    for (let i = 0; i < 250 && !saveFailed(); i++) await sleep(20);
    expect(messages).to.include('node credential renewed');
    const token = kc.getCurrentUser()!.token!;
    expect(token, 'the renewed token is in use').to.not.equal(cred.token);
    expect(saveFailed(), messages.join('\n')).to.equal(true);
    const whoami = await rawRequest(env.kubeconfig, { method: 'GET', path: '/apis/cairn.dev/v1alpha1/namespaces/c1/nodes/n1', authorization: `Bearer ${token}` });
    expect(whoami.status, 'it authenticates (404: no Node yet, not 401)').to.equal(404);
    r.stop();
  });

  it('a credential living longer than Node can time (60 days) is not rotated in a loop', async () => {
    const cred = await joined('n2');
    const now = Date.now();
    const { rotator: r } = rotator({ ...cred, expires: new Date(now + 60 * 86_400_000).toISOString(), server: env.server.url, receivedAt: now }, path.join(dir, 'n2'));
    r.start();
    await sleep(500);
    r.stop();
    expect(messages.filter((m) => m === 'node credential renewed')).to.deep.equal([]);
  });
});

/**
 * Issue 7 part 4: `cairn apiserver` reaches an etcd that serves TLS and
 * demands client certificates (--client-cert-auth) with --etcd-cafile,
 * --etcd-certfile and --etcd-keyfile, and says clearly why it cannot
 * without them.
 */
import { expect } from 'chai';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import * as k8s from '@kubernetes/client-node';
import { stopChild } from '../../../apiserver/etcd/process.js';
import { createCertificateAuthority, issueCertificate } from '../../../apiserver/pki.js';
import { freePort } from '../../../apiserver/util/free-port.js';
import { runCairn } from '../../support/cairn-cli.js';
import { eventually } from '../../support/eventually.js';
import { rawRequest } from '../../support/http.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';

interface TlsEtcd {
  endpoint: string;
  child: ChildProcess;
}

/**
 * Writes a CA, etcd's serving certificate (also a client one: etcd's gateway
 * dials itself), the apiserver's client certificate, and another CA with a
 * client certificate etcd does not trust.
 */
async function writeCertificates(dir: string): Promise<void> {
  const ca = await createCertificateAuthority('etcd-ca');
  const server = await issueCertificate(ca, { commonName: 'etcd', hosts: ['127.0.0.1', 'localhost'], usages: ['serverAuth', 'clientAuth'] });
  const client = await issueCertificate(ca, { commonName: 'cairn-apiserver', usages: ['clientAuth'] });
  const otherCa = await createCertificateAuthority('other-ca');
  const stranger = await issueCertificate(otherCa, { commonName: 'stranger', usages: ['clientAuth'] });
  const files: Record<string, string> = {
    'ca.crt': ca.certPem, 'etcd.crt': server.certPem, 'etcd.key': server.keyPem, 'client.crt': client.certPem, 'client.key': client.keyPem,
    'other-ca.crt': otherCa.certPem, 'stranger.crt': stranger.certPem, 'stranger.key': stranger.keyPem,
  };
  for (const [name, pem] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), pem, { mode: 0o600 });
}

function etcdHealthy(endpoint: string, dir: string): Promise<boolean> {
  const file = (name: string) => fs.readFileSync(path.join(dir, name));
  return new Promise((resolve) => {
    const req = https.get(`${endpoint}/health`, { ca: file('ca.crt'), cert: file('client.crt'), key: file('client.key'), agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode === 200);
    });
    req.on('error', () => resolve(false));
  });
}

async function startTlsEtcd(dir: string): Promise<TlsEtcd> {
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const endpoint = `https://127.0.0.1:${clientPort}`;
  const peer = `http://127.0.0.1:${peerPort}`;
  const log = fs.openSync(path.join(dir, 'etcd.log'), 'a');
  const child = spawn('etcd', [
    '--name', 'tls', '--data-dir', path.join(dir, 'data'),
    '--listen-client-urls', endpoint, '--advertise-client-urls', endpoint,
    '--listen-peer-urls', peer, '--initial-advertise-peer-urls', peer, '--initial-cluster', `tls=${peer}`,
    '--client-cert-auth', '--trusted-ca-file', path.join(dir, 'ca.crt'),
    '--cert-file', path.join(dir, 'etcd.crt'), '--key-file', path.join(dir, 'etcd.key'),
    '--log-level', 'warn', '--logger', 'zap',
  ], { stdio: ['ignore', log, log] });
  fs.closeSync(log);
  const etcd = { endpoint, child };
  try {
    await eventually('the TLS etcd to answer /health (see etcd.log)', () => etcdHealthy(endpoint, dir), 20_000, 200);
  } catch (err) {
    await stopChild(child, 2000);
    throw err;
  }
  return etcd;
}

describe('apiserver over an etcd with TLS client authentication', function () {
  this.timeout(120_000);
  let dir: string;
  let etcd: TlsEtcd | undefined;
  let server: ServerProcess | undefined;
  const file = (name: string) => path.join(dir, name);

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-etcd-tls-'));
    await writeCertificates(dir);
    etcd = await startTlsEtcd(dir);
  });
  after(async () => {
    await server?.cleanup();
    if (etcd) await stopChild(etcd.child, 2000);
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves reads and writes with --etcd-cafile, --etcd-certfile and --etcd-keyfile', async () => {
    server = await startServerProcess({
      etcdEndpoints: etcd!.endpoint,
      extraArgs: ['--etcd-cafile', file('ca.crt'), '--etcd-certfile', file('client.crt'), '--etcd-keyfile', file('client.key')],
    });
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    const created = await rawRequest(kc, { method: 'POST', path: '/apis/cairn.dev/v1alpha1/clusters', body: JSON.stringify({ metadata: { name: 'tls' } }) });
    expect(created.status, created.text).to.equal(201);
    const got = await rawRequest(kc, { path: '/apis/cairn.dev/v1alpha1/clusters/tls' });
    expect(got.json?.metadata?.name).to.equal('tls');
    await server.cleanup();
    server = undefined;
  });

  it('without the client certificate, fails at startup saying etcd refused the TLS handshake', async () => {
    const dataDir = fs.mkdtempSync(path.join(dir, 'no-cert-'));
    const r = await runCairn(['apiserver', '--etcd-endpoints', etcd!.endpoint, '--etcd-cafile', file('ca.crt'), '--data-dir', dataDir, '--port', '0', '--log-level', 'error'], { timeoutMs: 90_000 });
    expect(r.code, r.stderr).to.equal(1);
    expect(r.stderr).to.match(/^error: cannot reach etcd at https:\/\/127\.0\.0\.1:\d+: etcd refused the TLS handshake because no client certificate was sent; .*pass --etcd-certfile and --etcd-keyfile \(.*alert bad certificate\)$/m);
  });

  it('names the flag at fault when etcd refuses the client certificate or cannot be verified', async () => {
    const dataDir = fs.mkdtempSync(path.join(dir, 'wrong-'));
    const start = (ca: string, cert: string) => runCairn([
      'apiserver', '--etcd-endpoints', etcd!.endpoint, '--etcd-cafile', file(ca), '--etcd-certfile', file(`${cert}.crt`), '--etcd-keyfile', file(`${cert}.key`),
      '--data-dir', dataDir, '--port', '0', '--log-level', 'error',
    ], { timeoutMs: 90_000 });
    const stranger = await start('ca.crt', 'stranger');
    expect(stranger.stderr).to.match(/^error: cannot reach etcd at \S+: etcd refused the client certificate in --etcd-certfile \S+stranger\.crt; it must be signed by a CA in etcd's --trusted-ca-file/m);
    const unverified = await start('other-ca.crt', 'client');
    expect(unverified.stderr).to.match(/^error: cannot reach etcd at \S+: cannot verify etcd's serving certificate with --etcd-cafile \S+other-ca\.crt/m);
    expect([stranger.code, unverified.code]).to.deep.equal([1, 1]);
  });

  it('names an unreadable file, and refuses the flags for the embedded etcd', async () => {
    const dataDir = fs.mkdtempSync(path.join(dir, 'bad-file-'));
    const missing = await runCairn(['apiserver', '--etcd-endpoints', etcd!.endpoint, '--etcd-cafile', file('nope.crt'), '--data-dir', dataDir, '--port', '0']);
    expect(missing.code).to.equal(1);
    expect(missing.stderr).to.match(/^error: cannot read --etcd-cafile .*nope\.crt: ENOENT/m);
    const embedded = await runCairn(['server', '--etcd-cafile', file('ca.crt'), '--data-dir', dataDir, '--port', '0']);
    expect(embedded.code).to.equal(1);
    expect(embedded.stderr).to.match(/^error: --etcd-cafile, --etcd-certfile and --etcd-keyfile are for an external etcd given with --etcd-endpoints/m);
  });
});

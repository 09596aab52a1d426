/**
 * Issue 7 part 6: a real `cairn server` negotiates TLS 1.2 or 1.3 only,
 * serves no plaintext off loopback, and keeps its secrets 0600.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { runCairn } from '../../support/cairn-cli.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';

type Version = tls.SecureVersion;

/** Handshakes with exactly `version`; resolves with the protocol agreed, or rejects with the TLS error. */
function handshake(url: URL, ca: Buffer, version: Version): Promise<string | null> {
  return new Promise((resolve, reject) => {
    // SECLEVEL=0 lets this client offer TLS 1.0/1.1 at all, so a failure is the server's refusal, not the client's.
    const socket = tls.connect({ host: url.hostname, port: Number(url.port), ca, minVersion: version, maxVersion: version, ciphers: 'DEFAULT@SECLEVEL=0' }, () => {
      resolve(socket.getProtocol());
      socket.end();
    });
    socket.once('error', reject);
  });
}

function getVersion(url: URL, ca: Buffer, version: Version): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = https.get(new URL('/version', url), { ca, minVersion: version, maxVersion: version, agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.once('error', reject);
  });
}

describe('TLS hygiene of cairn server', function () {
  this.timeout(120_000);
  let server: ServerProcess;
  let url: URL;
  let ca: Buffer;

  before(async () => {
    server = await startServerProcess();
    url = new URL(server.url);
    ca = fs.readFileSync(path.join(server.dataDir, 'pki', 'ca.crt'));
  });
  after(async () => server?.cleanup());

  for (const version of ['TLSv1', 'TLSv1.1'] as const) {
    it(`refuses a ${version} handshake with a protocol-version alert`, async () => {
      const err = await handshake(url, ca, version).then(() => null, (e: NodeJS.ErrnoException) => e);
      expect(err?.code).to.equal('ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION');
    });
  }

  for (const version of ['TLSv1.2', 'TLSv1.3'] as const) {
    it(`serves over ${version}`, async () => {
      expect(await handshake(url, ca, version)).to.equal(version);
      expect(await getVersion(url, ca, version)).to.equal(200);
    });
  }

  it('refuses --insecure-http with a non-loopback --listen, saying why', async () => {
    const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-insecure-'));
    try {
      const r = await runCairn(['apiserver', '--etcd-endpoints', 'http://127.0.0.1:9', '--insecure-http', '--listen', '0.0.0.0', '--port', '0', '--data-dir', dataDir]);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(/^error: --insecure-http serves without TLS, so tokens would cross the network in clear text; it is only allowed on a loopback --listen address, not 0\.0\.0\.0$/m);
    } finally {
      fs.rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('keeps the admin kubeconfig, the admin token, every private key and the audit log 0600, in 0700 directories', () => {
    const pki = path.join(server.dataDir, 'pki');
    const keys = fs.readdirSync(pki).filter((f) => f.includes('key'));
    expect(keys).to.include.members(['ca.key', 'apiserver.key']);
    const secrets = ['admin.kubeconfig', 'admin.token', 'audit.log', ...keys.map((k) => path.join('pki', k))];
    const modes = (files: string[]) => Object.fromEntries(files.map((f) => [f, (fs.statSync(path.join(server.dataDir, f)).mode & 0o777).toString(8)]));
    expect(modes(secrets)).to.deep.equal(Object.fromEntries(secrets.map((f) => [f, '600'])));
    expect(modes(['.', 'pki'])).to.deep.equal({ '.': '700', pki: '700' });
  });
});

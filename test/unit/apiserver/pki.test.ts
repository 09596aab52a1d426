import { expect } from 'chai';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { ensurePki, PkiError, type Pki } from '../../../apiserver/pki.js';

const DAY_MS = 24 * 60 * 60 * 1000;

async function mode(file: string): Promise<number> {
  return (await fs.stat(file)).mode & 0o777;
}

/** Serves `pki` over HTTPS on 127.0.0.1 for the duration of `fn`. */
async function withServer(pki: Pki, fn: (port: number) => Promise<void>): Promise<void> {
  const server = https.createServer({ key: pki.keyPem, cert: pki.certPem }, (_req, res) => res.end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  try {
    await fn((server.address() as AddressInfo).port);
  } finally {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
}

function get(port: number, ca: string, servername?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = https.get({ host: '127.0.0.1', port, ca, servername, agent: false, path: '/' }, (res) => {
      let body = '';
      res.on('data', (chunk: Buffer) => (body += chunk.toString()));
      res.on('end', () => resolve(body));
    });
    req.on('error', reject);
  });
}

async function getError(port: number, ca: string, servername?: string): Promise<NodeJS.ErrnoException> {
  try {
    await get(port, ca, servername);
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
  throw new Error('expected the TLS handshake to fail');
}

describe('ensurePki', () => {
  let dir: string;

  beforeEach(async () => {
    dir = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-pki-')), 'pki');
  });

  afterEach(async () => {
    await fs.rm(path.dirname(dir), { recursive: true, force: true });
  });

  it('creates a CA and a serving certificate that Node TLS clients verify', async () => {
    const pki = await ensurePki(dir, { hosts: [] });
    await withServer(pki, async (port) => {
      expect(await get(port, pki.caCertPem, 'localhost')).to.equal('ok');
      expect(await get(port, pki.caCertPem)).to.equal('ok');
      expect((await getError(port, pki.caCertPem, 'elsewhere.example')).code).to.equal('ERR_TLS_CERT_ALTNAME_INVALID');
    });
  });

  it('is rejected by clients that trust another CA', async () => {
    const pki = await ensurePki(dir, { hosts: [] });
    const other = await ensurePki(`${dir}-other`, { hosts: [] });
    await withServer(pki, async (port) => {
      const err = await getError(port, other.caCertPem, 'localhost');
      expect(err.code).to.match(/UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED|UNABLE_TO_GET_ISSUER_CERT/);
    });
  });

  it('issues certificates with the promised shape', async () => {
    const pki = await ensurePki(dir, { hosts: ['cairn.example.com', '10.0.0.7', '[fd00::7]'] });
    const ca = new X509Certificate(pki.caCertPem);
    const cert = new X509Certificate(pki.certPem);
    expect(ca.subject).to.equal('CN=cairn-ca');
    expect(ca.ca).to.equal(true);
    expect(cert.subject).to.equal('CN=cairn-apiserver');
    expect(cert.ca).to.equal(false);
    expect(cert.keyUsage).to.deep.equal(['1.3.6.1.5.5.7.3.1']);
    expect(cert.publicKey.asymmetricKeyDetails?.namedCurve).to.equal('prime256v1');
    expect(cert.checkIssued(ca)).to.equal(true);
    const sans = cert.subjectAltName?.split(', ') ?? [];
    expect(sans).to.include.members([
      'DNS:cairn.example.com', 'DNS:localhost', 'IP Address:10.0.0.7', 'IP Address:127.0.0.1', 'IP Address:0:0:0:0:0:0:0:1',
      'IP Address:FD00:0:0:0:0:0:0:7',
    ]);
    const lifetimeDays = (Date.parse(cert.validTo) - Date.now()) / DAY_MS;
    expect(lifetimeDays).to.be.within(364, 366);
    expect((Date.parse(ca.validTo) - Date.now()) / DAY_MS).to.be.within(3649, 3651);
    expect(pki.keyPem).to.match(/^-----BEGIN PRIVATE KEY-----/);
    expect(pki.caKeyPem).to.match(/^-----BEGIN PRIVATE KEY-----/);
  });

  it('keeps its files with private modes', async () => {
    const pki = await ensurePki(dir, { hosts: [] });
    expect(await mode(dir)).to.equal(0o700);
    expect(await mode(path.join(dir, 'ca.key'))).to.equal(0o600);
    expect(await mode(pki.keyPath)).to.equal(0o600);
    expect(await mode(pki.caPath)).to.equal(0o644);
    expect(await mode(pki.certPath)).to.equal(0o644);
    expect(pki.caPath).to.equal(path.join(dir, 'ca.crt'));
    expect(pki.certPath).to.equal(path.join(dir, 'apiserver.crt'));
    expect(pki.keyPath).to.equal(path.join(dir, 'apiserver.key'));
    expect(await fs.readFile(pki.certPath, 'utf8')).to.equal(pki.certPem);
    expect((await fs.readdir(dir)).sort()).to.deep.equal(['apiserver.crt', 'apiserver.key', 'ca.crt', 'ca.key']);
  });

  it('makes keys and directory private again when they were copied in with open modes (a CA key copied to another replica)', async () => {
    await ensurePki(dir, { hosts: [] });
    await fs.chmod(dir, 0o755);
    for (const key of ['ca.key', 'apiserver.key']) await fs.chmod(path.join(dir, key), 0o644);
    await ensurePki(dir, { hosts: [] });
    expect([await mode(dir), await mode(path.join(dir, 'ca.key')), await mode(path.join(dir, 'apiserver.key'))]).to.deep.equal([0o700, 0o600, 0o600]);
  });

  it('reuses existing files while they still fit', async () => {
    const first = await ensurePki(dir, { hosts: ['a.example.com'] });
    const second = await ensurePki(dir, { hosts: ['A.example.com', 'localhost'] });
    expect(second).to.deep.equal(first);
    const third = await ensurePki(dir, { hosts: [] });
    expect(third.certPem).to.equal(first.certPem);
  });

  it('reissues only the serving certificate when a new host is requested', async () => {
    const first = await ensurePki(dir, { hosts: [] });
    const second = await ensurePki(dir, { hosts: ['10.9.8.7', 'api.example.com'] });
    expect(second.caCertPem).to.equal(first.caCertPem);
    expect(second.caKeyPem).to.equal(first.caKeyPem);
    expect(second.certPem).to.not.equal(first.certPem);
    expect(second.keyPem).to.not.equal(first.keyPem);
    const cert = new X509Certificate(second.certPem);
    expect(cert.checkIP('10.9.8.7')).to.equal('10.9.8.7');
    expect(cert.checkHost('api.example.com')).to.equal('api.example.com');
    await withServer(second, async (port) => {
      expect(await get(port, first.caCertPem, 'api.example.com')).to.equal('ok');
    });
  });

  it('reissues the serving certificate within 30 days of expiry', async () => {
    const first = await ensurePki(dir, { hosts: [] });
    const later = (days: number) => () => new Date(Date.now() + days * DAY_MS);
    expect((await ensurePki(dir, { hosts: [], now: later(300) })).certPem).to.equal(first.certPem);
    const renewed = await ensurePki(dir, { hosts: [], now: later(340) });
    expect(renewed.certPem).to.not.equal(first.certPem);
    expect(renewed.caCertPem).to.equal(first.caCertPem);
    expect(Date.parse(new X509Certificate(renewed.certPem).validTo)).to.be.greaterThan(Date.now() + 700 * DAY_MS);
  });

  it('replaces a serving key that does not belong to the certificate', async () => {
    const first = await ensurePki(dir, { hosts: [] });
    const other = await ensurePki(`${dir}-other`, { hosts: [] });
    await fs.writeFile(first.keyPath, other.keyPem);
    const fixed = await ensurePki(dir, { hosts: [] });
    expect(fixed.certPem).to.not.equal(first.certPem);
    expect(new X509Certificate(fixed.certPem).checkPrivateKey(createPrivateKey(fixed.keyPem))).to.equal(true);
  });

  it('serves without the CA key, but cannot reissue without it', async () => {
    await ensurePki(dir, { hosts: [] });
    await fs.rm(path.join(dir, 'ca.key'));
    const pki = await ensurePki(dir, { hosts: [] });
    expect(pki.caKeyPem).to.equal(undefined);
    let err: unknown;
    await ensurePki(dir, { hosts: ['new.example.com'] }).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(PkiError);
    expect((err as Error).message).to.contain('ca.key is missing');
  });

  it('rejects hosts that are neither IP addresses nor DNS names', async () => {
    let err: unknown;
    await ensurePki(dir, { hosts: ['not a host'] }).catch((e: unknown) => (err = e));
    expect(err).to.be.instanceOf(PkiError);
  });
});

import { expect } from 'chai';
import { KubeConfig } from '@kubernetes/client-node';
import { promises as fs } from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { parse } from 'yaml';
import { buildKubeconfig, writeKubeconfig } from '../../../apiserver/kubeconfig.js';
import { ensurePki } from '../../../apiserver/pki.js';

const CA_PEM = '-----BEGIN CERTIFICATE-----\nMIIBfake\n-----END CERTIFICATE-----\n';

function load(content: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(content);
  return kc;
}

describe('buildKubeconfig', () => {
  it('is read by client-node: server, token and CA', () => {
    const kc = load(buildKubeconfig({ server: 'https://10.0.0.1:6443', caCertPem: CA_PEM, token: 'tok123' }));
    expect(kc.getCurrentContext()).to.equal('cairn');
    expect(kc.getCurrentCluster()?.server).to.equal('https://10.0.0.1:6443');
    expect(kc.getCurrentCluster()?.name).to.equal('cairn');
    expect(Buffer.from(kc.getCurrentCluster()?.caData ?? '', 'base64').toString()).to.equal(CA_PEM);
    expect(kc.getCurrentCluster()?.skipTLSVerify).to.equal(false);
    expect(kc.getCurrentUser()?.name).to.equal('admin');
    expect(kc.getCurrentUser()?.token).to.equal('tok123');
  });

  it('uses the given names and namespace', () => {
    const kc = load(
      buildKubeconfig({ server: 'https://h:1', token: 't', name: 'lab', user: 'ops', namespace: 'team-a', caCertPem: CA_PEM }),
    );
    expect(kc.getCurrentContext()).to.equal('lab');
    expect(kc.getContextObject('lab')).to.include({ cluster: 'lab', user: 'ops', namespace: 'team-a' });
    expect(kc.getCurrentUser()?.name).to.equal('ops');
  });

  it('has the documented shape', () => {
    const doc = parse(buildKubeconfig({ server: 'https://h:1', caCertPem: CA_PEM, token: 't' }));
    expect(doc).to.deep.equal({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'cairn', cluster: { server: 'https://h:1', 'certificate-authority-data': Buffer.from(CA_PEM).toString('base64') } }],
      users: [{ name: 'admin', user: { token: 't' } }],
      contexts: [{ name: 'cairn', context: { cluster: 'cairn', user: 'admin' } }],
      'current-context': 'cairn',
      preferences: {},
    });
  });

  it('supports insecure-skip-tls-verify, but not together with a CA', () => {
    const kc = load(buildKubeconfig({ server: 'https://h:1', insecureSkipTlsVerify: true, token: 't' }));
    expect(kc.getCurrentCluster()?.skipTLSVerify).to.equal(true);
    expect(() => buildKubeconfig({ server: 'https://h:1', insecureSkipTlsVerify: true, caCertPem: CA_PEM, token: 't' })).to.throw(
      /mutually exclusive/,
    );
  });

  it('keeps awkward tokens intact', () => {
    for (const token of ['123', 'true', 'null', '- x', 'a: b', '#x', 'x'.repeat(300)]) {
      expect(load(buildKubeconfig({ server: 'https://h:1', token })).getCurrentUser()?.token).to.equal(token);
    }
  });

  it('lets client-node reach a Cairn-PKI server with the token', async () => {
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-kubeconfig-'));
    const pki = await ensurePki(path.join(tmp, 'pki'), { hosts: [] });
    const server = https.createServer({ key: pki.keyPem, cert: pki.certPem }, (req, res) => res.end(req.headers.authorization));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = server.address() as AddressInfo;
      const kc = load(buildKubeconfig({ server: `https://localhost:${port}`, caCertPem: pki.caCertPem, token: 'secret' }));
      const opts: https.RequestOptions = { host: '127.0.0.1', port, servername: 'localhost', path: '/', agent: false };
      await kc.applyToHTTPSOptions(opts);
      const body = await new Promise<string>((resolve, reject) => {
        https.get(opts, (res) => {
          let data = '';
          res.on('data', (c: Buffer) => (data += c.toString()));
          res.on('end', () => resolve(data));
        }).on('error', reject);
      });
      expect(body).to.equal('Bearer secret');
    } finally {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
      await fs.rm(tmp, { recursive: true, force: true });
    }
  });
});

describe('writeKubeconfig', () => {
  it('writes the file with mode 0600, replacing an older one', async () => {
    const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-kubeconfig-'));
    try {
      const file = path.join(tmp, 'admin.kubeconfig');
      await fs.writeFile(file, 'old', { mode: 0o644 });
      const content = buildKubeconfig({ server: 'https://h:1', token: 't' });
      await writeKubeconfig(file, content);
      expect(await fs.readFile(file, 'utf8')).to.equal(content);
      expect((await fs.stat(file)).mode & 0o777).to.equal(0o600);
      expect(await fs.readdir(tmp)).to.deep.equal(['admin.kubeconfig']);
    } finally {
      await fs.rm(tmp, { recursive: true, force: true });
    }
  });
});

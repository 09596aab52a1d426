import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { EtcdTlsError, etcdTlsProblem, explainEtcdFailure, loadEtcdCredentials } from '../../../../apiserver/etcd/client-tls.js';
import { createCertificateAuthority, issueCertificate } from '../../../../apiserver/pki.js';

const HTTPS = ['https://127.0.0.1:2379'];

describe('etcd client TLS', () => {
  it('needs nothing when no file is given, and the CA with any client certificate', () => {
    expect(etcdTlsProblem({}, ['http://127.0.0.1:2379'])).to.equal(null);
    expect(etcdTlsProblem({ caFile: 'ca' }, HTTPS)).to.equal(null);
    expect(etcdTlsProblem({ caFile: 'ca', certFile: 'c', keyFile: 'k' }, HTTPS)).to.equal(null);
    expect(etcdTlsProblem({ caFile: 'ca', certFile: 'c' }, HTTPS)).to.match(/--etcd-certfile and --etcd-keyfile go together/);
    expect(etcdTlsProblem({ certFile: 'c', keyFile: 'k' }, HTTPS)).to.match(/needs --etcd-cafile/);
    expect(etcdTlsProblem({ caFile: 'ca' }, [...HTTPS, 'http://10.0.0.2:2379'])).to.match(/need https:\/\/ --etcd-endpoints, but http:\/\/10.0.0.2:2379 is not/);
  });

  it('restates gRPC TLS failures in terms of the flags, and leaves other failures alone', () => {
    const grpc = (reason: string) => new Error(`14 UNAVAILABLE: No connection established. Last error: 80:error:0A000412:SSL routines:ssl3_read_bytes:${reason}:../deps/openssl/ssl/rec_layer_s3.c:1601:SSL alert number 42\n (2026-01-01T00:00:00Z). Resolution note: `);
    const message = (err: unknown, files = {}) => (explainEtcdFailure(err, HTTPS, files) as Error).message;
    expect(message(grpc('sslv3 alert bad certificate'), { caFile: 'ca.crt' })).to.equal(
      'cannot reach etcd at https://127.0.0.1:2379: etcd refused the TLS handshake because no client certificate was sent; it runs with --client-cert-auth, so pass --etcd-certfile and --etcd-keyfile (sslv3 alert bad certificate)',
    );
    expect(message(grpc('tlsv13 alert certificate required'), { caFile: 'ca.crt', certFile: 'c.crt', keyFile: 'c.key' })).to.match(/etcd refused the client certificate in --etcd-certfile c\.crt; /);
    expect(message(grpc('certificate verify failed'), { caFile: 'ca.crt' })).to.match(/cannot verify etcd's serving certificate with --etcd-cafile ca\.crt \(certificate verify failed\)$/);
    expect(message(grpc('certificate verify failed'))).to.match(/with the system CAs; pass --etcd-cafile/);
    expect(message(grpc('wrong version number'))).to.match(/etcd does not answer TLS there/);
    const other = new Error('14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 127.0.0.1:2379');
    expect(explainEtcdFailure(other, HTTPS)).to.equal(other);
    const explained = explainEtcdFailure(grpc('sslv3 alert bad certificate'), HTTPS);
    expect(explained).to.be.instanceOf(EtcdTlsError);
    expect(explainEtcdFailure(explained, HTTPS)).to.equal(explained);
  });

  describe('with files', () => {
    let dir: string;
    const file = (name: string) => path.join(dir, name);
    before(async () => {
      dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-etcd-tls-'));
      const ca = await createCertificateAuthority('etcd-ca');
      const client = await issueCertificate(ca, { commonName: 'cairn-apiserver', usages: ['clientAuth'] });
      const other = await issueCertificate(ca, { commonName: 'other', usages: ['clientAuth'] });
      fs.writeFileSync(file('ca.crt'), ca.certPem);
      fs.writeFileSync(file('client.crt'), client.certPem);
      fs.writeFileSync(file('client.key'), client.keyPem);
      fs.writeFileSync(file('other.key'), other.keyPem);
    });
    after(() => fs.rmSync(dir, { recursive: true, force: true }));

    it('reads the CA, certificate and key for the etcd3 client', () => {
      expect(loadEtcdCredentials(undefined, HTTPS)).to.equal(undefined);
      expect(loadEtcdCredentials({}, HTTPS)).to.equal(undefined);
      expect(Object.keys(loadEtcdCredentials({ caFile: file('ca.crt') }, HTTPS)!)).to.deep.equal(['rootCertificate']);
      const creds = loadEtcdCredentials({ caFile: file('ca.crt'), certFile: file('client.crt'), keyFile: file('client.key') }, HTTPS)!;
      expect(creds.certChain!.toString()).to.equal(fs.readFileSync(file('client.crt'), 'utf8'));
      expect(creds.privateKey!.toString()).to.equal(fs.readFileSync(file('client.key'), 'utf8'));
    });

    it('names the flag and file that cannot be used', () => {
      const load = (f: { caFile?: string; certFile?: string; keyFile?: string }) => () => loadEtcdCredentials(f, HTTPS);
      expect(load({ caFile: file('missing.crt') })).to.throw(/cannot read --etcd-cafile .*missing\.crt: ENOENT/);
      expect(load({ caFile: file('client.key') })).to.throw(/--etcd-cafile .*client\.key is not a PEM certificate/);
      expect(load({ caFile: file('ca.crt'), certFile: file('client.crt'), keyFile: file('ca.crt') })).to.throw(/--etcd-keyfile .*ca\.crt is not a PEM private key/);
      expect(load({ caFile: file('ca.crt'), certFile: file('client.crt'), keyFile: file('other.key') })).to.throw(/does not belong to the certificate in --etcd-certfile/);
    });
  });
});

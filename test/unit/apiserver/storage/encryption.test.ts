import { expect } from 'chai';
import fc from 'fast-check';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { AtRestEncryption, ensureKeyFile, formatKeyFile, isSealed, newKey, parseKeyFile } from '../../../../apiserver/storage/encryption.js';

const SECRET_KEY = '/registry/secrets/demo/s1';

describe('encryption at rest (AES-256-GCM, kube aesgcm layout)', () => {
  const key1 = newKey();
  const key2 = newKey();

  it('seals Secrets under k8s:enc:aesgcm:v1:<key>: and opens them again, any bytes', () => {
    const enc = new AtRestEncryption([key1]);
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 4096 }), (bytes) => {
        const plain = Buffer.from(bytes);
        const sealed = enc.seal(SECRET_KEY, plain);
        expect(sealed.subarray(0, 18).toString()).to.equal('k8s:enc:aesgcm:v1:');
        expect(sealed.toString('latin1')).to.include(`:${key1.name}:`);
        expect(isSealed(sealed)).to.equal(true);
        expect(enc.open(SECRET_KEY, sealed).equals(plain)).to.equal(true);
      }),
    );
  });

  it('never writes the plain text, and two seals of one value differ (a fresh nonce each)', () => {
    const enc = new AtRestEncryption([key1]);
    const plain = Buffer.from('{"data":{"password":"aHVudGVyMg=="}}');
    const a = enc.seal(SECRET_KEY, plain);
    const b = enc.seal(SECRET_KEY, plain);
    expect(a.includes(Buffer.from('aHVudGVyMg=='))).to.equal(false);
    expect(a.equals(b)).to.equal(false);
  });

  it('calls a stored value stale when a write would seal it otherwise: plain under an encrypted prefix, or sealed with a key other than the first', () => {
    const plain = Buffer.from('{"kind":"Secret"}');
    const old = new AtRestEncryption([key1]);
    const rotated = new AtRestEncryption([key2, key1]);
    expect(rotated.isStale(SECRET_KEY, old.seal(SECRET_KEY, plain))).to.equal(true);
    expect(rotated.isStale(SECRET_KEY, rotated.seal(SECRET_KEY, plain))).to.equal(false);
    expect(rotated.isStale(SECRET_KEY, plain)).to.equal(true);
    expect(rotated.isStale('/registry/cairn.dev/instances/demo/web', plain)).to.equal(false);
  });

  it('leaves other kinds as they are, and reads plain values stored before encryption was on', () => {
    const enc = new AtRestEncryption([key1]);
    const plain = Buffer.from('{"kind":"Instance"}');
    expect(enc.seal('/registry/cairn.dev/instances/demo/web', plain)).to.equal(plain);
    expect(enc.open(SECRET_KEY, plain)).to.equal(plain);
  });

  it('refuses a value moved to another key, or altered, naming the key', () => {
    const enc = new AtRestEncryption([key1]);
    const sealed = enc.seal(SECRET_KEY, Buffer.from('{}'));
    expect(() => enc.open('/registry/secrets/demo/other', sealed)).to.throw(/does not open with key/);
    const altered = Buffer.from(sealed);
    altered[altered.length - 1]! ^= 1;
    expect(() => enc.open(SECRET_KEY, altered)).to.throw(/altered/);
  });

  it('rotates: the first key seals, every key opens, a removed key is named when needed', () => {
    const old = new AtRestEncryption([key1]).seal(SECRET_KEY, Buffer.from('old'));
    const both = new AtRestEncryption([key2, key1]);
    expect(both.open(SECRET_KEY, old).toString()).to.equal('old');
    expect(both.seal(SECRET_KEY, Buffer.from('new')).toString('latin1')).to.include(`:${key2.name}:`);
    expect(() => new AtRestEncryption([key2]).open(SECRET_KEY, old)).to.throw(`encrypted with key "${key1.name}"`);
  });

  it('reads back the key file it writes; refuses bad entries naming the field', () => {
    const file = 'keys.yaml';
    const parsed = parseKeyFile(file, formatKeyFile([key1, key2]));
    expect(parsed.map((k) => k.name)).to.deep.equal([key1.name, key2.name]);
    expect(parsed[0]!.secret.equals(key1.secret)).to.equal(true);
    expect(() => parseKeyFile(file, 'keys: []')).to.throw('keys.yaml: expected "keys:"');
    expect(() => parseKeyFile(file, 'keys: [{name: a, secret: c2hvcnQ=}]')).to.throw('keys[0].secret must be base64 of 32');
    expect(() => parseKeyFile(file, 'keys: [{name: "A B", secret: x}]')).to.throw('keys[0].name');
    const s = key1.secret.toString('base64');
    expect(() => parseKeyFile(file, `keys: [{name: a, secret: "${s}"}, {name: a, secret: "${s}"}]`)).to.throw('listed twice');
  });

  it('ensureKeyFile makes one key, mode 0600, and keeps it on the next start', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-enc-'));
    try {
      const file = path.join(dir, 'sub', 'encryption-keys.yaml');
      const first = ensureKeyFile(file);
      expect(first).to.have.length(1);
      expect(fs.statSync(file).mode & 0o777).to.equal(0o600);
      expect(ensureKeyFile(file)[0]!.secret.equals(first[0]!.secret)).to.equal(true);
      expect(fs.readdirSync(path.dirname(file))).to.deep.equal(['encryption-keys.yaml']);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

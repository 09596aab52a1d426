import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import {
  bearerToken,
  ensureAdminCredentials,
  generateToken,
  TokenAuthenticator,
} from '../../../../apiserver/auth/tokens.js';
import { hashToken } from '../../../../api/token-format.js';

async function mode(file: string): Promise<number> {
  return (await fs.stat(file)).mode & 0o777;
}

describe('generateToken / hashToken', () => {
  it('makes 32-byte base64url tokens that differ every time', () => {
    const a = generateToken();
    const b = generateToken();
    expect(a).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(a, 'base64url')).to.have.length(32);
    expect(a).to.not.equal(b);
  });

  it('hashes with SHA-256 to lowercase hex', () => {
    expect(hashToken('abc')).to.equal('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    expect(hashToken('abc')).to.equal(createHash('sha256').update('abc').digest('hex'));
  });
});

describe('bearerToken', () => {
  const cases: [string | undefined, string | undefined][] = [
    ['Bearer abc', 'abc'],
    ['bearer abc', 'abc'],
    ['BEARER\tabc', 'abc'],
    ['  Bearer   abc  ', 'abc'],
    [undefined, undefined],
    ['', undefined],
    ['Bearer', undefined],
    ['Bearer ', undefined],
    ['abc', undefined],
    ['Basic YWRtaW46YWRtaW4=', undefined],
    ['Bearer a b', undefined],
    ['Bearerabc', undefined],
  ];
  for (const [header, token] of cases) {
    it(`${JSON.stringify(header)} → ${JSON.stringify(token)}`, () => {
      expect(bearerToken(header)).to.equal(token);
    });
  }
});

describe('TokenAuthenticator', () => {
  const adminToken = generateToken();
  const agentToken = generateToken();
  const auth = new TokenAuthenticator([
    { sha256: hashToken(adminToken), user: { name: 'admin', groups: ['system:masters'] } },
    { sha256: hashToken(agentToken).toUpperCase(), user: { name: 'agent:n1', groups: ['cairn:agents'] } },
  ]);

  it('recognises each configured token', () => {
    expect(auth.authenticate(`Bearer ${adminToken}`)?.user).to.deep.equal({ name: 'admin', groups: ['system:masters'] });
    expect(auth.authenticate(`bearer ${agentToken}`)?.user).to.deep.equal({ name: 'agent:n1', groups: ['cairn:agents'] });
    expect(auth.authenticate(` BEARER  ${adminToken} `)?.user.name).to.equal('admin');
  });

  it('rejects unknown, missing and malformed credentials', () => {
    for (const header of [
      undefined, '', 'Bearer', `Bearer ${generateToken()}`, `Bearer ${adminToken}x`, `Bearer ${adminToken.slice(1)}`,
      adminToken, `Basic ${adminToken}`, `Token ${adminToken}`, `Bearer ${adminToken} ${adminToken}`,
      `Bearer ${hashToken(adminToken)}`,
    ]) {
      expect(auth.authenticate(header), String(header)).to.equal(null);
    }
  });

  it('hands out copies, so callers cannot change who a token is', () => {
    const user = auth.authenticate(`Bearer ${adminToken}`)?.user;
    user?.groups.push('evil');
    expect(auth.authenticate(`Bearer ${adminToken}`)?.user.groups).to.deep.equal(['system:masters']);
  });

  it('authenticates nobody when it has no entries', () => {
    expect(new TokenAuthenticator([]).authenticate(`Bearer ${adminToken}`)).to.equal(null);
  });

  it('refuses digests that are not SHA-256 hex', () => {
    expect(() => new TokenAuthenticator([{ sha256: 'abc', user: { name: 'x', groups: [] } }])).to.throw(/64 hex digits/);
    expect(() => new TokenAuthenticator([{ sha256: 'z'.repeat(64), user: { name: 'x', groups: [] } }])).to.throw();
  });
});

describe('ensureAdminCredentials', () => {
  let dataDir: string;

  beforeEach(async () => {
    dataDir = path.join(await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-tokens-')), 'data');
  });

  afterEach(async () => {
    await fs.rm(path.dirname(dataDir), { recursive: true, force: true });
  });

  it('creates admin.token with mode 0600 and returns its digest', async () => {
    const creds = await ensureAdminCredentials(dataDir);
    const file = path.join(dataDir, 'admin.token');
    expect(creds.token).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(creds.sha256).to.equal(hashToken(creds.token));
    expect((await fs.readFile(file, 'utf8')).trim()).to.equal(creds.token);
    expect(await mode(file)).to.equal(0o600);
    expect(await fs.readdir(dataDir)).to.deep.equal(['admin.token']);
  });

  it('reuses the token across calls', async () => {
    const first = await ensureAdminCredentials(dataDir);
    const second = await ensureAdminCredentials(dataDir);
    expect(second).to.deep.equal(first);
  });

  it('gives concurrent first callers the same token', async () => {
    const all = await Promise.all(Array.from({ length: 8 }, () => ensureAdminCredentials(dataDir)));
    expect(new Set(all.map((c) => c.token)).size).to.equal(1);
    expect(await fs.readdir(dataDir)).to.deep.equal(['admin.token']);
  });

  it('tightens a token file that others can read', async () => {
    await fs.mkdir(dataDir, { recursive: true });
    const file = path.join(dataDir, 'admin.token');
    await fs.writeFile(file, 'hand-made-token\n');
    await fs.chmod(file, 0o644);
    const creds = await ensureAdminCredentials(dataDir);
    expect(creds.token).to.equal('hand-made-token');
    expect(await mode(file)).to.equal(0o600);
  });

  it('refuses a token file that holds no usable token', async () => {
    await fs.mkdir(dataDir, { recursive: true });
    await fs.writeFile(path.join(dataDir, 'admin.token'), 'two words\n', { mode: 0o600 });
    let err: unknown;
    await ensureAdminCredentials(dataDir).catch((e: unknown) => (err = e));
    expect((err as Error).message).to.contain('delete it');
  });
});

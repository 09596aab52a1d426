import { expect } from 'chai';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { createFileExclusive, writeFileAtomic } from '../../../api/atomic-write.js';

describe('atomic-write', () => {
  let dir: string;

  beforeEach(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'cairn-atomic-'));
  });

  afterEach(async () => {
    await fs.rm(dir, { recursive: true, force: true });
  });

  async function mode(file: string): Promise<number> {
    return (await fs.stat(file)).mode & 0o777;
  }

  it('writeFileAtomic creates and replaces files with the requested mode, leaving no temp files', async () => {
    const file = path.join(dir, 'f');
    await writeFileAtomic(file, 'one');
    expect(await fs.readFile(file, 'utf8')).to.equal('one');
    expect(await mode(file)).to.equal(0o600);
    await fs.chmod(file, 0o666);
    await writeFileAtomic(file, new TextEncoder().encode('two'), 0o640);
    expect(await fs.readFile(file, 'utf8')).to.equal('two');
    expect(await mode(file)).to.equal(0o640);
    expect(await fs.readdir(dir)).to.deep.equal(['f']);
  });

  it('writeFileAtomic fails cleanly when the directory is missing', async () => {
    let err: unknown;
    await writeFileAtomic(path.join(dir, 'missing', 'f'), 'x').catch((e: unknown) => (err = e));
    expect((err as NodeJS.ErrnoException).code).to.equal('ENOENT');
  });

  it('createFileExclusive lets exactly one concurrent writer win', async () => {
    const file = path.join(dir, 'once');
    const results = await Promise.all(['a', 'b', 'c', 'd'].map((v) => createFileExclusive(file, v, 0o600)));
    expect(results.filter(Boolean)).to.have.length(1);
    const winner = ['a', 'b', 'c', 'd'][results.indexOf(true)];
    expect(await fs.readFile(file, 'utf8')).to.equal(winner);
    expect(await mode(file)).to.equal(0o600);
    expect(await createFileExclusive(file, 'late')).to.equal(false);
    expect(await fs.readFile(file, 'utf8')).to.equal(winner);
    expect(await fs.readdir(dir)).to.deep.equal(['once']);
  });
});

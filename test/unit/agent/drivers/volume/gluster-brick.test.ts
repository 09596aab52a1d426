/** blamedBricks: which files of a getfattr dump other bricks are owed, and which bricks — pure; pendingHeals when getfattr hangs. */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { blamedBricks, healRecord, owedSignature, pendingHeals, summarizeOwed } from '../../../../../agent/drivers/volume/gluster-brick.js';

const G1 = '00000000-0000-0000-0000-000000000001';
const G2 = 'abcdabcd-0000-4000-8000-000000000002';
const G3 = 'ef01ef01-0000-4000-8000-000000000003';
const G4 = '12341234-0000-4000-8000-000000000004';
const G5 = '56785678-0000-4000-8000-000000000005';

describe('gluster brick: pending heals', () => {
  it('lists files blaming another brick with those bricks, not files only dirty from a write in flight nor all-zero counts', () => {
    const dump = [
      `# file: /b/.glusterfs/00/00/${G1}`,
      'trusted.afr.v-client-2=0x000000000000000100000001',
      '',
      `# file: /b/.glusterfs/ab/cd/${G2}`,
      'trusted.afr.dirty=0x000000010000000000000000',
      '',
      `# file: /b/.glusterfs/ef/01/${G3}`,
      'trusted.afr.dirty=0x000000000000000000000000',
      'trusted.afr.v-client-1=0x000000000000000000000000',
      '',
      `# file: /b/.glusterfs/12/34/${G4}`,
      'trusted.afr.dirty=0x000000000000000000000000',
      'trusted.afr.v-client-0=0x000000020000000000000000',
      '',
      `# file: /b/.glusterfs/56/78/${G5}`,
      'trusted.afr.my-vol-client-2=0x000000010000000000000000',
      'trusted.afr.my-vol-client-0=0x000000000000000100000000',
      '',
    ].join('\n');
    expect(blamedBricks(dump)).to.deep.equal([
      { gfid: G1, bricks: [2] },
      { gfid: G4, bricks: [0] },
      { gfid: G5, bricks: [0, 2] },
    ]);
    expect(blamedBricks('')).to.deep.equal([]);
  });

  it('reports every brick any owed entry blames, though only the first 100 entries are listed, and what was left uninspected', () => {
    const entries = Array.from({ length: 150 }, (_, i) => ({ gfid: `g${String(i).padStart(3, '0')}`, bricks: i < 149 ? [2] : [0, 1] }));
    const report = summarizeOwed(entries, 7);
    expect(report).to.deep.include({ count: 157, owedTo: [0, 1, 2], uninspected: 7 });
    expect(report.owed).to.have.length(100);
    expect(report.owed.flatMap((e) => e.bricks)).not.to.include(0);
    expect(summarizeOwed([], 0)).to.deep.equal({ count: 0, owed: [], owedTo: [], uninspected: 0 });
  });

  it('signs whom the heals blame, so that a change at the same count is seen (the agent reports it again)', () => {
    const before = summarizeOwed([{ gfid: 'g1', bricks: [1] }], 0);
    const after = summarizeOwed([{ gfid: 'g2', bricks: [2] }], 0);
    expect(before.count).to.equal(after.count);
    expect(owedSignature(before)).not.to.equal(owedSignature(after));
    expect(owedSignature({ owed: before.owed, owedTo: before.owedTo })).to.equal(owedSignature(before));
    expect(owedSignature({})).to.equal(owedSignature(summarizeOwed([], 0)));
  });
});

/**
 * A brick directory whose index lists `entries`, and a getfattr on PATH that runs `script` (given the brick's
 * path): setting trusted.* attributes on real files needs root. Set up before each test, removed after.
 */
function fakeBrick(prefix: string, entries: string[], script: (brick: string) => string): { brick: () => string } {
  let dir: string;
  let pathBefore: string | undefined;
  beforeEach(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), prefix));
    const index = path.join(dir, 'brick', '.glusterfs', 'indices', 'xattrop');
    fs.mkdirSync(index, { recursive: true });
    for (const g of entries) fs.writeFileSync(path.join(index, g), '');
    fs.mkdirSync(path.join(dir, 'bin'));
    fs.writeFileSync(path.join(dir, 'bin', 'getfattr'), script(path.join(dir, 'brick')), { mode: 0o755 });
    pathBefore = process.env.PATH;
    process.env.PATH = `${path.join(dir, 'bin')}:${pathBefore}`;
  });
  afterEach(() => {
    process.env.PATH = pathBefore;
    fs.rmSync(dir, { recursive: true, force: true });
  });
  return { brick: () => path.join(dir, 'brick') };
}

describe('gluster brick: a getfattr that hangs (a sick brick filesystem)', () => {
  const f = fakeBrick('cairn-getfattr-', [G1, G2], () => '#!/bin/sh\nexec sleep 30\n');

  it('blocks the agent for at most a second, and then counts every entry as uninspected (blaming every other brick), never as healed', function () {
    this.timeout(10_000);
    const t0 = Date.now();
    const heals = pendingHeals(f.brick());
    expect(Date.now() - t0).to.be.below(3_000);
    expect(heals).to.deep.equal({ count: 2, owed: [], owedTo: [], uninspected: 2 });
  });
});

describe('gluster brick: the heal record of a brick that does not run', () => {
  // getfattr as on a brick whose entry blames brick 1.
  const f = fakeBrick('cairn-heal-record-', [G1], (brick) => `#!/bin/sh\nprintf '# file: ${brick}/.glusterfs/00/00/${G1}\\ntrusted.afr.v-client-1=0x000000010000000000000000\\n\\n'\n`);

  it('is read from its filesystem while that is mounted, glusterfsd running or not (a brick stopped with its volume)', () => {
    expect(healRecord(f.brick(), true, true)).to.deep.include({ count: 1, owedTo: [1], uninspected: 0 });
  });

  it('is unknown (one entry uninspected: every other brick blamed) while its image is there but not mounted, and none before it has one', () => {
    expect(healRecord(f.brick(), false, true)).to.deep.equal({ count: 1, owed: [], owedTo: [], uninspected: 1 });
    expect(healRecord(f.brick(), false, false)).to.equal(undefined);
  });
});

/**
 * Split-brain made on real bricks, and found the way Cairn finds it: a
 * replica-2 volume with quorum off (cluster.quorum-type none, and the
 * client's own heals off so nothing repairs the file in between) takes a
 * write with brick 1 down, then another with brick 0 down. Each brick then
 * blames the other for the file: the agent's pendingHeals reports what
 * each owes (from the bricks' xattrs), and the controller's
 * splitBrainCounts pairs them up; the mount refuses to read the file (EIO),
 * as the Volume's SplitBrain condition says. Setting
 * cluster.favorite-child-policy (the hint's way out) lets the self-heal
 * daemon keep one copy.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { freePort } from '../../../apiserver/util/free-port.js';
import { splitBrainCounts } from '../../../controller/reconcilers/volume/gluster-health.js';
import { clientVolfile, shdVolfile, type GlusterLayout } from '../../../controller/reconcilers/volume/volfiles.js';
import { eventually } from '../../support/eventually.js';
import { BrickSet, mountVolume, pendingHeals, prepareBrick, startGluster, unmount, type GlusterProcess } from '../../support/gluster.js';

function tryWrite(file: string, data: string): boolean {
  try {
    fs.writeFileSync(file, data);
    return true;
  } catch {
    return false;
  }
}

function readError(file: string): string | undefined {
  try {
    fs.readFileSync(file);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
}

describe('split-brain on real bricks, found from what each brick owes (issue 14)', function () {
  this.timeout(120_000);
  let dir: string;
  let layout: GlusterLayout;
  let mnt: string;
  let bricks: BrickSet;
  const others: GlusterProcess[] = [];

  const owed = () => new Map(layout.bricks.map((b, i) => [i, pendingHeals(b.path).owed] as const));

  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-splitbrain-'));
    const ports = [await freePort(), await freePort()];
    layout = { volume: 'sb', volumeId: randomUUID(), bricks: ports.map((port, i) => ({ host: '127.0.0.1', port, path: path.join(dir, 'bricks', String(i)) })), options: { 'cluster.quorum-type': 'none' } };
    for (const b of layout.bricks) prepareBrick(b.path, layout.volumeId);
    bricks = new BrickSet(layout, dir);
    for (let i = 0; i < 2; i++) await bricks.start(i);
    mnt = path.join(dir, 'mnt');
    // The client heals what it looks up by default; off, so only the writes below touch the file.
    const noClientHeals = clientVolfile(layout).replace('option quorum-type none', 'option quorum-type none\n    option data-self-heal off\n    option metadata-self-heal off\n    option entry-self-heal off');
    others.push(await mountVolume(noClientHeals, mnt, dir));
  });

  after(async () => {
    if (mnt) unmount(mnt);
    for (const p of others) await p.stop();
    await bricks?.stopAll();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('two bricks written apart blame each other: both report the file owed to the other, the pair is split-brain, and reads fail with EIO', async () => {
    const file = path.join(mnt, 'f.txt');
    fs.writeFileSync(file, 'both');
    await bricks.stop(1);
    await eventually('a write with brick 1 down', () => tryWrite(file, 'only on brick 0'), 20_000, 200);
    await bricks.start(1);
    // The client reconnects to brick 1 within a few seconds: a new file reaching brick 1 shows it has.
    let probes = 0;
    await eventually('the client back on brick 1', () => {
      const probe = `probe-${probes++}`;
      return tryWrite(path.join(mnt, probe), 'x') && fs.existsSync(path.join(layout.bricks[1]!.path, probe));
    }, 20_000, 200);
    await bricks.stop(0);
    await eventually('a write with brick 0 down', () => tryWrite(file, 'only on brick 1'), 20_000, 200);
    await bricks.start(0);
    const found = owed();
    expect(found.get(0)!.map((e) => e.bricks), 'brick 0 blames brick 1').to.deep.include([1]);
    expect(found.get(1)!.map((e) => e.bricks), 'brick 1 blames brick 0').to.deep.include([0]);
    expect([...splitBrainCounts(found)]).to.deep.equal([[0, 1], [1, 1]]);
    expect(layout.bricks.map((b) => pendingHeals(b.path).owedTo), 'each brick names the other as having missed writes').to.deep.equal([[1], [0]]);
    await eventually('reads of the file fail with EIO', () => readError(file) === 'EIO', 20_000, 250);
  });

  it('with cluster.favorite-child-policy mtime, the self-heal daemon keeps the newer copy and the split-brain is gone', async () => {
    others.push(startGluster('glusterfs', 'shd', shdVolfile({ ...layout, options: { ...layout.options, 'cluster.favorite-child-policy': 'mtime' } }), dir, ['--process-name=glustershd']));
    await eventually('no split-brain left', () => splitBrainCounts(owed()).size === 0 && layout.bricks.every((b) => pendingHeals(b.path).count === 0), 60_000, 250);
    for (const b of layout.bricks) expect(fs.readFileSync(path.join(b.path, 'f.txt'), 'utf8'), b.path).to.equal('only on brick 1');
    await eventually('the file reads again', () => readError(path.join(mnt, 'f.txt')) === undefined, 20_000, 250);
  });
});

/**
 * The generated volfiles (controller/reconcilers/volume/volfiles.ts) against
 * real GlusterFS, without glusterd (issue 14): three glusterfsd bricks on
 * loopback, a FUSE mount and the self-heal daemon. A write lands on every
 * brick with the same bytes; a brick that was down while writes went on is
 * healed when it returns; with two of three bricks down, writes fail (quorum)
 * and nothing is lost once they are back.
 */
import { execFileSync } from 'node:child_process';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { freePort } from '../../../apiserver/util/free-port.js';
import { clientVolfile, shdVolfile, type GlusterLayout } from '../../../controller/reconcilers/volume/volfiles.js';
import { eventually } from '../../support/eventually.js';
import { BrickSet, mountVolume, pendingHeals, prepareBrick, startGluster, unmount, type GlusterProcess } from '../../support/gluster.js';

const sha = (file: string) => createHash('sha256').update(fs.readFileSync(file)).digest('hex');

/** Writes `file`; the error code when the volume refused, undefined when it took the write. */
function writeError(file: string, data: string): string | undefined {
  try {
    fs.writeFileSync(file, data);
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code ?? String(err);
  }
}

describe('gluster volfiles on real bricks (issue 14)', function () {
  this.timeout(120_000);
  let dir: string;
  let layout: GlusterLayout;
  let mnt: string;
  let bricks: BrickSet;
  const others: GlusterProcess[] = [];


  before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-gluster-'));
    const ports = [await freePort(), await freePort(), await freePort()];
    layout = { volume: 'it-data', volumeId: randomUUID(), bricks: ports.map((port, i) => ({ host: '127.0.0.1', port, path: path.join(dir, 'bricks', String(i)) })) };
    for (const b of layout.bricks) prepareBrick(b.path, layout.volumeId);
    bricks = new BrickSet(layout, dir);
    for (let i = 0; i < 3; i++) await bricks.start(i);
    mnt = path.join(dir, 'mnt');
    others.push(await mountVolume(clientVolfile(layout), mnt, dir));
  });

  after(async () => {
    if (mnt) unmount(mnt);
    for (const p of others) await p.stop();
    await bricks?.stopAll();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  it('writes the same bytes to every brick', () => {
    fs.writeFileSync(path.join(mnt, 'first.bin'), randomBytes(4 * 2 ** 20));
    const sum = sha(path.join(mnt, 'first.bin'));
    for (const b of layout.bricks) expect(sha(path.join(b.path, 'first.bin')), b.path).to.equal(sum);
  });

  it('keeps one set of times for every replica (features/utime): each copy carries the same trusted.glusterfs.mdata', () => {
    fs.writeFileSync(path.join(mnt, 'timed.txt'), 'when');
    const mdata = layout.bricks.map((b) => /trusted\.glusterfs\.mdata=(0x[0-9a-f]+)/.exec(execFileSync('getfattr', ['--absolute-names', '-n', 'trusted.glusterfs.mdata', '-e', 'hex', path.join(b.path, 'timed.txt')]).toString())?.[1]);
    expect(mdata[0], 'stamped').to.match(/^0x[0-9a-f]+$/);
    expect(new Set(mdata).size, mdata.join(' ')).to.equal(1);
  });

  it('heals a brick that was down while writes went on, and its index empties', async () => {
    await bricks.stop(2);
    fs.writeFileSync(path.join(mnt, 'second.bin'), randomBytes(2 * 2 ** 20));
    fs.appendFileSync(path.join(mnt, 'first.bin'), 'more');
    expect(pendingHeals(layout.bricks[0]!.path).count, 'pending heals while brick 2 is down').to.be.above(0);
    await bricks.start(2);
    others.push(startGluster('glusterfs', 'shd', shdVolfile(layout), dir, ['--process-name=glustershd']));
    await eventually('the heal to complete', () => layout.bricks.every((b) => pendingHeals(b.path).count === 0), 60_000, 250);
    for (const f of ['first.bin', 'second.bin']) expect(sha(path.join(layout.bricks[2]!.path, f)), f).to.equal(sha(path.join(mnt, f)));
  });

  it('refuses writes without quorum (2 of 3 bricks down), and loses nothing once they return', async () => {
    const before = sha(path.join(mnt, 'second.bin'));
    await bricks.stop(1);
    await bricks.stop(2);
    await eventually('writes to fail without quorum', () => ['ENOTCONN', 'EROFS', 'EIO'].includes(writeError(path.join(mnt, 'third.bin'), 'x') ?? ''), 20_000, 250);
    await bricks.start(1);
    await bricks.start(2);
    await eventually('writes to work again', () => writeError(path.join(mnt, 'third.bin'), 'back') === undefined, 30_000, 250);
    expect(sha(path.join(mnt, 'second.bin'))).to.equal(before);
  });
});

/**
 * The agent's mount-point handling, with real mounts (tmpfs, as root):
 * a mount reached through a symlinked data dir is seen as one, stacked
 * mounts are all unmounted, and a directory still mounted is never
 * removed recursively. A FUSE mount of a volume left at the join mount (an
 * agent that died mid-join), or one the check missed behind a symlink,
 * once had every file of the volume deleted through it.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { isMountPoint, removeMountPoint, unmountAll } from '../../../../../agent/drivers/volume/gluster-mount.js';

const mountTmpfs = (dir: string) => execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'cairn-test', dir]);

describe('agent: mount points', function () {
  let base: string;
  let dir: string;
  before(function () {
    if (process.getuid?.() !== 0) this.skip();
  });
  beforeEach(() => {
    base = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-mnt-'));
    dir = path.join(base, 'real', 'mount');
    fs.mkdirSync(dir, { recursive: true });
  });
  afterEach(async () => {
    await unmountAll(dir);
    fs.rmSync(base, { recursive: true, force: true });
  });

  it('sees a mount reached through a symlinked parent', () => {
    fs.symlinkSync(path.join(base, 'real'), path.join(base, 'link'));
    mountTmpfs(dir);
    expect(isMountPoint(path.join(base, 'link', 'mount'))).to.equal(true);
    expect(isMountPoint(path.join(base, 'link', 'other'))).to.equal(false);
  });

  it('unmounts every mount stacked at a directory', async () => {
    mountTmpfs(dir);
    mountTmpfs(dir);
    await unmountAll(dir);
    expect(isMountPoint(dir)).to.equal(false);
  });

  it('refuses to remove a directory that is still mounted, and keeps what the mount holds', () => {
    mountTmpfs(dir);
    fs.writeFileSync(path.join(dir, 'data'), 'keep');
    expect(() => removeMountPoint(dir)).to.throw(/still mounted/);
    expect(fs.readFileSync(path.join(dir, 'data'), 'utf8')).to.equal('keep');
  });

  it('removes it once unmounted, and a missing one quietly', async () => {
    mountTmpfs(dir);
    await unmountAll(dir);
    removeMountPoint(dir);
    expect(fs.existsSync(dir)).to.equal(false);
    removeMountPoint(dir);
  });
});

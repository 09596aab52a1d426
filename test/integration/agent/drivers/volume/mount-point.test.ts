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
import { attachGluster, isMountPoint, removeMountPoint, unmountAll } from '../../../../../agent/drivers/volume/gluster-mount.js';
import { glusterBrickDriver } from '../../../../../agent/drivers/volume/gluster-brick.js';
import { brickDataPath } from '../../../../../api/names.js';
import type { WorkItem } from '../../../../../api/workitem.js';

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

  it('deletes a brick without going through a mount its join left behind (once every file of the volume went)', async () => {
    const dataDir = path.join(base, 'data');
    const volume = fs.mkdtempSync(path.join(base, 'volume-')); // stands in for the FUSE mount of the whole volume
    fs.writeFileSync(path.join(volume, 'precious'), 'keep');
    const runDir = path.join(dataDir, 'gluster', 'c', 'v-1');
    const joinMount = path.join(runDir, 'join-mount');
    fs.mkdirSync(joinMount, { recursive: true });
    execFileSync('mount', ['--bind', volume, joinMount]);
    const brickPath = brickDataPath(dataDir, 'c', 'v', 1);
    fs.mkdirSync(brickPath, { recursive: true });
    const item = {
      metadata: { name: 'v.r1.n1', namespace: 'c' },
      spec: { type: 'VolumeReplica', nodeName: 'n1', owner: { kind: 'Volume', name: 'v' }, volumeReplica: { volumeName: 'v', index: 1, size: '16Mi', driver: 'gluster', brick: { volume: 'c-v', volumeId: 'x', path: brickPath, port: 1, volfile: '' } } },
    } as unknown as WorkItem;
    const log = { info: () => undefined, warn: () => undefined };
    try {
      await glusterBrickDriver.remove!(item, { dataDir, nodeName: 'n1', now: Date.now, operationId: 'op', signal: new AbortController().signal, log });
    } finally {
      await unmountAll(joinMount).catch(() => undefined);
    }
    expect(fs.readFileSync(path.join(volume, 'precious'), 'utf8'), 'the volume\'s files').to.equal('keep');
    expect(fs.existsSync(runDir)).to.equal(false);
    expect(fs.existsSync(brickPath)).to.equal(false);
  });

  it('never shares a run dir between the mount of volume x-0 and brick 0 of volume mount-x (gluster/c/mount-x-0): each refuses, and neither deletes the other\'s files', async () => {
    const dataDir = path.join(base, 'data');
    const ctx = { dataDir, nodeName: 'n1', now: Date.now, operationId: 'op', signal: new AbortController().signal, log: { info: () => undefined, warn: () => undefined } };
    const shared = path.join(dataDir, 'gluster', 'c', 'mount-x-0');
    fs.mkdirSync(shared, { recursive: true });
    fs.writeFileSync(path.join(shared, 'brick.img'), 'the brick');
    const mount = { volume: 'c-x-0', volfile: '', size: '16Mi' };
    const refused = await attachGluster('c', 'x-0', mount, 'web', ctx).then(() => undefined, (e: Error) => e);
    expect(refused?.message).to.match(/mount of volume c\/x-0 on node n1 would share its run dir .* with a brick of volume c\/mount-x/);
    expect(fs.readFileSync(path.join(shared, 'brick.img'), 'utf8')).to.equal('the brick');

    fs.rmSync(shared, { recursive: true });
    fs.mkdirSync(path.join(shared, 'users'), { recursive: true });
    fs.writeFileSync(path.join(shared, 'users', 'web'), '');
    const brickPath = brickDataPath(dataDir, 'c', 'mount-x', 0);
    const item = {
      metadata: { name: 'mount-x.r0.n1', namespace: 'c' },
      spec: { type: 'VolumeReplica', nodeName: 'n1', owner: { kind: 'Volume', name: 'mount-x' }, volumeReplica: { volumeName: 'mount-x', index: 0, size: '16Mi', driver: 'gluster', brick: { volume: 'c-mount-x', volumeId: 'x', path: brickPath, port: 1, volfile: '' } } },
    } as unknown as WorkItem;
    const result = await glusterBrickDriver.ensure(item, ctx).then(() => undefined, (e: Error) => e);
    expect(result?.message).to.match(/brick 0 of volume mount-x on node n1 would share its run dir .* with the mount of another volume/);
    await glusterBrickDriver.remove!(item, ctx);
    expect(fs.existsSync(path.join(shared, 'users', 'web')), 'the mount\'s user').to.equal(true);
  });
});

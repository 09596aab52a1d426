/**
 * The agent's volfile server against a real glusterfs FUSE client: the
 * mount fetches its volfile over the unix socket, and when the volfile
 * changes (a brick moved) the server's FETCHSPEC callback makes the mount
 * switch graphs under an open file: new writes land on the new brick.
 * Once the mount is gone, its volfile is no longer looked up.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { startVolfileServer, type VolfileServer } from '../../../agent/gluster/volfile-server.js';
import type { BrickPlacement } from '../../../api/volume.js';
import { clientVolfile, oneBrickVolfile } from '../../../controller/reconcilers/volume/volfiles.js';
import { eventually } from '../../support/eventually.js';
import { freePort } from '../../../apiserver/util/free-port.js';
import { listening, prepareBrick, startGluster, unmount, type GlusterProcess } from '../../support/gluster.js';

const run = promisify(execFile);
const volumeId = '5d0c1a7e-3f2b-4c1d-9e8f-7a6b5c4d3e2f';

describe('gluster: the agent volfile server switches a mount to a new graph', function () {
  this.timeout(60_000);
  let dir: string;
  let server: VolfileServer | undefined;
  const bricks: GlusterProcess[] = [];
  let mnt: string | undefined;

  afterEach(async () => {
    unmount(mnt);
    await server?.close();
    for (const b of bricks) await b.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('serves the volfile and tells the mount to fetch it again when it changes', async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-vfs-'));
    const placed: BrickPlacement[] = [];
    for (let i = 0; i < 4; i++) {
      const b = { host: '127.0.0.1', port: await freePort(), path: path.join(dir, `b${i}`) };
      prepareBrick(b.path, volumeId);
      bricks.push(startGluster('glusterfsd', `b${i}`, oneBrickVolfile('v', volumeId, b), dir, ['--brick-name', b.path]));
      placed.push(b);
    }
    let layout = placed.slice(0, 3);
    const asked: string[] = [];
    server = await startVolfileServer(path.join(dir, 'vs.sock'), (key) => (asked.push(key), clientVolfile({ volume: 'v', volumeId, bricks: layout })), () => undefined);
    mnt = path.join(dir, 'mnt');
    fs.mkdirSync(mnt);
    await eventually('bricks listening', async () => (await Promise.all(placed.map((b) => listening(b.port)))).every(Boolean), 15_000, 100);
    await run('glusterfs', ['-s', path.join(dir, 'vs.sock'), '--volfile-server-transport', 'unix', '--volfile-id', 'c/v', '-l', path.join(dir, 'client.log'), mnt]);
    expect(asked).to.deep.equal(['c/v']);
    await eventually('the mount answers', () => fs.readdirSync(mnt!).length >= 0, 20_000, 100);
    // The mount answers once one brick is connected; a write before it reaches the others would miss them.
    let probe = 0;
    await eventually('the mount writes to all three bricks', () => {
      const name = `probe-${probe++}.txt`;
      fs.writeFileSync(path.join(mnt!, name), '');
      return layout.every((b) => fs.existsSync(path.join(b.path, name)));
    }, 15_000, 200);
    fs.writeFileSync(path.join(mnt, 'before.txt'), 'before');
    expect(fs.existsSync(path.join(placed[2]!.path, 'before.txt'))).to.equal(true);

    layout = [placed[0]!, placed[1]!, placed[3]!];
    server.refresh();
    await eventually('the mount fetched the new volfile', () => asked.length >= 3, 10_000, 50);
    await eventually('new writes land on the new brick', () => {
      fs.writeFileSync(path.join(mnt!, 'after.txt'), 'after');
      return fs.existsSync(path.join(placed[3]!.path, 'after.txt'));
    }, 10_000, 200);
    expect(fs.existsSync(path.join(placed[2]!.path, 'after.txt')), 'the old brick is out of the graph').to.equal(false);

    // The same brick back on a new port (re-placed on its node): only the port changes, and the mount must follow.
    await bricks[3]!.stop();
    const moved = { ...placed[3]!, port: await freePort() };
    bricks.push(startGluster('glusterfsd', 'b3-moved', oneBrickVolfile('v', volumeId, moved), dir, ['--brick-name', moved.path]));
    layout = [placed[0]!, placed[1]!, moved];
    server.refresh();
    let attempt = 0;
    await eventually('new files reach the brick on its new port', () => {
      const name = `moved-${attempt++}.txt`; // a file made while the brick was out stays off it until a heal
      fs.writeFileSync(path.join(mnt!, name), 'moved');
      return fs.existsSync(path.join(moved.path, name));
    }, 15_000, 200);

    unmount(mnt);
    mnt = undefined;
    await eventually('a volfile no mount follows is not looked up again', () => {
      const before = asked.length;
      server!.refresh();
      return asked.length === before;
    }, 5_000, 100);
  });
});

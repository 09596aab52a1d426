/**
 * The GlusterFS volfiles of a Volume, checked against golden files (run
 * with CAIRN_UPDATE_GOLDEN=1 to rewrite them after a deliberate change, and
 * review the diff), and the names that must agree across them.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { volumeIdXattr } from '../../../../../agent/drivers/volume/gluster-brick.js';
import { brickVolfile, clientVolfile, shdVolfile, type GlusterLayout } from '../../../../../controller/reconcilers/volume/volfiles.js';
import { ROOT } from '../../../../support/paths.js';

const GOLDEN = path.join(ROOT, 'test/unit/controller/reconcilers/volume/golden');

const replica3: GlusterLayout = {
  volume: 'prod-data',
  volumeId: '6a1f4f2e-8c0b-4d55-9a3e-0c1d2e3f4a5b',
  bricks: [
    { host: '10.0.0.1', port: 49152, path: '/var/lib/cairn/bricks/prod/data/0' },
    { host: '10.0.0.2', port: 49153, path: '/var/lib/cairn/bricks/prod/data/1' },
    { host: '10.0.0.3', port: 49154, path: '/var/lib/cairn/bricks/prod/data/2' },
  ],
};
const arbiter: GlusterLayout = { ...replica3, arbiter: true };
/** The client graph's top is named after the bricks' ports (49152-49154 here). */
const PORTS_TAG = 'e5775c01';

function golden(name: string, text: string): void {
  const file = path.join(GOLDEN, name);
  if (process.env.CAIRN_UPDATE_GOLDEN) fs.writeFileSync(file, text);
  expect(text, `${name} (CAIRN_UPDATE_GOLDEN=1 rewrites it)`).to.equal(fs.readFileSync(file, 'utf8'));
}

/** `option <key> <value>` of volume `name` in a volfile. */
function option(volfile: string, name: string, key: string): string | undefined {
  const block = volfile.split('end-volume').find((b) => b.includes(`volume ${name}\n`));
  return block?.match(new RegExp(`option ${key.replace(/[.]/g, '\\.')} (.*)`))?.[1];
}

describe('gluster volfiles', () => {
  it('match the golden files: replica 3', () => {
    replica3.bricks.forEach((_, i) => golden(`replica3-brick-${i}.vol`, brickVolfile(replica3, i)));
    golden('replica3-client.vol', clientVolfile(replica3));
    golden('replica3-shd.vol', shdVolfile(replica3));
  });

  it('match the golden files: replica 3 with an arbiter (only the last brick runs features/arbiter)', () => {
    golden('arbiter-brick-2.vol', brickVolfile(arbiter, 2));
    golden('arbiter-client.vol', clientVolfile(arbiter));
    expect(brickVolfile(arbiter, 1)).to.equal(brickVolfile(replica3, 1));
    expect(brickVolfile(arbiter, 2)).to.include('type features/arbiter');
  });

  it('agree on names: afr-pending-xattr lists the clients, which the bricks index watches, and each client asks for its brick by path', () => {
    for (const text of [clientVolfile(replica3), shdVolfile(replica3)]) {
      expect(option(text, 'prod-data-replicate-0', 'afr-pending-xattr')).to.equal('prod-data-client-0,prod-data-client-1,prod-data-client-2');
      replica3.bricks.forEach((b, i) => {
        expect(option(text, `prod-data-client-${i}`, 'remote-subvolume')).to.equal(b.path);
        expect(option(text, `prod-data-client-${i}`, 'remote-port')).to.equal(String(b.port));
      });
    }
    replica3.bricks.forEach((b, i) => {
      const brick = brickVolfile(replica3, i);
      expect(option(brick, 'prod-data-index', 'xattrop-pending-watchlist')).to.equal('trusted.afr.prod-data-');
      expect(option(brick, 'prod-data-server', `auth.addr.${b.path}.allow`)).to.equal('*');
      expect(brick).to.include(`volume ${b.path}\n    type debug/io-stats`);
    });
  });

  it('refuses layouts gluster would misread, saying which field is wrong', () => {
    expect(() => clientVolfile({ ...replica3, volume: 'a b' })).to.throw(/use letters, digits/);
    expect(() => clientVolfile({ ...replica3, volumeId: 'nope' })).to.throw(/not a UUID/);
    expect(() => clientVolfile({ ...replica3, bricks: [] })).to.throw(/1 to 3 are supported/);
    expect(() => clientVolfile({ ...replica3, bricks: replica3.bricks.slice(0, 2), arbiter: true })).to.throw(/arbiter needs exactly 3/);
    expect(() => brickVolfile({ ...replica3, bricks: [{ ...replica3.bricks[0]!, path: 'relative' }] }, 0)).to.throw(/must be absolute/);
    expect(() => brickVolfile(replica3, 3)).to.throw(/no brick 3/);
  });

  it('carry spec.options into the client and self-heal graphs, and write nothing for options left unset', () => {
    const tuned: GlusterLayout = { ...replica3, options: { 'cluster.quorum-type': 'fixed', 'cluster.quorum-count': '2', 'network.ping-timeout': '10', 'cluster.heal-timeout': '60', 'performance.write-behind-window-size': '4MB', 'diagnostics.client-log-level': 'WARNING' } };
    const client = clientVolfile(tuned);
    const shd = shdVolfile(tuned);
    for (const text of [client, shd]) {
      expect(option(text, 'prod-data-replicate-0', 'quorum-type')).to.equal('fixed');
      expect(option(text, 'prod-data-replicate-0', 'quorum-count')).to.equal('2');
      expect(option(text, 'prod-data-client-1', 'ping-timeout')).to.equal('10');
    }
    expect(option(shd, 'prod-data-replicate-0', 'heal-timeout')).to.equal('60');
    expect(option(client, 'prod-data-replicate-0', 'heal-timeout')).to.equal(undefined);
    expect(option(client, 'prod-data-write-behind', 'cache-size')).to.equal('4MB');
    expect(option(client, `prod-data-ports-${PORTS_TAG}`, 'log-level')).to.equal('WARNING');
    expect(brickVolfile(tuned, 0)).to.equal(brickVolfile(replica3, 0));
    expect(clientVolfile({ ...replica3, options: {} })).to.equal(clientVolfile(replica3));
  });

  it('leave write-behind out of the client graph when performance.write-behind is off', () => {
    const text = clientVolfile({ ...replica3, options: { 'performance.write-behind': 'off' } });
    expect(text).not.to.include('performance/write-behind');
    expect(text).to.include(`volume prod-data-ports-${PORTS_TAG}\n    type debug/io-stats\n    subvolumes prod-data-utime`);
  });

  it("name the client graph's top after the bricks' ports: a brick back on a new port makes a new graph, which mounts switch to (a port alone they ignore)", () => {
    const top = (l: GlusterLayout) => /volume (\S+)\n    type debug\/io-stats/.exec(clientVolfile(l))![1];
    const moved = { ...replica3, bricks: replica3.bricks.map((b, i) => (i === 2 ? { ...b, port: 49160 } : b)) };
    expect(top(moved)).to.not.equal(top(replica3));
    expect(top({ ...replica3, options: { 'network.ping-timeout': '7' } }), 'an option change stays a reconfigure').to.equal(top(replica3));
  });

  it('stamps the volume id as the 16 bytes setfattr takes', () => {
    expect(volumeIdXattr(replica3.volumeId)).to.equal('0x6a1f4f2e8c0b4d559a3e0c1d2e3f4a5b');
  });
});

/** glusterMount: the client volfile from where the Volume's status says the bricks are — pure. */
import { expect } from 'chai';
import type { Volume, VolumeReplicaStatus } from '../../../../../api/volume.js';
import { glusterMount } from '../../../../../controller/reconcilers/volume/client-mount.js';
import { NS, volume } from '../builders.js';

const uid = '0b9c3f2a-1d4e-4f60-8a7b-9c0d1e2f3a4b';
const replica = (index: number, address?: string): VolumeReplicaStatus => ({ index, nodeName: `n${index}`, path: `/data/n${index}/bricks/${NS}/data-${index}`, state: 'Ready', brick: { ...(address ? { address } : {}), port: 49152 + index, state: 'Running' } });
const gluster = (replicas: VolumeReplicaStatus[], spec: Partial<Volume['spec']> = {}): Volume => {
  const v = volume('data', { replicas: 2, driver: 'gluster', size: '1Gi', ...spec }, { replicas, capacity: '1Gi' });
  return { ...v, metadata: { ...v.metadata, uid } };
};

describe('glusterMount', () => {
  it('names every brick at its address, port and path, in index order, with the Volume size', () => {
    const m = glusterMount(gluster([replica(1, '10.0.0.2'), replica(0, '10.0.0.1')]))!;
    expect(m.volume).to.equal(`${NS}-data`);
    expect(m.size).to.equal('1Gi');
    const v = m.volfile;
    expect(v).to.include('option remote-host 10.0.0.1').and.include('option remote-port 49152').and.include(`option remote-subvolume /data/n0/bricks/${NS}/data-0`);
    expect(v.indexOf(`${NS}-data-client-0`)).to.be.lessThan(v.indexOf(`${NS}-data-client-1`));
    expect(v).to.include('option remote-host 10.0.0.2').and.include('type cluster/replicate');
  });

  it("carries the spec's options and arbiter, as the bricks' graphs do (a mount without them kept gluster's 42 s ping timeout)", () => {
    const three = [replica(0, '10.0.0.1'), replica(1, '10.0.0.2'), replica(2, '10.0.0.3')];
    const m = glusterMount(gluster(three, { replicas: 3, arbiter: true, options: { 'network.ping-timeout': '5' } }))!;
    expect(m.volfile).to.include('option ping-timeout 5').and.not.include('option ping-timeout 42');
    expect(m.volfile).to.include('option arbiter-count 1');
    expect(glusterMount(gluster(three, { replicas: 3 }))!.volfile).to.include('option ping-timeout 42').and.not.include('arbiter-count');
  });

  it('is undefined for the file driver, while a brick has no address, and while a replica is unplaced', () => {
    expect(glusterMount(gluster([replica(0, '10.0.0.1'), replica(1, '10.0.0.2')], { driver: 'file' }))).to.equal(undefined);
    expect(glusterMount(gluster([replica(0, '10.0.0.1'), replica(1)]))).to.equal(undefined);
    expect(glusterMount(gluster([replica(0, '10.0.0.1')]))).to.equal(undefined);
  });

  it('names every placed brick while a lower spec.replicas is refused (a mount once left the third out, so it missed writes nothing blamed it for)', () => {
    const three = [replica(0, '10.0.0.1'), replica(1, '10.0.0.2'), replica(2, '10.0.0.3')];
    const v = glusterMount(gluster(three, { replicas: 2 }))!.volfile;
    expect(v).to.include(`${NS}-data-client-2`).and.include('option remote-host 10.0.0.3');
  });

  describe('a volume in service (a brick joined) whose raised spec.replicas finds no node for the new brick', () => {
    const joined = (r: VolumeReplicaStatus): VolumeReplicaStatus => ({ ...r, brick: { ...r.brick!, joinedAt: '2024-05-01T11:00:00Z' } });
    const inService = [joined(replica(0, '10.0.0.1')), joined(replica(1, '10.0.0.2'))];

    it('keeps the mount naming the bricks it had until the new one has an address (it was undefined, and every instance lost its mount)', () => {
      const v = glusterMount(gluster([...inService, { index: 2, state: 'Pending' }], { replicas: 3 }))!.volfile;
      expect(v).to.include(`${NS}-data-client-1`).and.not.include(`${NS}-data-client-2`);
      expect(glusterMount(gluster([...inService, { ...replica(2, '10.0.0.3') }], { replicas: 3 }))!.volfile).to.include(`${NS}-data-client-2`);
    });

    it('but not while the new brick is placed on a node without an address: a graph without it would not blame it for what it misses', () => {
      expect(glusterMount(gluster([...inService, { index: 2, nodeName: 'n2', state: 'Creating' }], { replicas: 3 }))).to.equal(undefined);
    });

    it('but not with a brick missing below one that has an address, nor before any brick joined', () => {
      expect(glusterMount(gluster([inService[0]!, replica(1), joined(replica(2, '10.0.0.3'))], { replicas: 3 }))).to.equal(undefined);
      expect(glusterMount(gluster([replica(0, '10.0.0.1'), replica(1, '10.0.0.2'), { index: 2, state: 'Pending' }], { replicas: 3 }))).to.equal(undefined);
    });
  });
});

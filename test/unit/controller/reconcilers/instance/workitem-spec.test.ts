/** desiredInstanceWorkItem and specHash: the WorkItem an Instance becomes on a node. */
import { expect } from 'chai';
import { RESTARTED_AT_ANNOTATION } from '../../../../../api/names.js';
import type { WorkItemSpec } from '../../../../../api/workitem.js';
import { SPEC_HASH_ANNOTATION, desiredInstanceWorkItem, instanceRuntimeSpec, specHash } from '../../../../../controller/reconcilers/instance/workitem-spec.js';
import { glusterMount } from '../../../../../controller/reconcilers/volume/client-mount.js';
import { cluster, instance, volume } from '../builders.js';

const spec = (nodeName = 'n1'): WorkItemSpec => ({ nodeName, type: 'InstanceRuntime', owner: { kind: 'Instance', name: 'web' }, instance: { driver: 'process', runState: 'Running', cpus: 1, memory: '128Mi' } });

describe('instance WorkItem spec', () => {
  describe('specHash', () => {
    it('is 16 hex digits, stable under key order and undefined fields', () => {
      const a = spec();
      const b: WorkItemSpec = { instance: { memory: '128Mi', cpus: 1, runState: 'Running', driver: 'process', process: undefined }, owner: { name: 'web', kind: 'Instance' }, type: 'InstanceRuntime', nodeName: 'n1' };
      expect(specHash(a)).to.match(/^[0-9a-f]{16}$/);
      expect(specHash(b)).to.equal(specHash(a));
    });

    it('changes with any field', () => {
      expect(specHash(spec('n2'))).not.to.equal(specHash(spec()));
      expect(specHash({ ...spec(), instance: { ...spec().instance!, runState: 'Stopped' } })).not.to.equal(specHash(spec()));
    });
  });

  describe('instanceRuntimeSpec', () => {
    it('fills the Instance defaults', () => {
      const s = instanceRuntimeSpec(instance('web', { process: undefined }), undefined, new Map(), 'n1');
      expect(s).to.deep.equal({
        driver: 'process',
        runState: 'Running',
        cpus: 1,
        memory: '128Mi',
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 10,
        fencing: { leaseName: 'instance-web' },
      });
    });

    it('keeps explicit values, the process and the restart token', () => {
      const inst = instance(
        'web',
        { runState: 'Stopped', cpus: 3, memory: '1Gi', restartPolicy: 'Never', terminationGracePeriodSeconds: 2, process: { command: ['a'], args: ['b'], env: [{ name: 'X', value: '1' }] } },
        undefined,
        { annotations: { [RESTARTED_AT_ANNOTATION]: 'r1' } },
      );
      expect(instanceRuntimeSpec(inst, undefined, new Map(), 'n1')).to.deep.include({
        runState: 'Stopped',
        cpus: 3,
        memory: '1Gi',
        restartPolicy: 'Never',
        terminationGracePeriodSeconds: 2,
        restartToken: 'r1',
        process: { command: ['a'], args: ['b'], env: [{ name: 'X', value: '1' }] },
      });
    });

    it('gives a qemu instance the Cluster’s qemu defaults under its own settings, without the migration section', () => {
      const c = cluster({ driverDefaults: { qemu: { accelerator: 'kvm', machine: 'pc', kernel: '/k' } } });
      const inst = instance('vm', { driver: 'qemu', process: undefined, qemu: { accelerator: 'tcg', network: 'user', migration: { mode: 'Cold', maxDowntimeMs: 5 } } });
      expect(instanceRuntimeSpec(inst, c, new Map(), 'n1').qemu).to.deep.equal({ accelerator: 'tcg', machine: 'pc', kernel: '/k', network: 'user' });
      expect(instanceRuntimeSpec(instance('vm2', { driver: 'qemu', process: undefined }), undefined, new Map(), 'n1').qemu).to.deep.equal({});
    });

    it('does not give a process instance a qemu section, even with Cluster qemu defaults', () => {
      const c = cluster({ driverDefaults: { qemu: { machine: 'pc' } } });
      expect(instanceRuntimeSpec(instance('web'), c, new Map(), 'n1').qemu).to.equal(undefined);
    });

    it('locates each volume’s replica on the node (index and path) and leaves other attachments as declared', () => {
      const data = volume('data', { replicas: 2 }, { replicas: [{ index: 0, nodeName: 'n1', path: '/p0' }, { index: 1, nodeName: 'n2' }] });
      const inst = instance('db', { volumes: [{ name: 'data', volumeName: 'data' }] });
      const vols = new Map([['data', data]]);
      expect(instanceRuntimeSpec(inst, undefined, vols, 'n1').volumes).to.deep.equal([{ name: 'data', volumeName: 'data', replicaIndex: 0, path: '/p0' }]);
      expect(instanceRuntimeSpec(inst, undefined, vols, 'n2').volumes).to.deep.equal([{ name: 'data', volumeName: 'data', replicaIndex: 1 }]);
      expect(instanceRuntimeSpec(inst, undefined, vols, 'n3').volumes).to.deep.equal([{ name: 'data', volumeName: 'data' }]);
    });
  });

  it('gives a gluster volume its mount (the same on every node) instead of a replica', () => {
    const brick = (index: number) => ({ index, nodeName: `n${index + 1}`, path: `/b${index}`, brick: { address: `10.0.0.${index + 1}`, port: 49152 } });
    const v = volume('data', { replicas: 2, driver: 'gluster', size: '1Gi' }, { capacity: '1Gi', replicas: [brick(0), brick(1)] });
    const data = { ...v, metadata: { ...v.metadata, uid: '0b9c3f2a-1d4e-4f60-8a7b-9c0d1e2f3a4b' } };
    const inst = instance('db', { volumes: [{ name: 'data', volumeName: 'data' }] });
    const vols = new Map([['data', data]]);
    const [on1] = instanceRuntimeSpec(inst, undefined, vols, 'n1').volumes!;
    expect(on1).to.deep.equal({ name: 'data', volumeName: 'data', gluster: glusterMount(data) });
    expect(on1!.gluster!.volfile).to.include('option remote-host 10.0.0.2');
    expect(instanceRuntimeSpec(inst, undefined, vols, 'n9').volumes).to.deep.equal([on1]);
  });

  it('keeps the mount of a gluster volume in service while a raised replica has no brick yet (without one the agent refused the attachment)', () => {
    const brick = (index: number) => ({ index, nodeName: `n${index + 1}`, path: `/b${index}`, brick: { address: `10.0.0.${index + 1}`, port: 49152, joinedAt: '2024-05-01T11:00:00Z' } });
    const v = volume('data', { replicas: 3, driver: 'gluster', size: '1Gi' }, { capacity: '1Gi', replicas: [brick(0), brick(1), { index: 2 }] });
    const data = { ...v, metadata: { ...v.metadata, uid: '0b9c3f2a-1d4e-4f60-8a7b-9c0d1e2f3a4b' } };
    const [attached] = instanceRuntimeSpec(instance('db', { volumes: [{ name: 'data', volumeName: 'data' }] }), undefined, new Map([['data', data]]), 'n1').volumes!;
    expect(attached!.gluster?.volfile).to.include('option remote-host 10.0.0.2').and.not.include('data-client-2');
  });

  describe('desiredInstanceWorkItem', () => {
    it('builds again whenever the instance, its node or a volume it reads is another object, or its cluster another spec; and only then', () => {
      const v = volume('data', { replicas: 1 }, { capacity: '1Gi', replicas: [{ index: 0, nodeName: 'n1', path: '/r0' }] });
      const inst = instance('db', { volumes: [{ name: 'data', volumeName: 'data' }] });
      const c = cluster();
      const vols = new Map([['data', v]]);
      const first = desiredInstanceWorkItem(inst, c, vols, 'n1');
      expect(desiredInstanceWorkItem(inst, c, new Map([['data', v], ['other', volume('other')]]), 'n1'), 'the same objects').to.equal(first);
      expect(desiredInstanceWorkItem(inst, { ...c, status: { nodes: 3 } } as typeof c, vols, 'n1'), "the cluster's status only").to.equal(first);
      const moved = { ...v, status: { ...v.status!, replicas: [{ index: 0, nodeName: 'n1', path: '/elsewhere' }] } };
      const variants = {
        'a new generation': () => desiredInstanceWorkItem({ ...inst, metadata: { ...inst.metadata, generation: 2 } }, c, vols, 'n1'),
        'another cluster spec': () => desiredInstanceWorkItem(inst, { ...cluster({ driverDefaults: { qemu: { machine: 'q35' } } }), metadata: { ...c.metadata, generation: 2 } }, vols, 'n1'),
        'another node': () => desiredInstanceWorkItem(inst, c, vols, 'n2'),
        'a changed volume': () => desiredInstanceWorkItem(inst, c, new Map([['data', moved]]), 'n1'),
      };
      for (const [what, variant] of Object.entries(variants)) {
        const base = desiredInstanceWorkItem(inst, c, vols, 'n1');
        expect(base, `before ${what}`).to.deep.equal(first);
        const w = variant();
        expect(w, what).not.to.equal(base);
        // qemu defaults do not touch a process instance; everything else changes the spec
        if (what !== 'another cluster spec') expect(w.metadata.annotations![SPEC_HASH_ANNOTATION], what).not.to.equal(base.metadata.annotations![SPEC_HASH_ANNOTATION]);
      }
      expect(variants['a changed volume']().spec.instance!.volumes![0]!.path).to.equal('/elsewhere');
    });

    it('hashes exactly its spec into the annotation, so the same inputs give the same WorkItem', () => {
      const inst = instance('web');
      const a = desiredInstanceWorkItem(inst, cluster(), new Map(), 'n1');
      const b = desiredInstanceWorkItem(instance('web'), cluster(), new Map(), 'n1');
      expect(a).to.deep.equal(b);
      expect(a.metadata.annotations).to.deep.equal({ [SPEC_HASH_ANNOTATION]: specHash(a.spec) });
    });

    it('changes the hash with the Instance generation (the agent sees which generation it serves)', () => {
      const a = desiredInstanceWorkItem(instance('web'), undefined, new Map(), 'n1');
      const b = desiredInstanceWorkItem(instance('web', {}, undefined, { generation: 2 }), undefined, new Map(), 'n1');
      expect(b.metadata.annotations![SPEC_HASH_ANNOTATION]).not.to.equal(a.metadata.annotations![SPEC_HASH_ANNOTATION]);
    });

    it('shortens very long names to a valid DNS subdomain', () => {
      const long = 'x'.repeat(200);
      const w = desiredInstanceWorkItem(instance(long), undefined, new Map(), 'n'.repeat(100));
      expect(w.metadata.name!.length).to.be.at.most(253);
      expect(w.spec.nodeName).to.equal('n'.repeat(100));
    });
  });
});

/**
 * Real virtual machines through the whole system: `cairn server` with its
 * controller, three `cairn agent` processes, real qemu under TCG booting the
 * project's test guest (hack/build-test-guest.sh). Covers the qemu driver's
 * lifecycle, re-adoption after an agent is killed, live migration (one
 * whose target dies mid-way too), and, with its disk on a gluster volume,
 * live migration without a storage mirror and the failover of a VM from a
 * dead node once its fencing lease expired.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { CoordinationV1Api } from '@kubernetes/client-node';
import type { Instance, InstanceSpec } from '../../../api/instance.js';
import type { WorkItem } from '../../../api/workitem.js';
import { loadKubeConfig } from '../../../api/client/kubeconfig.js';
import { startTestCluster, type TestCluster } from '../../support/cairn-cli.js';
import { eventually } from '../../support/eventually.js';
import { killGlusterUnder } from '../../support/gluster.js';
import { heartbeats, heartbeatsIn, qemuPids, testGuest } from '../../support/test-guest.js';

const NODES = ['node-a', 'node-b', 'node-c'];

describe('qemu VMs end to end (real qemu, TCG)', function () {
  this.timeout(180_000);
  let c: TestCluster;
  const ns = () => c.name;
  const get = (name: string) => c.client.get('Instance', ns(), name) as Promise<Instance | undefined>;
  const consoleLog = (node: string, name: string) => path.join(c.dir, 'agents', node, 'instances', ns(), name, 'console.log');
  const workItems = async (name: string) => (await c.client.listAll('WorkItem', { namespace: ns() })).items.filter((w: WorkItem) => w.spec.owner.name === name);

  function vmSpec(extra: Partial<InstanceSpec> = {}): InstanceSpec {
    const g = testGuest();
    return { driver: 'qemu', memory: '128Mi', terminationGracePeriodSeconds: 2, qemu: { kernel: g.kernel, initrd: g.initrd, cmdline: g.cmdline, readinessMarker: g.marker }, ...extra };
  }
  async function createVm(name: string, extra: Partial<InstanceSpec> = {}): Promise<Instance> {
    await c.client.create('Instance', { metadata: { name, namespace: ns() }, spec: vmSpec(extra) });
    return waitRunning(name);
  }
  /** What the instance and its WorkItems say, for failure messages. */
  async function explain(name: string): Promise<string> {
    const wis = (await workItems(name)).map((w) => ({ node: w.spec.nodeName, migration: w.spec.instance?.migration, deleting: !!w.metadata.deletionTimestamp, status: w.status }));
    return JSON.stringify({ status: (await get(name))?.status, workItems: wis }, null, 1);
  }
  async function until(name: string, what: string, probe: (vm: Instance | undefined) => boolean, ms = 60_000): Promise<Instance> {
    let vm: Instance | undefined;
    try {
      await eventually(what, async () => probe((vm = await get(name))), ms, 100);
    } catch (err) {
      throw new Error(`${(err as Error).message}\n${await explain(name)}`);
    }
    return vm!;
  }
  async function waitRunning(name: string, node?: string): Promise<Instance> {
    return until(name, `${name} Running${node ? ` on ${node}` : ''}`, (vm) => {
      const ready = vm?.status?.conditions?.find((x) => x.type === 'Ready')?.status === 'True';
      return vm?.status?.phase === 'Running' && ready && (!node || vm.status.nodeName === node);
    });
  }
  /** Keeps a copy of a console log while it exists (the source's goes with its WorkItem after a migration). */
  function tail(file: string): { text(): string; stop(): void } {
    let text = '';
    const timer = setInterval(() => {
      if (fs.existsSync(file)) text = fs.readFileSync(file, 'utf8');
    }, 20);
    return { text: () => text, stop: () => clearInterval(timer) };
  }
  async function deleteVm(name: string): Promise<void> {
    await c.client.delete('Instance', ns(), name);
    await eventually(`${name} gone`, async () => !(await get(name)) && qemuPids(ns(), name).length === 0, 60_000, 200);
  }
  async function migrate(name: string, to: string, extra: string[] = []) {
    return c.cairn(['migrate', 'instance', name, '--to', to, '--wait', '--timeout', '2m', ...extra]);
  }

  before(async () => {
    testGuest();
    c = await startTestCluster({ agents: NODES });
  });
  after(async () => {
    for (const n of ['vm1', 'vm2', 'vm3', 'vm4', 'vm5', 'vm6']) for (const pid of qemuPids(ns(), n)) process.kill(pid, 'SIGKILL');
    for (const n of NODES) if (c) killGlusterUnder(path.join(c.dir, 'agents', n));
    await c?.cleanup();
  });

  it('boots the test guest to Ready within 15 s, shows node and accelerator, powers it down, and deletes every trace', async () => {
    const t0 = Date.now();
    const vm = await createVm('vm1');
    expect(Date.now() - t0).to.be.below(15_000);
    const node = vm.status!.nodeName!;
    expect(vm.status!.qemu).to.include({ accelerator: 'tcg', qmpState: 'running' });
    expect(qemuPids(ns(), 'vm1')).to.deep.equal([vm.status!.pid]);
    const table = (await c.cairn(['get', 'instances'])).stdout;
    expect(table).to.match(new RegExp(`vm1\\s.*${node}.*tcg`));

    await c.client.patch('Instance', ns(), 'vm1', { spec: { runState: 'Stopped' } });
    await eventually('vm1 Stopped', async () => (await get('vm1'))?.status?.phase === 'Stopped', 30_000, 200);
    expect(qemuPids(ns(), 'vm1')).to.deep.equal([]);

    await deleteVm('vm1');
    const dir = path.join(c.dir, 'agents', node, 'instances', ns(), 'vm1');
    expect(fs.existsSync(dir), dir).to.equal(false);
    expect(fs.existsSync(path.join(c.dir, 'agents', node, 'fencing', ns(), 'vm1.deadline'))).to.equal(false);
  });

  it('keeps the VM running when its agent is killed with SIGKILL; the restarted agent re-adopts the same qemu', async () => {
    const vm = await createVm('vm2');
    const node = vm.status!.nodeName!;
    const pid = vm.status!.pid!;
    await c.agents.get(node)!.kill9();
    await new Promise((r) => setTimeout(r, 1000));
    expect(qemuPids(ns(), 'vm2')).to.deep.equal([pid]);
    await c.startAgent(node);
    await eventually('the WorkItem reconciled by the new agent', async () => {
      const [w] = await workItems('vm2');
      return Date.parse(w?.status?.conditions?.find((x) => x.type === 'Ready')?.lastTransitionTime ?? '0') >= 0 && (await get('vm2'))?.status?.pid === pid;
    }, 30_000, 200);
    const seen = Date.now();
    await eventually('a few seconds under the new agent', () => Date.now() - seen > 3000, 10_000);
    expect(qemuPids(ns(), 'vm2')).to.deep.equal([pid]);
    expect((await get('vm2'))!.status!.phase).to.equal('Running');
  });

  it('live-migrates a running VM: the heartbeat goes on without a reboot, one qemu runs the guest at any moment, figures in status', async () => {
    const vm = await get('vm2');
    const from = vm!.status!.nodeName!;
    const to = NODES.find((n) => n !== from)!;
    const samples: number[] = [];
    const sampler = setInterval(() => samples.push(qemuPids(ns(), 'vm2').length), 25);
    const leases = loadKubeConfig({ kubeconfig: c.kubeconfig }).makeApiClient(CoordinationV1Api);
    const holders: string[] = [];
    let sampling = true;
    const leaseSampler = (async () => {
      while (sampling) {
        const l = await leases.readNamespacedLease({ namespace: ns(), name: 'instance-vm2' });
        if (holders.at(-1) !== (l.spec?.holderIdentity ?? '')) holders.push(l.spec?.holderIdentity ?? '');
        await new Promise((r) => setTimeout(r, 10));
      }
    })();
    const sourceLog = tail(consoleLog(from, 'vm2'));
    const res = await migrate('vm2', to);
    clearInterval(sampler);
    sourceLog.stop();
    sampling = false;
    await leaseSampler;
    // The fencing lease goes straight from the source to the target: never free, never back.
    expect(holders).to.deep.equal([from, to]);
    expect(res.code, `${res.stdout}${res.stderr}${await explain('vm2')}`).to.equal(0);
    const after = await waitRunning('vm2', to);
    expect(after.status!.migration).to.include({ phase: 'Completed', sourceNode: from, targetNode: to });
    expect(after.status!.migration!.downtimeMs).to.be.a('number');
    expect(after.status!.migration!.totalTimeMs).to.be.a('number');
    expect(qemuPids(ns(), 'vm2')).to.deep.equal([after.status!.pid]);
    expect(Math.max(...samples)).to.be.at.most(2); // the paused target exists while the source runs
    await eventually('heartbeats on the target', () => heartbeats(consoleLog(to, 'vm2')).length >= 3, 15_000);
    const src = heartbeatsIn(sourceLog.text());
    const dst = heartbeats(consoleLog(to, 'vm2'));
    // No reboot (uptime and sequence go on) and no overlap (every source beat precedes every target beat).
    expect(dst[0]!.seq).to.equal(src.at(-1)!.seq + 1);
    expect(dst[0]!.uptime).to.be.greaterThan(src.at(-1)!.uptime);
    expect(fs.existsSync(path.dirname(consoleLog(from, 'vm2')))).to.equal(false);
    await deleteVm('vm2');
  });

  it('rolls a migration back when its destination (agent and qemu) is killed mid-way: the VM runs on the source, with a MigrationFailed condition', async () => {
    const vm = await createVm('vm4', { qemu: { ...vmSpec().qemu, migration: { bandwidthMiBps: 2, timeoutSeconds: 120 } } });
    const from = vm.status!.nodeName!;
    const pid = vm.status!.pid!;
    const to = NODES.find((n) => n !== from)!;
    await c.client.patch('Instance', ns(), 'vm4', { spec: { migrateTo: to } });
    await until('vm4', 'transferring', (v) => v?.status?.migration?.phase === 'Transferring');
    // The destination machine dies: its agent and its qemu, both SIGKILLed.
    const targetPid = qemuPids(ns(), 'vm4').find((p) => p !== pid)!;
    await c.agents.get(to)!.kill9();
    process.kill(targetPid, 'SIGKILL');
    await until('vm4', 'migration Failed', (v) => v?.status?.migration?.phase === 'Failed');
    const failed = (await get('vm4'))!;
    const cond = failed.status!.conditions!.find((x) => x.type === 'MigrationFailed');
    expect(cond, JSON.stringify(failed.status)).to.include({ status: 'True' });
    expect(cond!.reason).to.be.oneOf(['TargetFailed', 'SourceFailed']);
    expect(cond!.message).to.have.length.greaterThan(10);
    const running = await waitRunning('vm4', from);
    expect(running.status!.pid).to.equal(pid);
    const beats = heartbeats(consoleLog(from, 'vm4')).length;
    await eventually('heartbeats go on on the source', () => heartbeats(consoleLog(from, 'vm4')).length > beats + 2, 15_000);
    expect(qemuPids(ns(), 'vm4')).to.deep.equal([pid]);
    await c.startAgent(to);
    await eventually('the dead target\'s WorkItem cleaned up by its restarted agent', async () => (await workItems('vm4')).length === 1, 30_000, 200);
    await deleteVm('vm4');
  });

  describe('with its disk on a gluster volume (issue 14)', () => {
    /** The VM's disk image inside the volume, seen through a node's mount. */
    const sharedDisk = (node: string) => path.join(c.dir, 'agents', node, 'mounts', ns(), 'gdata', 'disk.img');
    const diskSeq = (file: string) => Number(/CAIRN-DISK seq=(\d+)/.exec(fs.readFileSync(file).subarray(512, 1024).toString())?.[1] ?? 0);

    before(async () => {
      await c.client.create('Volume', { metadata: { name: 'gdata', namespace: ns() }, spec: { size: '64Mi', replicas: 3, driver: 'gluster' } });
      await eventually('gluster volume Ready', async () => (await c.client.get('Volume', ns(), 'gdata'))?.status?.phase === 'Ready', 60_000, 200);
    });

    it('live-migrates without a storage mirror: no reboot, and the guest goes on writing the same disk image', async () => {
      const vm = await createVm('vm6', { volumes: [{ name: 'data', volumeName: 'gdata' }] });
      const from = vm.status!.nodeName!;
      await eventually('the guest wrote its disk', () => fs.readFileSync(consoleLog(from, 'vm6'), 'utf8').includes('CAIRN-DISK-WRITTEN'), 15_000);
      const to = NODES.find((n) => n !== from)!;
      const sourceLog = tail(consoleLog(from, 'vm6'));
      const res = await migrate('vm6', to);
      sourceLog.stop();
      expect(res.code, `${res.stdout}${res.stderr}${await explain('vm6')}`).to.equal(0);
      await waitRunning('vm6', to);
      const migrated = (await get('vm6'))!.status!.migration!;
      expect(migrated.phase).to.equal('Completed');
      await eventually('heartbeats on the target', () => heartbeats(consoleLog(to, 'vm6')).length >= 3, 15_000);
      const src = heartbeatsIn(sourceLog.text());
      const dst = heartbeats(consoleLog(to, 'vm6'));
      expect(dst[0]!.seq, 'no reboot').to.equal(src.at(-1)!.seq + 1);
      expect(fs.readFileSync(consoleLog(to, 'vm6'), 'utf8')).to.not.include('CAIRN-DISK-FOUND');
      const disk = fs.readFileSync(sharedDisk(to));
      expect(disk.subarray(1024 * 1024, 1024 * 1024 + 64).toString()).to.match(/^cairn-test-pattern-/);
      await eventually('the guest goes on writing the image on the target', () => diskSeq(sharedDisk(to)) > src.at(-1)!.seq, 15_000);
    });

    it('fails over from a dead node, only after its fencing lease expired: the guest boots elsewhere and finds on its disk what it wrote before', async () => {
      const lost = (await get('vm6'))!.status!.nodeName!;
      await eventually('heartbeats', () => heartbeats(consoleLog(lost, 'vm6')).length >= 3, 15_000);
      const lastBeat = heartbeats(consoleLog(lost, 'vm6')).at(-1)!.seq;
      const leases = loadKubeConfig({ kubeconfig: c.kubeconfig }).makeApiClient(CoordinationV1Api);
      await c.agents.get(lost)!.kill9();
      for (const pid of qemuPids(ns(), 'vm6')) process.kill(pid, 'SIGKILL');
      killGlusterUnder(path.join(c.dir, 'agents', lost));
      const lease = await leases.readNamespacedLease({ namespace: ns(), name: 'instance-vm6' });
      const expiry = new Date(lease.spec!.renewTime as unknown as string).getTime() + lease.spec!.leaseDurationSeconds! * 1000;
      const moved = await until('vm6', 'vm6 Running elsewhere', (v) => v?.status?.phase === 'Running' && v.status.nodeName !== lost, 90_000);
      expect(Date.parse(moved.status!.startedAt!), 'started only after the dead node\'s claim expired').to.be.at.least(expiry - 1000);
      expect(qemuPids(ns(), 'vm6')).to.have.length(1);
      const log = consoleLog(moved.status!.nodeName!, 'vm6');
      await eventually('the guest printed what its disk held', () => /CAIRN-DISK-FOUND CAIRN-DISK seq=\d+/.test(fs.readFileSync(log, 'utf8')), 30_000);
      const found = Number(/CAIRN-DISK-FOUND CAIRN-DISK seq=(\d+)/.exec(fs.readFileSync(log, 'utf8'))![1]);
      // The last heartbeat printed may not have reached the disk before the kill; the one before it had.
      expect(found, 'the heartbeat sector the guest wrote before its node died').to.be.at.least(lastBeat - 1);
      await c.startAgent(lost);
      await deleteVm('vm6');
      await c.client.delete('Volume', ns(), 'gdata');
      await eventually('gluster volume gone', async () => !(await c.client.get('Volume', ns(), 'gdata')), 60_000, 200);
    });
  });
});

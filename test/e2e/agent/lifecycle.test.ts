/**
 * `cairn agent` as a real process against a real apiserver and etcd: it
 * joins (a Ready Node with the machine's capacity, a heartbeat Lease that
 * expires when the agent stops renewing), runs a process instance from a
 * WorkItem and stops it when the WorkItem goes, keeps file replicas at
 * their size (create, grow, refuse with NoSpace leaving nothing behind),
 * and reports real figures on /status and /metrics.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseQuantity } from '../../../api/quantity.js';
import { AGENT_FINALIZER } from '../../../api/names.js';
import { eventually, sleep } from '../../support/eventually.js';
import { alive, copiesOf, monitorJson, monitorText, type AgentProcess } from '../../support/agent-process.js';
import { tag, instanceWorkItem, readyCondition, renewMs, replicaWorkItem, tickCommand, useAgentE2E } from './harness.js';

const MiB = 2 ** 20;

describe('cairn agent end to end: join, run, volumes, monitoring', function () {
  this.timeout(60_000);
  const e2e = useAgentE2E();
  const ns = 'e2e-life';
  const node = 'node-a';
  let dataDir: string;
  let agent: AgentProcess;

  before(async function () {
    this.timeout(40_000);
    await e2e.createCluster(ns);
    dataDir = e2e.tmp('life');
    agent = await e2e.startAgent({ cluster: ns, nodeName: node, dataDir });
  });

  describe('joining', () => {
    it('creates a Ready Node with the capacity of this machine', async () => {
      await eventually('Node Ready', async () => (await e2e.client.get('Node', ns, node))?.status?.phase === 'Ready', 15_000, 100);
      const n = (await e2e.client.get('Node', ns, node))!;
      const s = n.status!;
      expect(s.conditions?.find((c) => c.type === 'Ready')?.status).to.equal('True');
      expect(s.capacity?.cpus).to.equal(os.availableParallelism());
      expect(parseQuantity(s.capacity!.memory!)).to.be.within(os.totalmem() - MiB, os.totalmem());
      const st = fs.statfsSync(dataDir);
      expect(parseQuantity(s.capacity!.storage!)).to.be.within(st.bavail * st.bsize - 2 ** 30, st.bavail * st.bsize + 2 ** 30);
      expect(s.allocatable).to.deep.equal(s.capacity);
      expect(s.dataDir).to.equal(path.resolve(dataDir));
      expect(s.nodeInfo?.bootID).to.equal(fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim());
      expect(s.drivers?.map((d) => d.name)).to.include.members(['process', 'file']);
      expect((await monitorText(agent, '/readyz')).status).to.equal(200);
    });

    it('renews its node Lease, which expires once the agent stops renewing and comes back when it resumes', async function () {
      this.timeout(30_000);
      const name = `node-${node}`;
      const first = await e2e.lease(ns, name);
      expect(first?.spec?.holderIdentity).to.equal(node);
      expect(first?.spec?.leaseDurationSeconds).to.equal(10);
      await eventually('heartbeat renewTime advancing', async () => renewMs(await e2e.lease(ns, name)) > renewMs(first), 5_000, 100);

      process.kill(agent.pid, 'SIGSTOP');
      try {
        await sleep(500); // a renewal in flight when the agent froze still lands
        const frozen = renewMs(await e2e.lease(ns, name));
        await sleep(10_500);
        const later = await e2e.lease(ns, name);
        expect(renewMs(later), 'renewTime stopped advancing').to.equal(frozen);
        expect(frozen + later!.spec!.leaseDurationSeconds! * 1000, 'the lease has expired').to.be.below(Date.now());
      } finally {
        process.kill(agent.pid, 'SIGCONT');
      }
      const resumed = Date.now();
      await eventually('heartbeat renewed again', async () => renewMs(await e2e.lease(ns, name)) >= resumed - 1000, 5_000, 100);
    });
  });

  describe('a process instance', () => {
    const inst = 'ticker';
    const wiName = `${inst}.${node}`;
    let pid: number;

    it('runs the command of its WorkItem: Done, Ready=True, the pid alive, its output in the log', async () => {
      await e2e.client.create('WorkItem', instanceWorkItem(ns, node, inst, tickCommand(e2e.marker, inst)));
      const w = await e2e.waitWorkItem(ns, wiName, 'Done', (x) => x.status?.phase === 'Done' && !!x.status.instance?.pid);
      pid = w.status!.instance!.pid!;
      e2e.trackGroup(pid);
      expect(readyCondition(w)?.status).to.equal('True');
      expect(w.status!.observedGeneration).to.equal(w.metadata.generation);
      expect(w.status!.instance!.state).to.equal('Running');
      expect(w.status!.instance!.ready).to.equal(true);
      expect(alive(pid)).to.equal(true);
      expect(copiesOf(tag(e2e.marker, inst))).to.have.length(1);
      const log = w.status!.instance!.logPath!;
      expect(log.startsWith(path.resolve(dataDir))).to.equal(true);
      await eventually('ticks in the log', () => (fs.readFileSync(log, 'utf8').match(/tick/g)?.length ?? 0) >= 2, 5_000);
      const lease = await e2e.lease(ns, `instance-${inst}`);
      expect(lease?.spec?.holderIdentity, 'fencing lease held by the node').to.equal(node);
    });

    it('/status and /metrics report it with real figures', async () => {
      const status = await monitorJson(agent, '/status');
      expect(status.node).to.equal(node);
      expect(status.cluster).to.equal(ns);
      expect(status.capacity.cpus).to.equal(os.availableParallelism());
      const entry = status.instances.find((i: { name: string }) => i.name === inst);
      expect(entry, JSON.stringify(status.instances)).to.include({ pid, state: 'Running', phase: 'Done', workItem: wiName });
      expect(entry.uptimeSeconds).to.be.a('number').and.at.least(0);
      expect(status.allocated.cpus).to.equal(1);
      expect(status.allocated.memoryBytes).to.equal(64 * MiB);
      expect(status.operationStats.succeeded).to.be.at.least(1);
      const metrics = (await monitorText(agent, '/metrics')).text;
      expect(metrics).to.match(/^cairn_agent_workitems\{phase="Done"\} 1$/m);
      expect(metrics).to.match(/^cairn_agent_operation_duration_seconds_count\{verb="ensure",result="success"\} [1-9]\d*$/m);
      expect(metrics).to.match(/^cairn_agent_instance_restarts 0$/m);
      expect((await monitorText(agent, '/healthz')).status).to.equal(200);
    });

    it('stops when its WorkItem is deleted, then drops the finalizer so the WorkItem goes', async () => {
      const before = await e2e.workItem(ns, wiName);
      expect(before?.metadata.finalizers).to.include(AGENT_FINALIZER);
      await e2e.client.delete('WorkItem', ns, wiName);
      await eventually('WorkItem gone', async () => (await e2e.workItem(ns, wiName)) === undefined, 15_000, 100);
      expect(alive(pid), 'instance process stopped').to.equal(false);
      expect(copiesOf(tag(e2e.marker, inst))).to.have.length(0);
      expect(fs.existsSync(path.join(dataDir, 'instances', ns, inst)), 'instance dir removed').to.equal(false);
      // Released, not deleted: a node may not delete leases; the controller deletes it with its Instance.
      expect((await e2e.lease(ns, `instance-${inst}`))?.spec?.holderIdentity, 'fencing lease released').to.equal(undefined);
    });
  });

  describe('file volume replicas', () => {
    const vol = 'data';
    const wiName = `${vol}.r0.${node}`;
    const file = () => path.join(dataDir, 'volumes', ns, `${vol}-0.img`);
    const leftovers = () => fs.readdirSync(path.join(dataDir, 'volumes', ns)).filter((n) => n.includes('.tmp-'));

    it('creates a preallocated 64Mi replica of exactly that size', async () => {
      await e2e.client.create('WorkItem', replicaWorkItem(ns, node, vol, { size: '64Mi', allocation: 'preallocated' }));
      const w = await e2e.waitWorkItem(ns, wiName, 'Done', (x) => x.status?.phase === 'Done');
      expect(readyCondition(w)?.status).to.equal('True');
      expect(w.status!.volumeReplica).to.include({ path: file(), sizeBytes: 64 * MiB, size: '64Mi' });
      const st = fs.statSync(file());
      expect(st.size).to.equal(64 * MiB);
      expect(st.blocks * 512, 'preallocated').to.be.at.least(64 * MiB);
    });

    it('grows it to 128Mi when spec.volumeReplica.size grows', async () => {
      const w0 = (await e2e.workItem(ns, wiName))!;
      await e2e.client.patch('WorkItem', ns, wiName, { spec: { volumeReplica: { size: '128Mi' } } });
      const w = await e2e.waitWorkItem(ns, wiName, 'Done at generation 2', (x) => x.status?.phase === 'Done' && x.status.observedGeneration === w0.metadata.generation! + 1);
      expect(w.status!.volumeReplica!.sizeBytes).to.equal(128 * MiB);
      expect(fs.statSync(file()).size).to.equal(128 * MiB);
      expect(fs.statSync(file()).blocks * 512).to.be.at.least(128 * MiB);
    });

    it('refuses to grow beyond the free space: Failed, NoSpace with a hint, the file unchanged', async () => {
      const w0 = (await e2e.workItem(ns, wiName))!;
      await e2e.client.patch('WorkItem', ns, wiName, { spec: { volumeReplica: { size: '1000Ti' } } });
      const w = await e2e.waitWorkItem(ns, wiName, 'Failed', (x) => x.status?.phase === 'Failed' && x.status.observedGeneration === w0.metadata.generation! + 1);
      expect(w.status!.lastError?.reason).to.equal('NoSpace');
      expect(w.status!.lastError?.hint).to.be.a('string').and.match(/free space/);
      expect(readyCondition(w)).to.include({ status: 'False', reason: 'NoSpace' });
      expect(fs.statSync(file()).size).to.equal(128 * MiB);
      expect(leftovers()).to.deep.equal([]);
    });

    it('a new replica larger than the free space fails with NoSpace and leaves no file behind', async () => {
      const big = 'huge';
      await e2e.client.create('WorkItem', replicaWorkItem(ns, node, big, { size: '1000Ti', allocation: 'preallocated' }));
      const w = await e2e.waitWorkItem(ns, `${big}.r0.${node}`, 'Failed', (x) => x.status?.phase === 'Failed');
      expect(w.status!.lastError?.reason).to.equal('NoSpace');
      expect(w.status!.lastError?.hint).to.be.a('string').and.not.empty;
      expect(fs.existsSync(path.join(dataDir, 'volumes', ns, `${big}-0.img`))).to.equal(false);
      expect(leftovers()).to.deep.equal([]);
      // Retried with exponential backoff, not in a hot loop.
      const before = (await monitorJson(agent, '/status')).operationStats.failed.NoSpace;
      await sleep(2_500);
      const retries = (await monitorJson(agent, '/status')).operationStats.failed.NoSpace - before;
      expect(retries, 'NoSpace retries of two WorkItems within 2.5 s').to.be.at.most(6);
      const metrics = (await monitorText(agent, '/metrics')).text;
      expect(metrics).to.match(/^cairn_agent_operation_failures_total\{reason="NoSpace"\} [1-9]\d*$/m);
      // Both failing WorkItems are retried with backoff; a retry shows InProgress until it fails again.
      const byPhase = Object.fromEntries([...metrics.matchAll(/^cairn_agent_workitems\{phase="(\w+)"\} (\d+)$/gm)].map((m) => [m[1], Number(m[2])]));
      expect((byPhase.Failed ?? 0) + (byPhase.InProgress ?? 0), JSON.stringify(byPhase)).to.equal(2);
      expect(byPhase.Done ?? 0).to.equal(0);
      const status = await monitorJson(agent, '/status');
      const entry = status.volumes.find((v: { volume: string }) => v.volume === vol);
      expect(entry).to.include({ sizeBytes: 128 * MiB, path: file() });
      expect(status.operationStats.failed.NoSpace).to.be.at.least(2);
    });

    it('deleting replica WorkItems removes the files and the finalizers', async () => {
      await e2e.client.delete('WorkItem', ns, wiName);
      await e2e.client.delete('WorkItem', ns, `huge.r0.${node}`);
      await eventually('replica WorkItems gone', async () => (await e2e.workItem(ns, wiName)) === undefined && (await e2e.workItem(ns, `huge.r0.${node}`)) === undefined, 15_000, 100);
      expect(fs.existsSync(file())).to.equal(false);
      expect(leftovers()).to.deep.equal([]);
    });
  });
});

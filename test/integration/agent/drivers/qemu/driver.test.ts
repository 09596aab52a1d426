/**
 * The qemu driver with real qemu processes under TCG and the project's test
 * guest, called in-process (no agent): boot to the readiness marker, status
 * through QMP, re-adoption from state.json, a graceful stop, removal leaving
 * nothing behind, and a live migration between two nodes' data dirs with an
 * attached disk mirrored over NBD.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import type { WorkItem, WorkItemMigrationSpec } from '../../../../../api/workitem.js';
import type { Driver, Observation, OperationContext } from '../../../../../agent/drivers/driver.js';
import { qemuDriver } from '../../../../../agent/drivers/qemu/driver.js';
import { killMarked, processesWith } from '../../../../support/agent-process.js';
import { eventually } from '../../../../support/eventually.js';
import { heartbeats, qemuPids, testGuest } from '../../../../support/test-guest.js';
import { directContext, tempDir } from '../../helpers.js';

function vmItem(name: string, node: string, extra: Partial<NonNullable<WorkItem['spec']['instance']>> = {}): WorkItem {
  const g = testGuest();
  return {
    metadata: { namespace: 'c1', name: `wi-${name}-${node}` },
    spec: {
      nodeName: node,
      type: 'InstanceRuntime',
      owner: { kind: 'Instance', name },
      instance: { driver: 'qemu', runState: 'Running', cpus: 1, memory: '128Mi', terminationGracePeriodSeconds: 1, qemu: { accelerator: 'tcg', kernel: g.kernel, initrd: g.initrd, cmdline: g.cmdline, readinessMarker: g.marker }, ...extra },
    },
  };
}

/** observe → ensure until `done` holds for the observation. */
async function drive(driver: Driver, item: WorkItem, ctx: OperationContext, done: (o: Observation) => boolean, ms = 30_000): Promise<Observation> {
  const deadline = Date.now() + ms;
  for (;;) {
    let obs = await driver.observe(item, ctx);
    if (!obs.converged && obs.action) obs = await driver.ensure(item, ctx);
    if (done(obs)) return obs;
    if (Date.now() > deadline) throw new Error(`not done within ${ms} ms: ${JSON.stringify(obs)}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('qemu driver (real qemu, TCG)', function () {
  this.timeout(120_000);
  let dirA: string;
  let dirB: string;
  const ctxA = () => directContext(dirA, undefined, { nodeName: 'a', accelerator: 'tcg' });
  const ctxB = () => directContext(dirB, undefined, { nodeName: 'b', accelerator: 'tcg' });

  before(() => testGuest());
  beforeEach(() => {
    dirA = tempDir('qemu-a');
    dirB = tempDir('qemu-b');
  });
  afterEach(async () => {
    // The shims go too, and are waited for: a shim outliving its qemu writes the exit file into the
    // instance's directory, which once raced the removal below (ENOTEMPTY).
    for (const dir of [dirA, dirB]) killMarked(dir);
    try {
      await eventually('no process of the test left', () => processesWith(dirA).length + processesWith(dirB).length === 0, 10_000);
    } finally {
      fs.rmSync(dirA, { recursive: true, force: true });
      fs.rmSync(dirB, { recursive: true, force: true });
    }
  });

  it('boots the test guest to Ready, re-adopts it, powers it down and removes every trace', async () => {
    const item = vmItem('vm1', 'a');
    const t0 = Date.now();
    const ready = await drive(qemuDriver, item, ctxA(), (o) => o.instance?.ready === true, 20_000);
    expect(Date.now() - t0).to.be.below(15_000);
    expect(ready.instance!.qemu).to.include({ accelerator: 'tcg', qmpState: 'running' });
    const pid = ready.instance!.pid!;
    expect(qemuPids('c1', 'vm1')).to.deep.equal([pid]);
    const again = await qemuDriver.ensure(item, ctxA());
    expect(again.instance!.pid).to.equal(pid);

    // A restart (a new restartToken) stops the old VM over QMP: its sockets were once removed before the
    // stop, which then could only SIGKILL it, the power cut of every restart.
    const restartedItem = { ...item, spec: { ...item.spec, instance: { ...item.spec.instance!, restartToken: 'again' } } };
    const restarted = await drive(qemuDriver, restartedItem, ctxA(), (o) => o.instance?.ready === true && o.instance.pid !== pid, 30_000);
    expect(restarted.instance!.lastSignal, 'the old VM was cut off').to.not.equal('SIGKILL');
    expect(qemuPids('c1', 'vm1')).to.deep.equal([restarted.instance!.pid]);

    const stopped = await drive(qemuDriver, { ...restartedItem, spec: { ...item.spec, instance: { ...item.spec.instance!, runState: 'Stopped' } } }, ctxA(), (o) => o.converged);
    expect(stopped.instance!.state).to.equal('Stopped');
    // It shut down when asked (ACPI): no signal ended it, and the record says none.
    expect(stopped.instance).to.include({ lastExitCode: 0 }).and.not.have.property('lastSignal');
    expect(qemuPids('c1', 'vm1')).to.deep.equal([]);
    await qemuDriver.remove(item, ctxA());
    expect(fs.readdirSync(path.join(dirA, 'instances', 'c1'))).to.deep.equal([]);
  });

  it('migrates a running guest with a disk to another node: heartbeat continues without a reboot, disk data follows', async () => {
    const diskA = path.join(dirA, 'disk.img');
    const diskB = path.join(dirB, 'disk.img');
    for (const d of [diskA, diskB]) fs.writeFileSync(d, Buffer.alloc(0)), fs.truncateSync(d, 16 * 1024 * 1024);
    const volumes = (p: string) => [{ name: 'data', volumeName: 'data', path: p }];
    const source = vmItem('vm2', 'a', { volumes: volumes(diskA) });
    await drive(qemuDriver, source, ctxA(), (o) => o.instance?.ready === true, 20_000);
    const logA = path.join(dirA, 'instances/c1/vm2/console.log');
    const logB = path.join(dirB, 'instances/c1/vm2/console.log');
    await eventually('a few heartbeats', () => heartbeats(logA).length >= 3, 10_000);
    expect(fs.readFileSync(diskB).includes('cairn-test-pattern')).to.equal(false);

    const tuning = { maxDowntimeMs: 300, timeoutSeconds: 60 };
    const target = vmItem('vm2', 'b', { volumes: volumes(diskB), migration: { id: 'm1', role: 'Target', peerNodeName: 'a', ...tuning } });
    const listening = await drive(qemuDriver, target, ctxB(), (o) => o.migration?.phase === 'Listening');
    const m: WorkItemMigrationSpec = { id: 'm1', role: 'Source', peerNodeName: 'b', targetAddress: listening.migration!.address!, targetPort: listening.migration!.port!, targetNbdPort: listening.migration!.nbdPort!, ...tuning };
    const src = { ...source, spec: { ...source.spec, instance: { ...source.spec.instance!, migration: m } } };
    const done = await drive(qemuDriver, src, ctxA(), (o) => o.migration?.phase === 'Completed' || o.migration?.phase === 'Failed', 60_000);
    expect(done.migration, JSON.stringify(done)).to.include({ phase: 'Completed' });
    expect(qemuPids('c1', 'vm2')).to.have.length(1);
    const resumed = await drive(qemuDriver, target, ctxB(), (o) => o.instance?.ready === true);
    expect(resumed.migration).to.include({ phase: 'Completed' });

    const before = heartbeats(logA);
    await eventually('heartbeats on the target', () => heartbeats(logB).length >= 3, 10_000);
    const after = heartbeats(logB);
    expect(after[0]!.seq).to.be.greaterThan(before.at(-1)!.seq);
    expect(after[0]!.uptime).to.be.greaterThan(before.at(-1)!.uptime);
    const b = fs.readFileSync(diskB);
    expect(b.subarray(0, 512).toString()).to.match(/^CAIRN-DISK boot uptime=/);
    expect(b.subarray(1024 * 1024, 1024 * 1024 + 64).toString()).to.match(/^cairn-test-pattern-/);
    console.log(`      downtime ${done.migration!.downtimeMs} ms, total ${done.migration!.totalTimeMs} ms`);
  });
});

/**
 * The process driver with real processes: detached instances that outlive
 * their worker, re-adoption by (pid, start time, boot id), stale state
 * files, stop escalation, restart counting with exit codes and backoff, and
 * cgroup limits in a delegated directory.
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import type { WorkItem } from '../../../../../api/workitem.js';
import { fenceDeadlinePath } from '../../../../../agent/drivers/paths.js';
import { processDriver } from '../../../../../agent/drivers/process/driver.js';
import { writeState, type ProcessState } from '../../../../../agent/drivers/process/state.js';
import { bootId, readProcStat } from '../../../../../agent/drivers/process/proc.js';
import { OperationError } from '../../../../../agent/operations/errors.js';
import { OperationRunner } from '../../../../../agent/operations/runner.js';
import { parseOperationId } from '../../../../../agent/operations/operation-id.js';
import { eventually } from '../../../../support/eventually.js';
import { alive, captureLog, directContext, groupCommandLines, groupMembers, instanceItem, killGroups, tempDir } from '../../helpers.js';

describe('process driver (real processes)', function () {
  this.timeout(20_000);
  let dataDir: string;
  const pgids = new Set<number>();

  beforeEach(() => (dataDir = tempDir('process')));
  afterEach(() => {
    killGroups(pgids);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  const env = () => ({ dataDir, nodeName: 'n1', now: Date.now });
  const logOf = (name: string) => path.join(dataDir, 'instances', 'c1', name, 'console.log');
  async function ensure(item: WorkItem, ctx = directContext(dataDir)) {
    const obs = await processDriver.ensure(item, ctx);
    if (obs.instance?.pid) pgids.add(obs.instance.pid);
    return obs;
  }

  it('starts the command detached, logging to console.log, outliving its worker, and re-adopts it', async () => {
    const runner = new OperationRunner({ dataDir, nodeName: 'n1', logger: captureLog() });
    const volume = path.join(dataDir, 'data.img');
    fs.writeFileSync(volume, '');
    const item = instanceItem('web', { command: ['sh', '-c', 'echo "hello $CAIRN_INSTANCE $CAIRN_CLUSTER $CAIRN_NODE $CAIRN_VOLUME_DATA $GREETING"; exec sleep 1000'], volumes: [{ name: 'data', volumeName: 'vol', path: volume }] });
    item.spec.instance!.process!.env = [{ name: 'GREETING', value: 'hi' }];
    const first = await runner.run({ verb: 'ensure', item, action: 'start' });
    const pid = first.observation!.instance!.pid!;
    pgids.add(pid);
    expect(first.observation).to.deep.include({ converged: true });
    expect(first.observation!.instance).to.include({ state: 'Running', ready: true, restarts: 0, logPath: logOf('web') });
    const stat = readProcStat(pid)!;
    expect([stat.session, stat.pgrp]).to.deep.equal([pid, pid]);
    // The worker is kept warm for the next operation; the instance outlives it all the same.
    const worker = parseOperationId(first.operationId)!.childPid;
    await runner.shutdown();
    await eventually('the worker to exit', () => !alive(worker), 5_000);
    expect(alive(pid)).to.equal(true);
    await eventually('the greeting in console.log', () => fs.existsSync(logOf('web')) && fs.readFileSync(logOf('web'), 'utf8').includes(`hello web c1 n1 ${volume} hi`), 5_000);

    const again = await new OperationRunner({ dataDir, nodeName: 'n1', logger: captureLog() }).run({ verb: 'ensure', item });
    expect(again.observation!.instance!.pid).to.equal(pid);
    // One command in the shim's group.
    expect(groupCommandLines(pid).filter((c) => c === 'sleep 1000')).to.have.length(1);
    expect(groupMembers(pid)).to.include(pid);
    expect((await processDriver.observe(item, env())).instance).to.include({ state: 'Running', pid });
  });

  it('keeps the instance running when the process that started it is killed with SIGKILL, and re-adopts it', async () => {
    const runnerModule = new URL('../../../../../agent/operations/runner.js', import.meta.url).href;
    const item = instanceItem('survivor', { command: ['sleep', '1000'] });
    const script = `const { OperationRunner } = await import(${JSON.stringify(runnerModule)});
      const r = new OperationRunner({ dataDir: ${JSON.stringify(dataDir)}, nodeName: 'n1', logger: { info() {}, warn() {}, error() {} } });
      const res = await r.run({ verb: 'ensure', item: ${JSON.stringify(item)} });
      process.stdout.write(String(res.observation.instance.pid) + '\\n'); setInterval(() => {}, 1000);`;
    const agent = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    const [line] = (await once(agent.stdout, 'data')) as [Buffer];
    const pid = Number(line.toString().trim());
    pgids.add(pid);
    agent.kill('SIGKILL');
    await once(agent, 'exit');
    expect(alive(pid)).to.equal(true);
    const readopted = await ensure(item);
    expect(readopted.instance).to.include({ pid, state: 'Running', restarts: 0 });
  });

  it('does not adopt a state file whose pid was recycled, is gone, or is from another boot', async () => {
    const item = instanceItem('stale', { command: ['sleep', '1000'] });
    const dir = path.join(dataDir, 'instances', 'c1', 'stale');
    fs.mkdirSync(dir, { recursive: true });
    const mine = readProcStat(process.pid)!;
    const base: ProcessState = { version: 1, pid: process.pid, startTicks: mine.startTicks, bootId: bootId(), startedAt: 0, restarts: 0, backoffCount: 0, specHash: 'x', stopped: false, limitsEnforced: false, limitsMessage: '' };
    for (const stale of [{ startTicks: mine.startTicks + 1 }, { pid: 4_000_000 }, { bootId: 'another-boot' }]) {
      writeState(dir, { ...base, ...stale });
      const obs = await processDriver.observe(item, env());
      expect(obs.instance, JSON.stringify(stale)).to.include({ state: 'Exited', ready: false });
      expect(obs.action).to.equal('recordExit');
    }
    const started = await ensure(item); // the recorded specHash differs, so no backoff: a restart at once
    expect(started.instance!.pid).to.not.equal(process.pid);
    expect(started.instance).to.include({ state: 'Running', restarts: 1 });
  });

  it('stops with SIGTERM, recording 143, and sweeps group members that outlived the shim', async () => {
    const item = instanceItem('sweep', { command: ['sh', '-c', '(trap "" TERM; exec sleep 1000) & exec sleep 1000'] });
    const pid = (await ensure(item)).instance!.pid!;
    // (The shim's fencing watchdog naps in a sleep of its own.)
    await eventually('both sleepers', () => groupCommandLines(pid).filter((c) => c === 'sleep 1000').length === 2, 5_000);
    item.spec.instance!.runState = 'Stopped';
    expect((await processDriver.observe(item, env())).action).to.equal('stop');
    const stopped = await ensure(item);
    expect(stopped.instance).to.include({ state: 'Stopped', lastExitCode: 143, lastSignal: 'SIGTERM', ready: false });
    // (A killed member is gone once reaped, a moment later on a loaded machine.)
    await eventually('no member of the group left', () => groupMembers(pid).length === 0, 2_000);
    expect(stopped.converged).to.equal(true);
  });

  it('kills what a run left behind when its command exited (such children once outlived even the instance)', async () => {
    const childPid = path.join(dataDir, 'child.pid');
    const item = instanceItem('leftover', { command: ['sh', '-c', `sleep 1000 & echo $! > ${childPid}; exit 3`], restartPolicy: 'Never' });
    await ensure(item);
    // The command has exited, leaving its child, and its shim too (which writes the exit file just before it ends).
    await eventually('the command to exit', async () => (await processDriver.observe(item, env())).action === 'recordExit', 5_000);
    const child = Number(fs.readFileSync(childPid, 'utf8'));
    expect(alive(child), 'the child before').to.equal(true);
    const ended = await ensure(item);
    expect(ended.instance).to.include({ state: 'Exited', lastExitCode: 3 });
    // (A SIGKILL takes a moment to land.)
    await eventually('the child to be killed', () => !alive(child), 2_000);
  });

  it('escalates to SIGKILL after the grace period for a process that ignores SIGTERM, and stays stopped', async () => {
    const item = instanceItem('stubborn', { command: ['sh', '-c', 'trap "" TERM; while :; do sleep 1; done'], terminationGracePeriodSeconds: 1 });
    const pid = (await ensure(item)).instance!.pid!;
    await eventually('the command to ignore SIGTERM and loop', () => groupCommandLines(pid).includes('sleep 1'), 5_000);
    item.spec.instance!.runState = 'Stopped';
    const started = Date.now();
    const stopped = await ensure(item);
    expect(Date.now() - started).to.be.within(900, 4_000);
    expect(stopped.instance).to.include({ state: 'Stopped', lastExitCode: 137, lastSignal: 'SIGKILL' });
    await eventually('no member of the group left', () => groupMembers(pid).length === 0, 2_000);
    expect(await processDriver.observe(item, env())).to.deep.include({ converged: true, message: 'stopped' });
  });

  it('stops waiting for a stop when the operation is cancelled, leaving the instance for the next operation', async () => {
    const item = instanceItem('patient', { command: ['sh', '-c', 'trap "" TERM; while :; do sleep 1; done'], terminationGracePeriodSeconds: 30 });
    const pid = (await ensure(item)).instance!.pid!;
    await eventually('the command to ignore SIGTERM and loop', () => groupCommandLines(pid).includes('sleep 1'), 5_000);
    item.spec.instance!.runState = 'Stopped';
    const controller = new AbortController();
    setTimeout(() => controller.abort(new OperationError('Cancelled', 'the WorkItem changed')), 200);
    const started = Date.now();
    await expectFailure(ensure(item, directContext(dataDir, undefined, { signal: controller.signal })), 'Cancelled', /the WorkItem changed/, false);
    expect(Date.now() - started).to.be.below(2_000);
    expect(alive(pid)).to.equal(true);
    expect((await processDriver.observe(item, env())).action).to.equal('stop');
  });

  it('counts restarts by exit status under OnFailure, with backoff on an injected clock', async () => {
    const clock = { now: 1_000_000 };
    const ctx = directContext(dataDir, clock);
    const cenv = { dataDir, nodeName: 'n1', now: () => clock.now };
    const item = instanceItem('crashy', { command: ['sh', '-c', 'exit 3'], restartPolicy: 'OnFailure' });
    const exited = async () => {
      await eventually('the exit', async () => (await processDriver.observe(item, cenv)).action === 'recordExit', 5_000);
      return processDriver.observe(item, cenv);
    };
    await ensure(item, ctx);
    expect((await exited()).instance).to.include({ state: 'Exited', lastExitCode: 3 });
    expect(await ensure(item, ctx)).to.deep.include({ converged: true, requeueAfterMs: 1000 });
    clock.now += 1000;
    expect(await processDriver.observe(item, cenv)).to.deep.include({ action: 'restart' });
    expect((await ensure(item, ctx)).instance!.restarts).to.equal(1);
    await exited();
    expect((await ensure(item, ctx)).instance).to.include({ state: 'BackOff', restarts: 1 });
    expect((await processDriver.observe(item, cenv)).requeueAfterMs).to.equal(2000);

    item.spec.instance!.process!.command = ['true'];
    expect((await ensure(item, ctx)).instance!.restarts).to.equal(2);
    await exited();
    const done = await ensure(item, ctx);
    expect(done).to.deep.include({ converged: true });
    expect(done.instance).to.include({ state: 'Exited', lastExitCode: 0, restarts: 2 });
  });

  it('counts the backoff from the exit itself, not from when the agent noticed it', async () => {
    const clock = { now: Date.now() };
    const ctx = directContext(dataDir, clock);
    const cenv = { dataDir, nodeName: 'n1', now: () => clock.now };
    const item = instanceItem('noticed-late', { command: ['sh', '-c', 'exit 3'], restartPolicy: 'OnFailure' });
    await ensure(item, ctx);
    await eventually('the exit', async () => (await processDriver.observe(item, cenv)).action === 'recordExit', 5_000);
    clock.now = Date.now() + 1500; // the agent looks 1.5 s after the exit: the first backoff (1 s) is over
    const recorded = await ensure(item, ctx);
    expect(recorded.instance, 'restarted at once: no backoff left to wait').to.include({ restarts: 1, lastExitCode: 3 });
  });

  it('restarts once when restartToken changes', async () => {
    const item = instanceItem('token', { command: ['sleep', '1000'] });
    const first = (await ensure(item)).instance!.pid!;
    await eventually('the command to run', () => groupCommandLines(first).some((c) => /^\/\S*\/sleep 1000$/.test(c)), 5_000);
    item.spec.instance!.restartToken = '2024-05-01T00:00:00Z';
    expect((await processDriver.observe(item, env())).action).to.equal('restart');
    const second = await ensure(item);
    expect(second.instance!.pid).to.not.equal(first);
    expect(second.instance).to.include({ restarts: 1, lastSignal: 'SIGTERM' });
    expect(alive(first)).to.equal(false);
    expect((await ensure(item)).instance!.pid).to.equal(second.instance!.pid);
  });

  it('leaves a running instance alone when its new spec cannot start', async () => {
    const item = instanceItem('keep', { command: ['sleep', '1000'] });
    const pid = (await ensure(item)).instance!.pid!;
    item.spec.instance!.process!.command = ['no-such-command-cairn'];
    await expectFailure(ensure(item), 'NotFound', /the command no-such-command-cairn does not exist on node n1/);
    expect((await processDriver.observe({ ...item, spec: { ...item.spec, instance: { ...item.spec.instance!, process: { command: ['sleep', '1000'] } } } }, env())).instance).to.include({ pid, state: 'Running' });
  });

  it("kills the instance when the clock passes the node's fencing deadline (the agent is gone), recording 137, and not before", async () => {
    const item = instanceItem('fenced', { command: ['sleep', '1000'] });
    const fence = fenceDeadlinePath(dataDir, 'c1');
    fs.mkdirSync(path.dirname(fence), { recursive: true });
    const deadline = Date.now() + 3000;
    fs.writeFileSync(fence, `${deadline}\n`);
    const obs = await ensure(item, directContext(dataDir, undefined, { fenceFile: fence }));
    const pid = obs.instance!.pid!;
    await new Promise((r) => setTimeout(r, 1500));
    expect(alive(pid), 'alive before the deadline').to.equal(true);
    fs.writeFileSync(fence, `${deadline + 2000}\n`); // a renewal pushes it forward
    await eventually('the watchdog to kill the group', () => groupMembers(pid).length === 0, 8_000, 20);
    expect(Date.now(), 'killed after the pushed deadline').to.be.at.least(deadline + 2000);
    expect(Date.now(), 'and soon after it').to.be.below(deadline + 2500);
    expect(fs.readFileSync(path.join(dataDir, 'instances', 'c1', 'fenced', 'exit'), 'utf8').trim()).to.equal(`${pid} 137`);
  });

  // The agent writes the deadline before it starts anything: a deadline it cannot read means the fence is lost.
  for (const [what, write] of [
    ['missing', (_f: string) => undefined],
    ['empty', (f: string) => fs.writeFileSync(f, '')],
    ['garbage', (f: string) => fs.writeFileSync(f, 'soon\n')],
    ['unreadable (a directory)', (f: string) => fs.mkdirSync(f)],
  ] as const) {
    it(`kills the instance at once when the deadline file is ${what}`, async () => {
      const item = instanceItem(`lost-${what.split(' ')[0]}`, { command: ['sleep', '1000'] });
      const fence = path.join(dataDir, 'fencing', `${what.split(' ')[0]}.deadline`);
      fs.mkdirSync(path.dirname(fence), { recursive: true });
      write(fence);
      const started = Date.now();
      const pid = (await ensure(item, directContext(dataDir, undefined, { fenceFile: fence }))).instance!.pid!;
      await eventually('the watchdog to kill the group', () => groupMembers(pid).length === 0, 3_000, 20);
      expect(Date.now() - started).to.be.below(2_000);
    });
  }

  it('starts no watchdog without a fence file (a driver run outside an agent)', async () => {
    const pid = (await ensure(instanceItem('unfenced', { command: ['sleep', '1000'] }))).instance!.pid!;
    await new Promise((r) => setTimeout(r, 500));
    expect(alive(pid)).to.equal(true);
    expect(groupCommandLines(pid).filter((c) => c.startsWith('sleep ') && !c.endsWith('1000'))).to.deep.equal([]);
  });

  it('remove stops the instance and deletes its directory', async () => {
    const item = instanceItem('gone', { command: ['sleep', '1000'] });
    const pid = (await ensure(item)).instance!.pid!;
    await eventually('the command to run', () => groupCommandLines(pid).some((c) => /^\/\S*\/sleep 1000$/.test(c)), 5_000);
    await processDriver.remove(item, directContext(dataDir));
    expect(alive(pid)).to.equal(false);
    expect(fs.existsSync(path.join(dataDir, 'instances', 'c1', 'gone'))).to.equal(false);
    await processDriver.remove(item, directContext(dataDir));
  });

  it('puts the instance in a delegated cgroup v2 directory with cpu.max and memory.max', async () => {
    const root = tempDir('cgroup');
    fs.writeFileSync(path.join(root, 'cgroup.controllers'), 'cpuset cpu io memory pids\n');
    fs.writeFileSync(path.join(root, 'cgroup.subtree_control'), '');
    fs.mkdirSync(path.join(root, 'cairn'));
    fs.writeFileSync(path.join(root, 'cairn', 'cgroup.subtree_control'), 'cpu memory');
    const log = captureLog();
    const ctx = directContext(dataDir, undefined, { cgroupRoot: root, log });
    const item = instanceItem('limited', { command: ['sleep', '1000'], cpus: 1.5, memory: '256Mi' });
    const obs = await ensure(item, ctx);
    const leaf = path.join(root, 'cairn', 'n1_c1_limited');
    expect(obs.instance!.limitsEnforced).to.equal(true);
    expect(obs.conditions?.[0]).to.include({ type: 'LimitsEnforced', status: 'True' });
    expect(fs.readFileSync(path.join(root, 'cgroup.subtree_control'), 'utf8')).to.equal('+cpu +memory');
    expect(fs.readFileSync(path.join(leaf, 'cpu.max'), 'utf8')).to.equal('150000 100000');
    expect(fs.readFileSync(path.join(leaf, 'memory.max'), 'utf8')).to.equal(String(256 * 2 ** 20));
    const procs = path.join(leaf, 'cgroup.procs');
    await eventually('the shim to join its cgroup', () => fs.existsSync(procs) && fs.readFileSync(procs, 'utf8').trim() === String(obs.instance!.pid), 5_000);
    await processDriver.remove(item, ctx);
    expect(log.lines.find((l) => l.level === 'warn')?.meta).to.include({ cgroup: leaf });
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('reports limits as not enforced when the host cgroup v2 hierarchy lacks the controllers', async () => {
    const root = tempDir('cgroup');
    fs.writeFileSync(path.join(root, 'cgroup.controllers'), 'hugetlb\n');
    const obs = await ensure(instanceItem('unlimited', { command: ['sleep', '1000'] }), directContext(dataDir, undefined, { cgroupRoot: root }));
    expect(obs.instance!.limitsEnforced).to.equal(false);
    expect(obs.conditions?.[0]).to.include({ type: 'LimitsEnforced', status: 'False', reason: 'CgroupUnavailable' });
    expect(obs.conditions?.[0]?.message).to.match(/does not offer the cpu, memory controller/);
    fs.rmSync(root, { recursive: true, force: true });
  });

  it('refuses a missing working directory or volume replica (NotFound) and a bad memory quantity (InvalidSpec), with hints', async () => {
    const cwd = instanceItem('nocwd', { command: ['true'] });
    cwd.spec.instance!.process!.workingDir = '/no/such/dir';
    await expectFailure(ensure(cwd), 'NotFound', /working directory \/no\/such\/dir/);
    const vol = instanceItem('novol', { command: ['true'], volumes: [{ name: 'data', volumeName: 'vol', replicaIndex: 2 }] });
    await expectFailure(ensure(vol), 'NotFound', /vol-2\.img of volume data is not on node n1/);
    await expectFailure(ensure(instanceItem('nomem', { command: ['true'], memory: 'lots' })), 'InvalidSpec', /memory of instance nomem: invalid quantity "lots"/);
  });
});

async function expectFailure(p: Promise<unknown>, reason: string, message: RegExp, withHint = true): Promise<void> {
  const err = (await p.then(
    () => undefined,
    (e: unknown) => e,
  )) as { reason?: string; message?: string; hint?: string } | undefined;
  expect(err?.reason).to.equal(reason);
  expect(err?.message).to.match(message);
  if (withHint) expect(err?.hint).to.be.a('string').and.not.empty;
}

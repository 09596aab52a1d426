/**
 * The agent's QMP exchanges with a stand-in qemu that greets, negotiates,
 * and then may never answer: the status read (qmpState) is 'unknown' in
 * bounded time (it once waited for good, and with it the WorkItem's
 * reconcile), and a stop ends within the grace period by SIGKILL (it once
 * waited for good on system_powerdown; a fence stop has 2 s before the
 * node's lease runs out).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import type { OperationContext } from '../../../../../agent/drivers/driver.js';
import { bootId, readProcStat } from '../../../../../agent/drivers/process/proc.js';
import type { ProcessState } from '../../../../../agent/drivers/process/state.js';
import { qemuRuntime, qmpState, vmPaths } from '../../../../../agent/drivers/qemu/runtime.js';
import type { WorkItem } from '../../../../../api/workitem.js';

/** A QMP server that greets, accepts qmp_capabilities, and answers query-status only if `answer`. */
function standInQemu(socketPath: string, answer: boolean): net.Server {
  return net
    .createServer((s) => {
      s.write('{"QMP": {"version": {}, "capabilities": []}}\n');
      s.on('data', (d) => {
        for (const line of d.toString().split('\n').filter(Boolean)) {
          const cmd = (JSON.parse(line) as { execute: string }).execute;
          if (cmd === 'qmp_capabilities') s.write('{"return": {}}\n');
          else if (answer) s.write('{"return": {"status": "running", "running": true}}\n');
        }
      });
      s.on('error', () => undefined);
    })
    .listen(socketPath);
}

describe('qemu: QMP exchanges with a qemu that stalls', function () {
  this.timeout(10_000);
  let dir: string;
  let server: net.Server | undefined;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-qmp-'))));
  afterEach(() => {
    server?.close();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('reads the run state when qemu answers', async () => {
    server = standInQemu(vmPaths(dir).qmpSocket, true);
    expect(await qmpState(dir)).to.equal('running');
  });

  it("is 'unknown' within seconds when qemu greets and never answers the query", async () => {
    server = standInQemu(vmPaths(dir).qmpSocket, false);
    const started = Date.now();
    expect(await qmpState(dir)).to.equal('unknown');
    expect(Date.now() - started).to.be.within(1400, 3000);
  });

  describe('a stop', () => {
    let vm: ChildProcess | undefined;
    afterEach(() => {
      try {
        process.kill(-vm!.pid!, 'SIGKILL');
      } catch {
        // already gone: the stop killed the group
      }
    });

    it('ends within the grace period by SIGKILL when qemu never answers system_powerdown', async () => {
      server = standInQemu(vmPaths(dir).controlSocket, false);
      // The shim's stand-in: a process group whose leader has a child, as the shim has its qemu; deaf to SIGTERM, as a VM whose guest ignores the power button.
      vm = spawn('/bin/sh', ['-c', 'trap "" TERM; sleep 60 & wait'], { detached: true, stdio: 'ignore' });
      const pid = vm.pid!;
      await new Promise((r) => setTimeout(r, 100));
      const state: ProcessState = { version: 1, pid, startTicks: readProcStat(pid)!.startTicks, bootId: bootId(), startedAt: Date.now(), restarts: 0, backoffCount: 0, specHash: '', stopped: false, limitsEnforced: false, limitsMessage: '' };
      const item = { metadata: { name: 'vm-1' }, spec: { type: 'InstanceRuntime', instance: { driver: 'qemu', terminationGracePeriodSeconds: 2 } } } as unknown as WorkItem;
      const ctx = { operationId: 'op-1', signal: new AbortController().signal, log: { info: () => undefined, warn: () => undefined } } as unknown as OperationContext;
      const started = Date.now();
      expect(await qemuRuntime.stop(state, item, ctx, dir)).to.equal('SIGKILL');
      expect(Date.now() - started).to.be.within(1900, 3000);
    });
  });

  describe('readiness', () => {
    const marker = 'CAIRN-BOOTED';
    const item = (timeout = 120) => ({ metadata: { name: 'vm-1' }, spec: { type: 'InstanceRuntime', instance: { driver: 'qemu', qemu: { readinessMarker: marker, readinessTimeoutSeconds: timeout } } } }) as unknown as WorkItem;
    const runOf = (startedAt: number): ProcessState => ({ version: 1, pid: process.pid, startTicks: readProcStat(process.pid)!.startTicks, bootId: bootId(), startedAt, restarts: 0, backoffCount: 0, specHash: '', stopped: false, limitsEnforced: false, limitsMessage: '', vm: { accelerator: 'tcg', logOffset: 50 } });
    const env = { now: Date.now } as never;

    it('stays ready after log rotation truncates the console log under the run (it once never found the marker again)', async () => {
      server = standInQemu(vmPaths(dir).qmpSocket, true);
      const log = vmPaths(dir).consoleLog;
      fs.writeFileSync(log, `${'earlier run\n'.repeat(10)}${marker}\n`);
      const run = runOf(Date.now());
      expect((await qemuRuntime.look!(item(), run, dir, env)).ready).to.equal(true);
      fs.truncateSync(log, 0);
      fs.appendFileSync(log, 'later output\n');
      expect((await qemuRuntime.look!(item(), run, dir, env)).ready).to.equal(true);
      expect((await qemuRuntime.look!(item(), { ...run, startTicks: run.startTicks + 1 }, dir, env)).ready, 'another run').to.equal(false);
    });

    it('says the same of an overdue marker from look to look, and looks again every 10 s (once a new message, and a status write, every second)', async () => {
      server = standInQemu(vmPaths(dir).qmpSocket, true);
      fs.writeFileSync(vmPaths(dir).consoleLog, 'no marker here\n');
      const run = runOf(Date.now() - 200_000);
      const first = await qemuRuntime.look!(item(), run, dir, env);
      await new Promise((r) => setTimeout(r, 1100));
      const second = await qemuRuntime.look!(item(), run, dir, env);
      expect(first.ready).to.equal(false);
      expect(second.message).to.equal(first.message).and.match(/not seen on the console within 120 s/);
      expect(second.requeueAfterMs).to.equal(10_000);
    });
  });
});

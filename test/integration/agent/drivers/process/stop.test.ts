/**
 * A stop that comes right after a start: the shim forks the command and the
 * fork execs it; a SIGTERM in between is swallowed by the shell's handler
 * the fork inherited, and the command then runs out the grace period. The
 * stop waits for the exec (commandStarted), so every such stop is a SIGTERM.
 * It tells the command from the shim's other children through the kernel's
 * list of a process's children, or a scan of /proc where there is none.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { launch } from '../../../../../agent/drivers/process/launch.js';
import { spawn } from 'node:child_process';
import { bootId, childPids, childPidsByScan, groupMembers, readProcStat } from '../../../../../agent/drivers/process/proc.js';
import { killLeftovers, stopInstance, type StopOutcome } from '../../../../../agent/drivers/process/stop.js';
import { eventually } from '../../../../support/eventually.js';
import { tempDir } from '../../helpers.js';

// Before the fix, 1–2 % of these stops (20 % with the watchdog) ran out the grace period.
const RUNS = 150;

describe('process driver: a stop right after a start (real processes)', function () {
  this.timeout(60_000);
  let dir: string;
  beforeEach(() => (dir = tempDir('stop')));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  for (const fenced of [false, true]) {
    it(`ends every one with SIGTERM, never the grace period and SIGKILL (${fenced ? 'with' : 'without'} the fencing watchdog)`, async () => {
      const fencePath = path.join(dir, 'fence');
      fs.writeFileSync(fencePath, `${Date.now() + 600_000}\n`);
      const outcomes: Record<StopOutcome, number> = { SIGTERM: 0, SIGKILL: 0, asked: 0, gone: 0 };
      for (let i = 0; i < RUNS; i++) {
        const { pid, startTicks } = launch({ argv: ['/bin/sleep', '1000'], env: { PATH: '/bin:/usr/bin' }, cwd: dir, logPath: path.join(dir, 'log'), exitPath: path.join(dir, 'exit'), ...(fenced ? { fencePath } : {}) });
        spinFor((i % 7) * 0.3); // the window is a millisecond or so after the launch
        outcomes[await stopInstance({ pid, startTicks, bootId: bootId() }, 500, new AbortController().signal)]++;
      }
      expect(outcomes).to.deep.equal({ SIGTERM: RUNS, SIGKILL: 0, asked: 0, gone: 0 });
    });
  }

  it("finds a shim's children the same way with the kernel's list and without it (a kernel without CONFIG_PROC_CHILDREN)", async () => {
    const fencePath = path.join(dir, 'fence');
    fs.writeFileSync(fencePath, `${Date.now() + 600_000}\n`);
    const { pid, startTicks } = launch({ argv: ['/bin/sleep', '1000'], env: { PATH: '/bin:/usr/bin' }, cwd: dir, logPath: path.join(dir, 'log'), exitPath: path.join(dir, 'exit'), fencePath });
    try {
      await eventually('the command and the watchdog', () => childPids(pid).length === 2, 5_000, 10);
      expect(childPidsByScan(pid).sort()).to.deep.equal(childPids(pid).sort());
    } finally {
      await stopInstance({ pid, startTicks, bootId: bootId() }, 500, new AbortController().signal);
    }
    expect(childPids(pid)).to.deep.equal([]);
  });

  it('kills what a run left in its process group once its shim is gone, and nothing when the shim\'s pid is another process now (pid reuse, no cgroup)', async () => {
    const group = () => {
      const leader = spawn('sh', ['-c', 'sleep 60 & wait'], { detached: true, stdio: 'ignore' });
      return leader.pid!;
    };
    const other = group();
    await eventually('the other group\'s sleep', () => groupMembers(other).length === 2, 5_000, 10);
    const ticks = readProcStat(other)!.startTicks;
    // A dead run's shim whose pid the other group's leader has now: its group is not the run's.
    await killLeftovers({ pid: other, startTicks: ticks - 1, bootId: bootId() });
    expect(groupMembers(other), 'the other group untouched').to.have.length(2);
    // The run's own group, its shim dead: what it left is killed.
    process.kill(other, 'SIGKILL');
    await eventually('the leader gone', () => !groupMembers(other).includes(other), 5_000, 10);
    await killLeftovers({ pid: other, startTicks: ticks, bootId: bootId() });
    await eventually('the leftover killed', () => groupMembers(other).length === 0, 5_000, 10);
  });
});

function spinFor(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until);
}

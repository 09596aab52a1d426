/** ChildSupervisor (cli/child-supervisor.ts) with real processes: it restarts a child that exited, and one that could not be spawned. */
import { expect } from 'chai';
import { ChildSupervisor } from '../../../cli/child-supervisor.js';
import { eventually } from '../../support/eventually.js';

class Collect {
  readonly lines: Array<Record<string, unknown>> = [];
  warn(message: string, meta: Record<string, unknown> = {}): void {
    this.lines.push({ message, ...meta });
  }
}

describe('cli ChildSupervisor (real processes)', function () {
  this.timeout(20_000);

  it('restarts a child that exits', async () => {
    const out = new Collect();
    const sup = new ChildSupervisor({ name: 'quick', command: process.execPath, args: ['-e', '0'], log: out });
    sup.start();
    await eventually('an exit and a restart logged', async () => out.lines.some((l) => l.message === 'quick exited; restarting' && l.code === 0), 5_000, 20);
    await sup.stop();
  });

  it('restarts, with backoff, a child that could not be spawned (an error and no exit: unheard, it ended this process)', async () => {
    const out = new Collect();
    const sup = new ChildSupervisor({ name: 'missing', command: '/nonexistent/cairn-child', args: [], log: out });
    sup.start();
    await eventually('the failed spawn logged', async () => out.lines.some((l) => l.message === 'missing exited; restarting' && String(l.error).includes('ENOENT')), 5_000, 20);
    expect(out.lines.find((l) => l.message === 'missing exited; restarting')).to.include({ restartInMs: 1000 });
    await sup.stop();
  });
});

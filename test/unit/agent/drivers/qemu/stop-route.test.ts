/**
 * A VM to be stopped goes through the ordinary supervised stop, whatever migration its state.json records:
 * through a migration's side, a fence stop resumed a paused target (QMP cont) or cancelled a transfer, which
 * continues the guest, without the node's term or the claim.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { WorkItem } from '../../../../../api/workitem.js';
import { instanceDir } from '../../../../../agent/drivers/paths.js';
import { observeVm } from '../../../../../agent/drivers/qemu/migration.js';
import { writeState, type ProcessState, type VmRecord } from '../../../../../agent/drivers/process/state.js';

const DEAD_PID = 4_000_000;

function vmItem(runState: 'Running' | 'Stopped'): WorkItem {
  return {
    metadata: { namespace: 'c1', name: 'web.n1', generation: 1 },
    spec: { nodeName: 'n1', type: 'InstanceRuntime', owner: { kind: 'Instance', name: 'web' }, instance: { driver: 'qemu', runState, cpus: 1, memory: '128Mi', qemu: { kernel: '/nonexistent/vmlinuz' } } },
  };
}

function stateWith(vm: Partial<VmRecord>): ProcessState {
  return { version: 1, pid: DEAD_PID, startTicks: 1, bootId: 'b', startedAt: 0, restarts: 0, backoffCount: 0, specHash: 'h', stopped: false, limitsEnforced: false, limitsMessage: '', vm: { accelerator: 'tcg', logOffset: 0, ...vm } };
}

describe('qemu driver: a VM to be stopped', () => {
  let dataDir: string;
  const env = () => ({ dataDir, nodeName: 'n1', now: () => Date.now() });
  beforeEach(() => (dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-qemu-stop-'))));
  afterEach(() => fs.rmSync(dataDir, { recursive: true, force: true }));

  const recorded: Array<[string, Partial<VmRecord>]> = [
    ['an incoming migration (a target that resumed the guest)', { incoming: { id: 'm1', address: '127.0.0.1', port: 1, resumedAt: 1 } }],
    ['an outgoing transfer (a source)', { outgoing: { id: 'm1', startedAt: 0 } }],
  ];
  for (const [what, vm] of recorded) {
    it(`is observed as a plain stop with ${what} recorded, never through the migration`, async () => {
      const item = vmItem('Stopped');
      const dir = instanceDir(dataDir, 'c1', 'web');
      fs.mkdirSync(dir, { recursive: true });
      writeState(dir, stateWith(vm));
      const obs = await observeVm(item, env());
      expect(obs.migration, 'no migration step is planned for a VM to be stopped').to.equal(undefined);
      expect(obs.action).to.not.be.oneOf(['resume', 'abortMigration', 'finishMigration', 'migrate', 'listen']);
      const running = await observeVm(vmItem('Running'), env());
      expect(running.migration, 'a VM to run still reports its migration side').to.not.equal(undefined);
    });
  }

  it('a target whose qemu died before it resumed the guest (a fence stop of a paused target) is an ordinary VM again: its restart policy applies', async () => {
    const dir = instanceDir(dataDir, 'c1', 'web');
    fs.mkdirSync(dir, { recursive: true });
    writeState(dir, stateWith({ incoming: { id: 'm1', address: '127.0.0.1', port: 1 } }));
    const obs = await observeVm(vmItem('Running'), env());
    expect(obs.migration, 'not "exited before the incoming migration completed", converged for good').to.equal(undefined);
  });
});

/**
 * The agent's quick status read of a VM (qmpState) over a QMP socket that
 * a stand-in qemu serves: the run state when it answers, and 'unknown' in
 * bounded time when it greets and negotiates but never answers the query
 * (that read once waited for good, and with it the WorkItem's reconcile).
 */
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { expect } from 'chai';
import { qmpState, vmPaths } from '../../../../../agent/drivers/qemu/runtime.js';

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

describe('qemu: the status read over QMP', function () {
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
});

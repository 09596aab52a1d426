/**
 * Copy-truncate rotation of instance logs, including under a live instance
 * that keeps writing: its next lines land at the start of the truncated
 * file (append mode), with no hole of NUL bytes.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { rotateInstanceLogs, rotateLog } from '../../../../../agent/drivers/process/log-rotation.js';
import { processDriver } from '../../../../../agent/drivers/process/driver.js';
import { writeState, type ProcessState } from '../../../../../agent/drivers/process/state.js';
import { serveStream } from '../../../../../agent/tunnel/streams.js';
import { eventually } from '../../../../support/eventually.js';
import { directContext, instanceItem, killGroups, tempDir } from '../../helpers.js';

describe('instance log rotation', function () {
  this.timeout(20_000);
  let dataDir: string;
  const pgids = new Set<number>();

  beforeEach(() => (dataDir = tempDir('logs')));
  afterEach(() => {
    killGroups(pgids);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('rotates only logs past maxBytes and keeps at most `keep` old copies', async () => {
    const big = path.join(dataDir, 'instances', 'c1', 'big', 'console.log');
    const small = path.join(dataDir, 'instances', 'c2', 'small', 'console.log');
    for (const f of [big, small]) fs.mkdirSync(path.dirname(f), { recursive: true });
    fs.writeFileSync(small, 'x'.repeat(10));
    for (let round = 1; round <= 4; round++) {
      fs.writeFileSync(big, `round ${round} `.repeat(20));
      expect(await rotateInstanceLogs(dataDir, { maxBytes: 100, keep: 2 })).to.deep.equal([big]);
      expect(fs.statSync(big).size).to.equal(0);
    }
    expect(fs.readFileSync(`${big}.1`, 'utf8')).to.match(/^round 4 /);
    expect(fs.readFileSync(`${big}.2`, 'utf8')).to.match(/^round 3 /);
    expect(fs.existsSync(`${big}.3`)).to.equal(false);
    expect(fs.readFileSync(small, 'utf8')).to.equal('x'.repeat(10));
    expect(await rotateLog(path.join(dataDir, 'missing.log'))).to.equal(false);
  });

  it('serves the current run whole after a rotation, though the file grew past the run\'s old offset again (once only what came after it)', async () => {
    const dir = path.join(dataDir, 'instances', 'c', 'i');
    fs.mkdirSync(dir, { recursive: true });
    const log = path.join(dir, 'console.log');
    fs.writeFileSync(log, 'earlier run\n'.repeat(10)); // 120 bytes: the run started at 120
    writeState(dir, { version: 1, pid: 1, startTicks: 1, bootId: 'b', startedAt: Date.now() - 1000, logOffset: 120 } as ProcessState);
    fs.appendFileSync(log, 'this run, before\n');
    expect(await rotateLog(log, { maxBytes: 100 })).to.equal(true);
    fs.appendFileSync(log, 'this run, after\n'.repeat(10)); // 160 bytes: past the old offset
    const chunks: Buffer[] = [];
    let failure: unknown;
    const peer = { start: () => undefined, send: async (c: Buffer) => void chunks.push(c), end: (f?: unknown) => void (failure = f), onData: () => undefined, signal: new AbortController().signal };
    await serveStream({ kind: 'log', namespace: 'c', name: 'i', log: {} }, peer, { dataDir, nodeName: 'n', marksOf: () => [], now: Date.now });
    expect(failure).to.equal(undefined);
    expect(Buffer.concat(chunks).toString()).to.equal('this run, after\n'.repeat(10));
  });

  it('keeps a running instance logging at the start of the truncated file', async () => {
    const item = instanceItem('chatty', { command: ['sh', '-c', 'while :; do echo line; sleep 0.01; done'] });
    const obs = await processDriver.ensure(item, directContext(dataDir));
    pgids.add(obs.instance!.pid!);
    const log = obs.instance!.logPath!;
    await eventually('the log to grow', () => fs.existsSync(log) && fs.statSync(log).size > 200, 5_000);
    expect(await rotateLog(log, { maxBytes: 100 })).to.equal(true);
    const copied = fs.statSync(`${log}.1`).size;
    await eventually('new lines after the rotation', () => fs.statSync(log).size > 0, 5_000);
    const text = fs.readFileSync(log, 'utf8');
    expect(text.startsWith('line\n')).to.equal(true);
    expect(text.includes('\0')).to.equal(false);
    expect(fs.statSync(log).size).to.be.below(copied + 200);
  });
});

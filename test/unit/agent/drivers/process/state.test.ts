/** Process identity and state files: staleness by pid, start time and boot; /proc parsing; atomic writes; corrupt files. */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { isSameProcess, readExit, readState, writeState, type ProcessState } from '../../../../../agent/drivers/process/state.js';
import { parseProcStat, readProcStat, type ProcStat } from '../../../../../agent/drivers/process/proc.js';
import { OperationError } from '../../../../../agent/operations/errors.js';

const stat = (over: Partial<ProcStat> = {}): ProcStat => ({ pid: 42, state: 'S', ppid: 1, pgrp: 42, session: 42, startTicks: 1000, ...over });

describe('process identity and state files', () => {
  it('adopts only the same pid with the same start time in the same boot, alive', () => {
    const saved = { pid: 42, startTicks: 1000, bootId: 'boot-a' };
    expect(isSameProcess(saved, stat(), 'boot-a')).to.equal(true);
    expect(isSameProcess(saved, stat({ state: 'R' }), 'boot-a')).to.equal(true);
    expect(isSameProcess(saved, stat({ startTicks: 1001 }), 'boot-a'), 'recycled pid').to.equal(false);
    expect(isSameProcess(saved, stat(), 'boot-b'), 'another boot').to.equal(false);
    expect(isSameProcess(saved, stat({ state: 'Z' }), 'boot-a'), 'zombie').to.equal(false);
    expect(isSameProcess(saved, undefined, 'boot-a'), 'gone').to.equal(false);
  });

  it('parses /proc/<pid>/stat even when the command name holds spaces and parentheses', () => {
    const line = '4242 (my (odd) cmd) S 1 4242 4242 0 -1 4194560 0 0 0 0 0 0 0 0 20 0 1 0 987654 1024 10 0\n';
    expect(parseProcStat(line)).to.deep.equal({ pid: 4242, state: 'S', ppid: 1, pgrp: 4242, session: 4242, startTicks: 987654 });
    expect(() => parseProcStat('garbage')).to.throw(/malformed/);
    expect(readProcStat(process.pid)).to.include({ pid: process.pid, ppid: process.ppid });
    expect(readProcStat(4_000_000)).to.equal(undefined);
  });

  it('writes state.json atomically and reads it back; refuses a corrupt one', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-state-'));
    try {
      expect(readState(dir)).to.equal(undefined);
      const state: ProcessState = { version: 1, pid: 1, startTicks: 2, bootId: 'b', startedAt: 3, restarts: 0, backoffCount: 0, specHash: 'h', stopped: false, limitsEnforced: false, limitsMessage: 'm' };
      writeState(dir, state);
      expect(readState(dir)).to.deep.equal(state);
      expect(fs.readdirSync(dir)).to.deep.equal(['state.json']);
      fs.writeFileSync(path.join(dir, 'state.json'), '{"version":1,');
      expect(() => readState(dir)).to.throw(OperationError, /is corrupt/);
      fs.writeFileSync(path.join(dir, 'exit'), '77 3\n');
      expect([readExit(dir, 77)?.code, readExit(dir, 78)?.code]).to.deep.equal([3, undefined]);
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * The OperationRunner across real process boundaries: workers in their own
 * process groups, killed with everything they started on timeout,
 * cancellation and shutdown. A stand-in worker (fixtures/test-worker.ts)
 * misbehaves on request; the last tests run the real worker, which is
 * reused from one operation to the next.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { WorkItem } from '../../../api/workitem.js';
import { OperationRunner } from '../../../agent/operations/runner.js';
import { parseOperationId } from '../../../agent/operations/operation-id.js';
import { eventually } from '../../support/eventually.js';
import { alive, captureLog, instanceItem, killGroups, tempDir, type CapturedLog } from './helpers.js';

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'fixtures', 'test-worker.js');

function fixtureItem(name: string, mode: string): WorkItem {
  const item = instanceItem(name, { command: ['true'] });
  item.metadata.annotations = { 'test.cairn.dev/mode': mode };
  return item;
}

/** Waits (briefly: SIGKILL is sent, the kernel finishes it) until none of `pids` is alive. */
async function gone(pids: number[], withinMs = 1_000): Promise<void> {
  await eventually(`pids ${pids.join(', ')} to be gone`, () => pids.every((p) => !alive(p)), withinMs, 10);
}

function childPids(log: CapturedLog, key: string): number[] {
  const line = log.lines.find((l) => l.message === 'children' && l.meta?.workItem === key);
  return (line?.meta?.pids as number[] | undefined) ?? [];
}

describe('agent operation runner (real processes)', function () {
  this.timeout(20_000);
  let dataDir: string;
  let log: CapturedLog;
  const pgids = new Set<number>();

  beforeEach(() => {
    dataDir = tempDir('runner');
    log = captureLog();
  });
  afterEach(() => {
    killGroups(pgids);
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  function runner(killGraceMs = 300): OperationRunner {
    return new OperationRunner({ dataDir, nodeName: 'n1', logger: log, workerPath: FIXTURE, killGraceMs });
  }

  it('kills the whole process group of a worker that exceeds its timeout, with reason Timeout', async () => {
    const r = runner();
    const started = Date.now();
    const result = await r.run({ verb: 'ensure', item: fixtureItem('slow', 'hang-ignore-term'), timeoutMs: 2_000 });
    const children = childPids(log, 'c1/wi-slow');
    expect(result.ok).to.equal(false);
    expect(result.error?.reason).to.equal('Timeout');
    expect(result.error?.message).to.match(/exceeded its 2 s timeout/);
    expect(result.error?.hint).to.match(/timeoutSeconds/);
    expect(result.error?.operationId).to.equal(result.operationId);
    expect(children).to.have.length(2);
    await gone(children);
    expect(Date.now() - started).to.be.lessThan(6_000);
    const parts = parseOperationId(result.operationId);
    pgids.add(parts!.childPid);
    expect(parts?.parentPid).to.equal(process.pid);
    await gone([parts!.childPid]);
    expect(r.stats()).to.deep.include({ started: 1, succeeded: 0, live: 0 });
    expect(r.stats().failed).to.deep.equal({ Timeout: 1 });
  });

  it('cancels an operation through its AbortSignal, reason Cancelled, and lists it while it runs', async () => {
    const r = runner();
    const controller = new AbortController();
    const running = r.run({ verb: 'ensure', item: fixtureItem('cancel', 'hang'), action: 'start', signal: controller.signal });
    await eventually('the worker to report its children', () => childPids(log, 'c1/wi-cancel').length === 2, 10_000);
    const [live] = r.operations();
    expect(live).to.include({ key: 'c1/wi-cancel', verb: 'ensure', action: 'start' });
    expect(alive(live!.pid)).to.equal(true);
    pgids.add(live!.pid);
    const refused = await r.run({ verb: 'remove', item: fixtureItem('cancel', 'hang') }).catch((err: Error) => err);
    expect((refused as Error).message).to.match(/still running for WorkItem c1\/wi-cancel/);
    controller.abort('the WorkItem was deleted');
    const result = await running;
    expect(result.error?.reason).to.equal('Cancelled');
    expect(result.error?.message).to.match(/was cancelled: the WorkItem was deleted/);
    await gone(childPids(log, 'c1/wi-cancel'));
    expect(r.operations()).to.deep.equal([]);
  });

  it('does not start a worker for an already aborted signal', async () => {
    const r = runner();
    const controller = new AbortController();
    controller.abort();
    const result = await r.run({ verb: 'ensure', item: fixtureItem('early', 'hang'), signal: controller.signal });
    expect(result.error?.reason).to.equal('Cancelled');
    expect(r.stats().started).to.equal(0);
  });

  it('shutdown SIGTERMs every worker group, SIGKILLs them after the grace period and refuses new work', async () => {
    const r = runner(10_000);
    const runs = [r.run({ verb: 'ensure', item: fixtureItem('a', 'hang-ignore-term') }), r.run({ verb: 'ensure', item: fixtureItem('b', 'hang') })];
    await eventually('both workers to report children', () => childPids(log, 'c1/wi-a').length + childPids(log, 'c1/wi-b').length === 4, 10_000);
    const workers = r.operations().map((o) => o.pid);
    workers.forEach((p) => pgids.add(p));
    const all = [...childPids(log, 'c1/wi-a'), ...childPids(log, 'c1/wi-b'), ...workers];
    const started = Date.now();
    await r.shutdown(500);
    expect(Date.now() - started).to.be.within(400, 3_000);
    await gone(all, 500);
    const results = await Promise.all(runs);
    expect(results.map((x) => x.error?.reason)).to.deep.equal(['Cancelled', 'Cancelled']);
    expect(results[0]!.error?.message).to.match(/agent is shutting down/);
    const late = await r.run({ verb: 'ensure', item: fixtureItem('late', 'hang') });
    expect(late.error?.message).to.match(/shutting down/);
  });

  it('reports a crashed worker as Unknown with the error it printed', async () => {
    const result = await runner().run({ verb: 'ensure', item: fixtureItem('crash', 'crash') });
    expect(result.error?.reason).to.equal('Unknown');
    expect(result.error?.message).to.match(/ended with status 1 without a result: .*fixture worker exploded/);
  });

  it('kills what a worker left behind when it exits', async () => {
    const result = await runner().run({ verb: 'ensure', item: fixtureItem('leftover', 'leave-child') });
    expect(result.ok).to.equal(true);
    const [orphan] = childPids(log, 'c1/wi-leftover');
    pgids.add(parseOperationId(result.operationId)!.childPid);
    await eventually('the leftover child to be killed', () => !alive(orphan!), 5_000);
  });

  it('runs the real worker and relays its failure with reason and hint', async () => {
    const r = new OperationRunner({ dataDir, nodeName: 'n1', logger: log });
    const result = await r.run({ verb: 'ensure', item: instanceItem('missing', { command: ['no-such-command-cairn'] }) });
    expect(result.error?.reason).to.equal('NotFound');
    expect(result.error?.message).to.match(/the command no-such-command-cairn does not exist on node n1/);
    expect(result.error?.hint).to.match(/install no-such-command-cairn on node n1/);
    expect(log.lines.some((l) => l.message === 'operation failed' && l.meta?.operationId === result.operationId)).to.equal(true);
  });

  it('reuses a warm real worker for the next operation (no Node.js start-up), one operation at a time, and ends it at shutdown', async () => {
    const r = new OperationRunner({ dataDir, nodeName: 'n1', logger: log });
    const workerPid = (operationId: string) => parseOperationId(operationId)!.childPid;
    const first = await r.run({ verb: 'remove', item: instanceItem('a', { command: ['true'] }) });
    const second = await r.run({ verb: 'remove', item: instanceItem('b', { command: ['true'] }) });
    expect(first.ok && second.ok, JSON.stringify([first, second])).to.equal(true);
    expect(workerPid(second.operationId)).to.equal(workerPid(first.operationId));
    expect(first.operationId).to.not.equal(second.operationId);
    // Two at once need two workers.
    const [x, y] = await Promise.all(['x', 'y'].map((n) => r.run({ verb: 'remove', item: instanceItem(n, { command: ['true'] }) })));
    expect(workerPid(x!.operationId)).to.not.equal(workerPid(y!.operationId));
    const pid = workerPid(first.operationId);
    expect(alive(pid), 'kept warm').to.equal(true);
    await r.shutdown();
    await gone([pid]);
  });

  it('never reuses a worker it terminated', async () => {
    const r = runner();
    const controller = new AbortController();
    const cancelled = r.run({ verb: 'ensure', item: fixtureItem('cut', 'hang'), signal: controller.signal });
    await eventually('the worker to report its children', () => childPids(log, 'c1/wi-cut').length === 2, 10_000);
    controller.abort('changed');
    const res = await cancelled;
    expect(res.error?.reason).to.equal('Cancelled');
    const next = await r.run({ verb: 'ensure', item: fixtureItem('next', 'leave-child') });
    expect(parseOperationId(next.operationId)!.childPid).to.not.equal(parseOperationId(res.operationId)!.childPid);
    for (const p of childPids(log, 'c1/wi-next')) pgids.add(p);
  });
});

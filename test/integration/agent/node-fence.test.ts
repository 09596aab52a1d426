/**
 * The node fence's safe window against a real apiserver, on a hand-driven
 * clock whose wall time can be stepped: the window is timed on the monotonic
 * clock, so a wall-clock step back (NTP, `date -s`, a resumed VM) cannot
 * stretch a term past the lease the controller counts (docs/fencing.md).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'winston';
import { NodeFence, type NodeFenceOptions } from '../../../agent/fencing/node-fence.js';
import { loadKubeConfig } from '../../../api/client/kubeconfig.js';
import { FakeClock } from '../../support/fake-clock.js';
import { rawRequest } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';

describe('node fence: the safe window on the monotonic clock (real apiserver)', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let dir: string;
  const log = { info: () => undefined, warn: () => undefined, error: () => undefined } as unknown as Logger;

  before(async () => {
    env = await startTestEnv();
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-fence-'));
    const r = await rawRequest(env.kubeconfig, { method: 'POST', path: '/apis/cairn.dev/v1alpha1/clusters', body: JSON.stringify({ metadata: { name: 'f' }, spec: {} }) });
    expect(r.status, r.text).to.equal(201);
  });
  after(async () => {
    await env?.stop();
    if (dir) fs.rmSync(dir, { recursive: true, force: true });
  });

  function fence(clock: FakeClock, nodeName: string, unsafeAt: number[], restored?: ConstructorParameters<typeof NodeFence>[2], bootId = 'boot-1'): NodeFence {
    const opts: NodeFenceOptions = { cluster: 'f', nodeName, intervalMs: 1000, leaseDurationSeconds: 10, deadlineFile: path.join(dir, `${nodeName}.deadline`), clock, bootId, log, onUnsafe: () => unsafeAt.push(clock.monotonic()), onNewTerm: () => undefined };
    return new NodeFence(loadKubeConfig({ kubeconfig: env.server.kubeconfigPath }), opts, restored);
  }

  /** Waits (real time: the renewal goes over HTTP, the fake clock stands) for a term. */
  async function renewedOver(f: NodeFence): Promise<void> {
    for (let i = 0; i < 200 && f.term === undefined; i++) await new Promise((r) => setTimeout(r, 10));
  }

  it('ends the term when the window runs out, though the wall clock was stepped back 30 s meanwhile', async () => {
    const clock = new FakeClock(1_000_000);
    const unsafeAt: number[] = [];
    const f = fence(clock, 'n1', unsafeAt);
    expect(await f.renew()).to.equal(true);
    expect(f.term).to.be.a('string');
    await clock.advanceAsync(3000);
    clock.stepWall(-30_000);
    await clock.advanceAsync(3001); // the window: 10 s less a fence stop and a margin = 6 s
    expect(unsafeAt, 'the instances are stopped on time').to.deep.equal([1_006_001]);
    expect(f.term).to.equal(undefined);
    f.stop();
  });

  it('a suspend longer than the window ends the term at wake-up, before the renewal that falls due first takes a new one', async () => {
    const clock = new FakeClock(3_000_000);
    const unsafeAt: number[] = [];
    const f = fence(clock, 'n3', unsafeAt);
    f.start();
    await renewedOver(f);
    const first = f.term;
    expect(first).to.be.a('string');
    await clock.advanceAsync(500);
    clock.suspend(20_000); // the timers stand still: the renewal (due in 500 ms) fires before the end-of-term timer
    await clock.advanceAsync(600);
    expect(unsafeAt, 'the old term ended, its copies stopped').to.have.length(1);
    await new Promise((r) => setTimeout(r, 100)); // a renewal sent now would have come back by then
    expect(f.term, 'no new term while they stop').to.equal(undefined);
    await clock.advanceAsync(2_000);
    await renewedOver(f);
    expect(f.term, 'then renewed, in a new term').to.be.a('string').and.not.equal(first);
    expect(unsafeAt).to.have.length(1);
    f.stop();
  });

  it('a restarted agent continues a term by its monotonic record in the same boot only', async () => {
    const clock = new FakeClock(2_000_000);
    const first = fence(clock, 'n2', []);
    expect(await first.renew()).to.equal(true);
    const record = first.record()!;
    first.stop();
    await clock.advanceAsync(1000);
    clock.stepWall(-30_000);
    const again = fence(clock, 'n2', [], record);
    expect(again.msUntilUnsafe(), 'the window left, whatever the wall clock says').to.equal(5000);
    again.stop();
    const otherBoot = fence(clock, 'n2', [], record, 'boot-2');
    expect(otherBoot.term, 'a term of another boot is not continued').to.equal(undefined);
    otherBoot.stop();
  });
});

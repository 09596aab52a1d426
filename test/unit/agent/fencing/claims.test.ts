/**
 * Instance claims whose write outlives its caller's time budget: a release (or hand-over) waits for it, and
 * the claim ends up given up, here and in the API.
 */
import { expect } from 'chai';
import { InstanceClaims, type ClaimLock } from '../../../../agent/fencing/claims.js';
import { FakeClock } from '../../../support/fake-clock.js';

/** A claim lock whose acquire answers only when the test says, recording what reached the API. */
function slowLock(name: string, calls: string[]) {
  let land!: (ok: boolean) => void;
  const lock: ClaimLock = {
    opts: { name },
    observedHolder: undefined,
    lease: undefined,
    tryAcquireOrRenew: () => {
      calls.push('claim sent');
      return new Promise<boolean>((resolve) => (land = (ok) => (calls.push('claim landed'), resolve(ok))));
    },
    release: async () => void calls.push('release'),
    handOver: async () => (calls.push('hand over'), 'handed' as const),
  };
  return { lock, land: (ok: boolean) => land(ok) };
}

describe('instance claims: a claim write its caller stopped waiting for', () => {
  for (const how of ['release', 'releaseIfClaimed', 'handOver'] as const) {
    it(`${how} waits for it to land first, and the claim ends up not held here`, async () => {
      const calls: string[] = [];
      const changes: Array<string | undefined> = [];
      const slow = slowLock('instance-web', calls);
      const claims = new InstanceClaims({} as never, { cluster: 'c1', nodeName: 'n1', leaseDurationSeconds: 10, clock: new FakeClock(), newLock: () => slow.lock, onChange: (_k, term) => changes.push(term) });
      const abandoned = claims.claim('c1/web.n1', 'instance-web', 'term-1');
      const giveUp = how === 'release' ? claims.release('c1/web.n1', 'instance-web') : how === 'handOver' ? claims.handOver('c1/web.n1', 'instance-web', 'n2') : claims.releaseIfClaimed('c1/web.n1');
      await new Promise((r) => setImmediate(r));
      expect(calls, 'nothing is given up while the claim write is under way').to.deep.equal(['claim sent']);
      slow.land(true);
      await giveUp;
      expect(calls).to.deep.equal(['claim sent', 'claim landed', how === 'handOver' ? 'hand over' : 'release']);
      await abandoned;
      expect(claims.holds('c1/web.n1', 'term-1')).to.equal(false);
      expect(changes.at(-1), 'persisted as given up, last').to.equal(undefined);
    });
  }

  it('waits at most 4 s from when the write was sent (a dead connection), also over retries of the give-up; a claim landing after it is released again', async () => {
    const calls: string[] = [];
    const clock = new FakeClock();
    const slow = slowLock('instance-web', calls);
    const claims = new InstanceClaims({} as never, { cluster: 'c1', nodeName: 'n1', leaseDurationSeconds: 10, clock, newLock: () => slow.lock });
    const late = claims.claim('c1/web.n1', 'instance-web', 'term-1');
    void claims.release('c1/web.n1', 'instance-web'); // its caller's 5-s budget ends it first, as a RetryLater
    await new Promise((r) => setImmediate(r));
    clock.advance(3_999);
    await new Promise((r) => setImmediate(r));
    expect(calls).to.deep.equal(['claim sent']);
    clock.advance(1);
    await new Promise((r) => setImmediate(r));
    expect(calls).to.deep.equal(['claim sent', 'release']);
    await claims.release('c1/web.n1', 'instance-web'); // a retry: does not wait again
    expect(calls).to.deep.equal(['claim sent', 'release', 'release']);
    slow.land(true);
    expect(await late).to.deep.equal({ ok: false });
    await new Promise((r) => setImmediate(r));
    expect(calls, 'the claim that landed late is given up again').to.deep.equal(['claim sent', 'release', 'release', 'claim landed', 'release']);
    expect(claims.holds('c1/web.n1', 'term-1')).to.equal(false);
  });

  it('a new claim waits for the release of one that landed after its give-up (else that release, reading again, cleared it)', async () => {
    const calls: string[] = [];
    const clock = new FakeClock();
    const slow = slowLock('instance-web', calls);
    let finishRelease!: () => void;
    slow.lock.release = () => (calls.push('release'), new Promise<void>((resolve) => (finishRelease = () => (calls.push('released'), resolve()))));
    const claims = new InstanceClaims({} as never, { cluster: 'c1', nodeName: 'n1', leaseDurationSeconds: 10, clock, newLock: () => slow.lock });
    const late = claims.claim('c1/web.n1', 'instance-web', 'term-1');
    claims.forget('c1/web.n1'); // given up meanwhile
    slow.land(true);
    expect(await late).to.deep.equal({ ok: false });
    const again = claims.claim('c1/web.n1', 'instance-web', 'term-2');
    await new Promise((r) => setImmediate(r));
    expect(calls).to.deep.equal(['claim sent', 'claim landed', 'release']);
    finishRelease();
    await new Promise((r) => setImmediate(r));
    expect(calls.slice(3)).to.deep.equal(['released', 'claim sent']);
    slow.land(true);
    expect(await again).to.deep.equal({ ok: true });
  });
});

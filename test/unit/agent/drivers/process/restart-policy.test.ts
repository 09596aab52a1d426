/** Restart decisions of process instances: policy, exponential backoff and its reset, on an injected clock. */
import { expect } from 'chai';
import fc from 'fast-check';
import { BACKOFF_MAX_MS, backoffDelayMs, decideRestart, shouldRestart } from '../../../../../agent/drivers/process/restart-policy.js';

describe('restart policy', () => {
  it('restarts per policy and exit status', () => {
    expect([0, 1, undefined].map((c) => shouldRestart('Always', c))).to.deep.equal([true, true, true]);
    expect([0, 1, 137, undefined].map((c) => shouldRestart('OnFailure', c))).to.deep.equal([false, true, true, true]);
    expect([0, 1, undefined].map((c) => shouldRestart('Never', c))).to.deep.equal([false, false, false]);
  });

  it('doubles the delay from 1 s and caps it at 5 min', () => {
    expect([0, 1, 2, 3, 8, 9, 50].map(backoffDelayMs)).to.deep.equal([1000, 2000, 4000, 8000, 256_000, 300_000, 300_000]);
  });

  it('waits out the backoff, then restarts with a higher count', () => {
    const base = { policy: 'Always' as const, exitCode: 1, backoffCount: 2, startedAt: 10_000, exitedAt: 12_000 };
    expect(decideRestart({ ...base, now: 12_000 })).to.deep.equal({ kind: 'wait', untilMs: 16_000 });
    expect(decideRestart({ ...base, now: 15_999 })).to.deep.equal({ kind: 'wait', untilMs: 16_000 });
    expect(decideRestart({ ...base, now: 16_000 })).to.deep.equal({ kind: 'restart', backoffCount: 3 });
  });

  it('resets the backoff after a run of 10 minutes', () => {
    const long = { policy: 'OnFailure' as const, exitCode: 2, backoffCount: 7, startedAt: 0, exitedAt: 600_000 };
    expect(decideRestart({ ...long, now: 600_000 })).to.deep.equal({ kind: 'wait', untilMs: 601_000 });
    expect(decideRestart({ ...long, now: 601_000 })).to.deep.equal({ kind: 'restart', backoffCount: 1 });
  });

  it('leaves a finished instance alone', () => {
    expect(decideRestart({ policy: 'OnFailure', exitCode: 0, backoffCount: 0, startedAt: 0, exitedAt: 5, now: 10 ** 9 })).to.deep.equal({ kind: 'none' });
  });

  it('never waits longer than the cap, and never restarts before the exit plus the initial delay', () => {
    fc.assert(
      fc.property(fc.nat(100), fc.nat(10 ** 9), fc.nat(10 ** 9), fc.nat(10 ** 6), (count, startedAt, ranFor, after) => {
        const exitedAt = startedAt + ranFor;
        const d = decideRestart({ policy: 'Always', exitCode: 1, backoffCount: count, startedAt, exitedAt, now: exitedAt + after });
        if (d.kind === 'wait') expect(d.untilMs - exitedAt).to.be.at.most(BACKOFF_MAX_MS).and.above(after);
        if (d.kind === 'restart') expect(after).to.be.at.least(1000);
        expect(d.kind).to.not.equal('none');
      }),
    );
  });
});

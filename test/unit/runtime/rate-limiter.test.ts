/**
 * The rate limiters (client-go's per-key exponential backoff, global token
 * bucket, and the max of both) as arithmetic over a fake clock; plus the
 * Clock helpers they rest on (sleep, realClock) and the FakeClock itself.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { realClock, sleep } from '../../../runtime/clock.js';
import {
  ExponentialBackoffLimiter,
  MaxOfLimiter,
  TokenBucketLimiter,
  defaultRateLimiter,
  type RateLimiter,
} from '../../../runtime/rate-limiter.js';
import { FakeClock, flushMicrotasks } from '../../support/fake-clock.js';

describe('rate limiters', () => {
  describe('ExponentialBackoffLimiter', () => {
    it('defaults to 5 ms doubling per failure: 5, 10, 20, 40, ...', () => {
      const l = new ExponentialBackoffLimiter();
      expect(Array.from({ length: 8 }, () => l.when('k'))).to.deep.equal([5, 10, 20, 40, 80, 160, 320, 640]);
      expect(l.retries('k')).to.equal(8);
    });

    it('caps at 1000 s by default (the 19th failure onwards), even after very many failures', () => {
      const l = new ExponentialBackoffLimiter();
      const delays = Array.from({ length: 2000 }, () => l.when('k'));
      expect(delays[17]).to.equal(5 * 2 ** 17);
      expect(delays[18]).to.equal(1_000_000);
      expect(delays.slice(18).every((d) => d === 1_000_000)).to.equal(true);
      expect(delays.every((d) => Number.isFinite(d) && d > 0)).to.equal(true);
    });

    it('counts each key on its own', () => {
      const l = new ExponentialBackoffLimiter();
      l.when('a');
      l.when('a');
      l.when('a');
      expect(l.when('b')).to.equal(5);
      expect(l.when('a')).to.equal(40);
      expect([l.retries('a'), l.retries('b'), l.retries('never')]).to.deep.equal([4, 1, 0]);
    });

    it('forget resets the key to the base delay and leaves other keys alone', () => {
      const l = new ExponentialBackoffLimiter();
      for (let i = 0; i < 5; i++) l.when('a');
      l.when('b');
      l.forget('a');
      expect(l.retries('a')).to.equal(0);
      expect(l.when('a')).to.equal(5);
      expect(l.when('b')).to.equal(10);
    });

    it('takes a custom base and cap', () => {
      const l = new ExponentialBackoffLimiter(100, 350);
      expect(Array.from({ length: 4 }, () => l.when('k'))).to.deep.equal([100, 200, 350, 350]);
    });

    it('property: delays never decrease until forget, and never exceed the cap', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 1000 }), fc.integer({ min: 1, max: 10_000_000 }), fc.integer({ min: 1, max: 80 }), (base, max, n) => {
          const l = new ExponentialBackoffLimiter(base, max);
          const delays = Array.from({ length: n }, () => l.when('k'));
          expect(delays[0]).to.equal(Math.min(base, max));
          for (let i = 1; i < n; i++) expect(delays[i]).to.be.at.least(delays[i - 1]!).and.at.most(max);
        }),
      );
    });
  });

  describe('TokenBucketLimiter', () => {
    it('lets a burst through at once, then spaces retries 1/qps apart', () => {
      const clock = new FakeClock();
      const l: RateLimiter = new TokenBucketLimiter(clock, 10, 100);
      const burst = Array.from({ length: 100 }, (_, i) => l.when(`k${i}`));
      expect(burst.every((d) => d === 0)).to.equal(true);
      expect([l.when('x'), l.when('y'), l.when('z')].map(Math.round)).to.deep.equal([100, 200, 300]);
    });

    it('refills at qps while time passes, so the delay owed shrinks', () => {
      const clock = new FakeClock();
      const l: RateLimiter = new TokenBucketLimiter(clock, 10, 5);
      for (let i = 0; i < 5; i++) l.when('k');
      expect(Math.round(l.when('k'))).to.equal(100); // one token in debt
      clock.advance(100); // the debt is paid: the next retry waits one spacing, not two
      expect(Math.round(l.when('k'))).to.equal(100);
      clock.advance(250); // 2.5 tokens refilled: 1.5 in hand
      expect([l.when('k'), Math.round(l.when('k'))]).to.deep.equal([0, 50]);
    });

    it('after a burst, waiting 1 s at qps 10 buys exactly 10 immediate retries, then 100 ms spacing resumes', () => {
      const clock = new FakeClock();
      const l: RateLimiter = new TokenBucketLimiter(clock, 10, 100);
      for (let i = 0; i < 100; i++) l.when('k');
      clock.advance(1000);
      const next = Array.from({ length: 12 }, () => Math.round(l.when('k')));
      expect(next).to.deep.equal([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 100, 200]);
    });

    it('never stores more than burst tokens, however long it idles', () => {
      const clock = new FakeClock();
      const l: RateLimiter = new TokenBucketLimiter(clock, 10, 3);
      clock.advance(3_600_000);
      expect([0, 1, 2, 3].map(() => Math.round(l.when('k')))).to.deep.equal([0, 0, 0, 100]);
    });

    it('has no per-key memory: forget is a no-op and retries is 0', () => {
      const clock = new FakeClock();
      const l: RateLimiter = new TokenBucketLimiter(clock, 1, 1);
      l.when('a');
      expect(Math.round(l.when('b'))).to.equal(1000);
      l.forget('b');
      expect(l.retries('b')).to.equal(0);
      expect(Math.round(l.when('a'))).to.equal(2000);
    });
  });

  describe('MaxOfLimiter / defaultRateLimiter', () => {
    it('takes the larger delay, forwards forget to every limiter and reports the most retries', () => {
      const calls: string[] = [];
      const fixed = (name: string, delay: number, retries: number): RateLimiter => ({
        when: (k) => (calls.push(`${name}.when ${k}`), delay),
        forget: (k) => void calls.push(`${name}.forget ${k}`),
        retries: () => retries,
      });
      const l = new MaxOfLimiter(fixed('a', 30, 1), fixed('b', 70, 4), fixed('c', 10, 2));
      expect(l.when('k')).to.equal(70);
      expect(l.retries('k')).to.equal(4);
      l.forget('k');
      expect(calls).to.deep.equal(['a.when k', 'b.when k', 'c.when k', 'a.forget k', 'b.forget k', 'c.forget k']);
    });

    it('default: per-key backoff 5, 10, 20 ms while the bucket has tokens; the bucket dominates after 100 failures', () => {
      const clock = new FakeClock();
      const l = defaultRateLimiter(clock);
      expect([l.when('a'), l.when('a'), l.when('a')]).to.deep.equal([5, 10, 20]);
      for (let i = 0; i < 97; i++) expect(l.when(`other${i}`)).to.equal(5);
      // 100 tokens spent: a new key's first failure waits for the bucket (100 ms), not 5 ms
      expect(Math.round(l.when('fresh'))).to.equal(100);
      expect(l.retries('a')).to.equal(3);
      l.forget('a');
      expect(l.retries('a')).to.equal(0);
    });

    it('default: the per-key backoff dominates once it exceeds the bucket’s spacing, and forget resets it', () => {
      const clock = new FakeClock();
      const l = defaultRateLimiter(clock);
      const delays: number[] = [];
      for (let i = 0; i < 20; i++) {
        delays.push(l.when('k'));
        clock.advance(delays[delays.length - 1]!);
      }
      expect(delays.slice(0, 5)).to.deep.equal([5, 10, 20, 40, 80]);
      expect(delays[19]).to.equal(1_000_000);
      l.forget('k');
      expect(l.when('k')).to.equal(5);
    });
  });
});

describe('clock', () => {
  describe('sleep', () => {
    it('resolves after ms on the given clock, not before', async () => {
      const clock = new FakeClock();
      let done = false;
      void sleep(clock, 100).then(() => (done = true));
      clock.advance(99);
      await flushMicrotasks();
      expect(done).to.equal(false);
      clock.advance(1);
      await flushMicrotasks();
      expect(done).to.equal(true);
    });

    it('resolves early when its signal aborts, and cancels its timer', async () => {
      const clock = new FakeClock();
      const ac = new AbortController();
      let done = false;
      void sleep(clock, 10_000, ac.signal).then(() => (done = true));
      expect(clock.pendingTimers).to.equal(1);
      ac.abort();
      await flushMicrotasks();
      expect(done).to.equal(true);
      expect(clock.pendingTimers).to.equal(0);
    });

    it('resolves at once, setting no timer, for an already aborted signal', async () => {
      const clock = new FakeClock();
      await sleep(clock, 10_000, AbortSignal.abort());
      expect(clock.pendingTimers).to.equal(0);
    });
  });

  describe('realClock', () => {
    it('tells wall-clock time and runs timers (negative delays as 0) that can be cancelled', async () => {
      expect(Math.abs(realClock.now() - Date.now())).to.be.below(50);
      const fired: string[] = [];
      const cancelled = realClock.setTimer(() => fired.push('cancelled'), 0);
      realClock.setTimer(() => fired.push('ran'), -5);
      cancelled.cancel();
      await new Promise((r) => setTimeout(r, 1)); // due after the 0 ms timers above
      expect(fired).to.deep.equal(['ran']);
    });
  });

  describe('FakeClock', () => {
    it('fires due timers in time order (ties in the order set), including ones set by fired callbacks', () => {
      const clock = new FakeClock(0);
      const fired: string[] = [];
      clock.setTimer(() => fired.push(`b@${clock.now()}`), 20);
      clock.setTimer(() => {
        fired.push(`a@${clock.now()}`);
        clock.setTimer(() => fired.push(`nested@${clock.now()}`), 5);
        clock.setTimer(() => fired.push(`late@${clock.now()}`), 500);
      }, 10);
      clock.setTimer(() => fired.push(`b2@${clock.now()}`), 20);
      clock.advance(100);
      expect(fired).to.deep.equal(['a@10', 'nested@15', 'b@20', 'b2@20']);
      expect(clock.now()).to.equal(100);
      expect(clock.pendingTimers).to.equal(1);
      expect(clock.pendingDelays).to.deep.equal([410]);
    });

    it('does not fire cancelled timers', () => {
      const clock = new FakeClock(0);
      let fired = false;
      clock.setTimer(() => (fired = true), 1).cancel();
      clock.advance(10);
      expect(fired).to.equal(false);
      expect(clock.pendingTimers).to.equal(0);
    });

    it('advanceAsync lets async loops that sleep on it run', async () => {
      const clock = new FakeClock(0);
      const wakes: number[] = [];
      void (async () => {
        for (let i = 0; i < 3; i++) {
          await sleep(clock, 100);
          wakes.push(clock.now());
        }
      })();
      await clock.advanceAsync(1000);
      expect(wakes).to.deep.equal([100, 200, 300]);
    });
  });
});

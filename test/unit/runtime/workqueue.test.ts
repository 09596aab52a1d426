/**
 * WorkQueue's client-go guarantees on a fake clock: dedup, FIFO fairness,
 * one worker per key at a time, dirty re-queue on done, earliest-wins
 * delays, rate-limited re-adds, metrics and shutdown; then a fast-check
 * property over random add/get/done sequences.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { ExponentialBackoffLimiter, type RateLimiter } from '../../../runtime/rate-limiter.js';
import { WorkQueue, type QueueMetrics } from '../../../runtime/workqueue.js';
import { FakeClock, flushMicrotasks } from '../../support/fake-clock.js';

/** A get() whose result can be inspected synchronously after a flush. */
function pendingGet(q: WorkQueue): { settled: boolean; key: string | undefined } {
  const r = { settled: false, key: undefined as string | undefined };
  void q.get().then((k) => Object.assign(r, { settled: true, key: k }));
  return r;
}

async function drainReady(q: WorkQueue): Promise<string[]> {
  const out: string[] = [];
  while (q.length > 0) out.push((await q.get())!);
  return out;
}

describe('WorkQueue', () => {
  let clock: FakeClock;
  let q: WorkQueue;
  beforeEach(() => {
    clock = new FakeClock();
    q = new WorkQueue({ clock });
  });

  describe('adds and order', () => {
    it('dedups a key added several times before it is handed out', async () => {
      q.add('a');
      q.add('b');
      q.add('a');
      q.add('a');
      expect(q.length).to.equal(2);
      expect(await drainReady(q)).to.deep.equal(['a', 'b']);
    });

    it('hands keys out in the order they became ready (FIFO), a re-add keeping its first place', async () => {
      for (const k of ['c', 'a', 'b', 'c', 'd', 'a']) q.add(k);
      expect(await drainReady(q)).to.deep.equal(['c', 'a', 'b', 'd']);
    });

    it('serves waiting get() calls first come, first served', async () => {
      const first = pendingGet(q);
      const second = pendingGet(q);
      await flushMicrotasks();
      expect(first.settled || second.settled, 'nothing to hand out yet').to.equal(false);
      q.add('x');
      q.add('y');
      await flushMicrotasks();
      expect([first.key, second.key]).to.deep.equal(['x', 'y']);
      expect(q.length).to.equal(0);
    });

    it('a key re-queued by done() goes behind keys that were already waiting', async () => {
      q.add('a');
      q.add('b');
      expect(await q.get()).to.equal('a');
      q.add('c');
      q.add('a'); // while a is processed: only marked dirty
      q.done('a');
      expect(await drainReady(q)).to.deep.equal(['b', 'c', 'a']);
    });

    it('stays FIFO across the internal compaction of its buffer', async () => {
      const handed: string[] = [];
      for (let i = 0; i < 1100; i++) q.add(`k${i}`);
      for (let i = 0; i < 1050; i++) {
        const k = (await q.get())!;
        handed.push(k);
        q.done(k);
      }
      for (let i = 1100; i < 1200; i++) q.add(`k${i}`);
      q.add('k1060'); // still queued: no effect
      handed.push(...(await drainReady(q)));
      expect(handed).to.deep.equal(Array.from({ length: 1200 }, (_, i) => `k${i}`));
    });
  });

  describe('the urgent lane', () => {
    it('hands urgent keys out before the others, each lane in FIFO order', async () => {
      q.add('a');
      q.add('b');
      q.addUrgent('u1');
      q.add('c');
      q.addUrgent('u2');
      expect(await drainReady(q)).to.deep.equal(['u1', 'u2', 'a', 'b', 'c']);
    });

    it('promotes a key already waiting in the normal lane, handing it out once', async () => {
      q.add('a');
      q.add('b');
      q.addUrgent('b');
      expect(q.length).to.equal(2);
      expect(await drainReady(q)).to.deep.equal(['b', 'a']);
    });

    it('queues a key added urgently while it is processed in the urgent lane on done', async () => {
      q.add('x');
      const k = (await q.get())!;
      q.add('a');
      q.addUrgent('x');
      q.done(k);
      expect(await drainReady(q)).to.deep.equal(['x', 'a']);
    });

    it('is forgotten once the key is handed out: a later plain add waits its turn', async () => {
      q.addUrgent('x');
      q.done((await q.get())!);
      q.add('a');
      q.add('x');
      expect(await drainReady(q)).to.deep.equal(['a', 'x']);
    });
  });

  describe('one worker per key', () => {
    it('never hands a key to a second worker while the first processes it; after done it goes out exactly once', async () => {
      q.add('a');
      const w1 = await q.get();
      expect(w1).to.equal('a');
      expect(q.isProcessing('a')).to.equal(true);

      const w2 = pendingGet(q);
      q.add('a');
      q.add('a');
      await flushMicrotasks();
      expect(w2.settled, 'a is still processed by worker 1').to.equal(false);
      expect(q.length).to.equal(0);

      q.done('a');
      await flushMicrotasks();
      expect(w2).to.deep.equal({ settled: true, key: 'a' });
      expect(q.isProcessing('a')).to.equal(true);

      const w3 = pendingGet(q);
      q.done('a');
      await flushMicrotasks();
      expect(w3.settled, 'a was added once more while processed, and that add has been served').to.equal(false);
      expect(q.isProcessing('a')).to.equal(false);
    });

    it('other keys keep flowing while one is processed', async () => {
      q.add('a');
      expect(await q.get()).to.equal('a');
      q.add('a');
      q.add('b');
      expect(await q.get()).to.equal('b');
      expect(q.length).to.equal(0);
    });

    it('done() of a key not added meanwhile does not re-queue it', async () => {
      q.add('a');
      q.done((await q.get())!);
      expect(q.length).to.equal(0);
      expect(q.isProcessing('a')).to.equal(false);
    });
  });

  describe('delayed adds', () => {
    it('addAfter makes the key ready only once its delay has passed', () => {
      q.addAfter('a', 100);
      clock.advance(99);
      expect(q.length).to.equal(0);
      clock.advance(1);
      expect(q.length).to.equal(1);
    });

    it('addAfter keeps the earliest time: a shorter delay replaces a longer one', () => {
      q.addAfter('a', 1000);
      q.addAfter('a', 50);
      expect(clock.pendingTimers, 'the longer timer is cancelled').to.equal(1);
      clock.advance(50);
      expect(q.length).to.equal(1);
    });

    it('addAfter keeps the earliest time: a longer delay does not postpone a shorter one', async () => {
      q.addAfter('a', 50);
      clock.advance(10);
      q.addAfter('a', 1000);
      expect(clock.pendingTimers).to.equal(1);
      clock.advance(40);
      expect(q.length).to.equal(1);
      expect(await q.get()).to.equal('a');
      q.done('a');
      clock.advance(10_000);
      expect(q.length, 'the longer requeue was dropped, not queued for later').to.equal(0);
    });

    it('addAfter compares delays on the monotonic clock: a wall-clock step forward does not drop a shorter requeue', () => {
      q.addAfter('a', 60_000);
      clock.stepWall(120_000);
      q.addAfter('a', 50);
      clock.advance(50);
      expect(q.length, 'the 50-ms requeue was kept').to.equal(1);
    });

    it('addAfter with a delay ≤ 0 adds at once', () => {
      q.addAfter('a', 0);
      q.addAfter('b', -5);
      expect(q.length).to.equal(2);
    });

    it('a delayed add that fires while the key is processed re-queues it on done', async () => {
      q.add('a');
      await q.get();
      q.addAfter('a', 10);
      clock.advance(10);
      expect(q.length).to.equal(0);
      q.done('a');
      expect(q.length).to.equal(1);
    });

    it('addRateLimited waits the limiter’s backoff, growing per failure; forget resets it', () => {
      const ready = (): number => {
        let ms = 0;
        while (q.length === 0) {
          clock.advance(1);
          ms++;
        }
        void q.get(); // takes the key synchronously
        q.done('a');
        return ms;
      };
      const delays: number[] = [];
      for (let i = 0; i < 4; i++) {
        q.addRateLimited('a');
        delays.push(ready());
      }
      expect(delays).to.deep.equal([5, 10, 20, 40]);
      expect(q.retries('a')).to.equal(4);
      q.forget('a');
      expect(q.retries('a')).to.equal(0);
      q.addRateLimited('a');
      expect(ready()).to.equal(5);
    });

    it('uses the rate limiter it is given', () => {
      const asked: string[] = [];
      const limiter: RateLimiter = { when: (k) => (asked.push(k), 777), forget: () => undefined, retries: () => 0 };
      q = new WorkQueue({ clock, rateLimiter: limiter });
      q.addRateLimited('z');
      expect(asked).to.deep.equal(['z']);
      expect(clock.pendingDelays).to.deep.equal([777]);
    });
  });

  describe('shutDown', () => {
    it('resolves every waiting get() with undefined', async () => {
      const waiting = [pendingGet(q), pendingGet(q), pendingGet(q)];
      await flushMicrotasks();
      expect(waiting.some((w) => w.settled)).to.equal(false);
      q.shutDown();
      await flushMicrotasks();
      expect(waiting).to.deep.equal([0, 1, 2].map(() => ({ settled: true, key: undefined })));
      expect(q.isShuttingDown).to.equal(true);
    });

    it('hands out nothing more, ignores adds, cancels delayed adds and does not re-queue dirty keys', async () => {
      q.add('a');
      q.add('b');
      expect(await q.get()).to.equal('a');
      q.add('a');
      q.addAfter('c', 100);
      q.shutDown();
      expect(clock.pendingTimers).to.equal(0);
      q.add('d');
      expect(await q.get(), 'b was queued, but the queue has stopped handing out keys').to.equal(undefined);
      q.done('a');
      expect(await q.get()).to.equal(undefined);
      clock.advance(1000);
      expect(await q.get()).to.equal(undefined);
    });
  });

  describe('metrics', () => {
    it('reports adds, depth, wait time in seconds and retries', async () => {
      const seen = { added: 0, retried: 0, depth: [] as number[], latency: [] as number[] };
      const metrics: QueueMetrics = {
        added: () => void seen.added++,
        retried: () => void seen.retried++,
        depth: (n) => void seen.depth.push(n),
        latency: (s) => void seen.latency.push(s),
      };
      q = new WorkQueue({ clock, metrics, rateLimiter: new ExponentialBackoffLimiter(5, 1000) });
      q.add('a');
      q.add('a');
      q.add('b');
      clock.advance(2500);
      expect(await q.get()).to.equal('a');
      q.addRateLimited('a');
      expect(seen).to.deep.equal({ added: 2, retried: 1, depth: [1, 2, 1], latency: [2.5] });
    });
  });

  describe('property: random add/get/done sequences', () => {
    type Op = { op: 'add'; key: string; urgent: boolean } | { op: 'get' } | { op: 'done'; pick: number };
    const keys = ['a', 'b', 'c', 'd'];
    const op: fc.Arbitrary<Op> = fc.oneof(
      fc.record({ op: fc.constant('add' as const), key: fc.constantFrom(...keys), urgent: fc.boolean() }),
      fc.record({ op: fc.constant('get' as const) }),
      fc.record({ op: fc.constant('done' as const), pick: fc.nat(3) }),
    );

    it('never hands out a key being processed, never hands one out without an add since its last hand-out, never loses one', async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(op, { maxLength: 60 }), fc.integer({ min: 1, max: 3 }), async (ops, waitersAtEnd) => {
          const queue = new WorkQueue({ clock: new FakeClock() });
          const held = new Set<string>();
          /** Keys added since they were last handed out: each must be handed out again. */
          const owed = new Set<string>();
          const violations: string[] = [];
          const take = () =>
            void queue.get().then((k) => {
              if (k === undefined) return;
              if (held.has(k)) violations.push(`${k} handed out while processed`);
              if (!owed.has(k)) violations.push(`${k} handed out with no add since its last hand-out`);
              held.add(k);
              owed.delete(k);
            });
          for (const o of ops) {
            if (o.op === 'add') {
              owed.add(o.key);
              if (o.urgent) queue.addUrgent(o.key);
              else queue.add(o.key);
            } else if (o.op === 'get') {
              take();
            } else if (held.size > 0) {
              const k = [...held][o.pick % held.size]!;
              held.delete(k);
              queue.done(k);
            }
            await flushMicrotasks();
          }
          // Drain: workers finish what they hold and keep asking until nothing is left.
          for (let i = 0; i < waitersAtEnd; i++) take();
          for (let round = 0; round < 20 && (held.size > 0 || queue.length > 0); round++) {
            for (const k of [...held]) {
              held.delete(k);
              queue.done(k);
            }
            while (queue.length > 0) take();
            await flushMicrotasks();
            for (const k of [...held]) {
              held.delete(k);
              queue.done(k);
            }
            await flushMicrotasks();
          }
          queue.shutDown();
          await flushMicrotasks();
          expect(violations).to.deep.equal([]);
          expect([...owed], 'keys added after their last hand-out but never handed out again').to.deep.equal([]);
        }),
        { numRuns: 300 },
      );
    });
  });
});

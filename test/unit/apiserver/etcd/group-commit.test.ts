/**
 * Group commit (apiserver/etcd/group-commit.ts) over a sender whose
 * transactions the test answers by hand: a write with a free slot leaves
 * alone at once, writes that wait leave together, a batch holds each key
 * once and keeps within its limits, a batch etcd refused for one write's
 * sake is re-sent write by write, and any other failure is every write's.
 * A property checks the invariants over random arrivals and answers. (Two
 * writes of one key may still be out at once in different transactions, as
 * two concurrent requests always could.)
 */
import { expect } from 'chai';
import { castGrpcError, GRPCUnavailableError } from 'etcd3';
import fc from 'fast-check';
import { GroupCommit, type BatchTxnSender, type GroupCommitLimits } from '../../../../apiserver/etcd/group-commit.js';
import { AmbiguousWriteError } from '../../../../apiserver/etcd/txn-client.js';
import type { TxnIfMod, TxnOutcome } from '../../../../apiserver/etcd/txn-codec.js';

interface Sent {
  keys: string[];
  batch: boolean;
  done: boolean;
  answer(outcomes: TxnOutcome[]): void;
  fail(err: unknown): void;
}

/** A sender that records each transaction and leaves its answer to the test. */
class HandSender implements BatchTxnSender {
  readonly sent: Sent[] = [];

  txnIfMod(t: TxnIfMod): Promise<TxnOutcome> {
    return this.record([t], false).then((o) => o[0]!);
  }

  txnBatch(txns: readonly TxnIfMod[]): Promise<TxnOutcome[]> {
    return this.record(txns, true);
  }

  open(): Sent[] {
    return this.sent.filter((s) => !s.done);
  }

  private record(txns: readonly TxnIfMod[], batch: boolean): Promise<TxnOutcome[]> {
    return new Promise((resolve, reject) => {
      const s: Sent = {
        keys: txns.map((t) => t.key.toString()),
        batch,
        done: false,
        answer: (o) => ((s.done = true), resolve(o)),
        fail: (e) => ((s.done = true), reject(e)),
      };
      this.sent.push(s);
    });
  }
}

const put = (key: string, bytes = 10): TxnIfMod => ({ key: Buffer.from(key), modRevision: 0, then: { put: Buffer.alloc(bytes) } });
const ok = (revision: number): TxnOutcome => ({ succeeded: true, revision });
const LIMITS: GroupCommitLimits = { inFlight: 1, maxOps: 3, maxBytes: 100 };
const tick = () => new Promise((r) => setImmediate(r));

function commit(limits = LIMITS) {
  const sender = new HandSender();
  const sizes: number[] = [];
  return { sender, sizes, group: new GroupCommit(sender, (n) => sizes.push(n), limits) };
}

describe('group commit of etcd writes', () => {
  it('sends a write that finds a free slot at once, alone, as an ordinary transaction', async () => {
    const { sender, group, sizes } = commit();
    const outcome = group.txnIfMod(put('/a'));
    expect(sender.sent.map((s) => [s.keys, s.batch])).to.deep.equal([[['/a'], false]]);
    sender.sent[0]!.answer([ok(5)]);
    expect(await outcome).to.deep.equal(ok(5));
    expect(sizes).to.deep.equal([1]);
  });

  it('sends the writes that waited for a slot together, and answers each its own outcome', async () => {
    const { sender, group, sizes } = commit();
    const first = group.txnIfMod(put('/a'));
    const waiting = [group.txnIfMod(put('/b')), group.txnIfMod(put('/c'))];
    expect(sender.sent, 'the slot is taken').to.have.length(1);
    sender.sent[0]!.answer([ok(5)]);
    expect(await first).to.deep.equal(ok(5));
    await tick();
    expect(sender.sent[1]).to.deep.include({ keys: ['/b', '/c'], batch: true });
    sender.sent[1]!.answer([ok(6), { succeeded: false, revision: 6 }]);
    expect(await Promise.all(waiting)).to.deep.equal([ok(6), { succeeded: false, revision: 6 }]);
    expect(sizes).to.deep.equal([1, 2]);
  });

  it('puts a key in a batch once: a second write of it waits for the next, in order', async () => {
    const { sender, group } = commit({ ...LIMITS, maxOps: 10 });
    void group.txnIfMod(put('/x'));
    const writes = ['/a', '/b', '/a', '/c', '/a'].map((k) => group.txnIfMod(put(k)));
    sender.sent[0]!.answer([ok(1)]);
    await tick();
    expect(sender.sent[1]!.keys).to.deep.equal(['/a', '/b', '/c']);
    sender.sent[1]!.answer([ok(2), ok(2), ok(2)]);
    await tick();
    expect(sender.sent[2]!.keys, 'the second write of /a, alone').to.deep.equal(['/a']);
    sender.sent[2]!.answer([ok(3)]);
    await tick();
    expect(sender.sent[3]!.keys).to.deep.equal(['/a']);
    sender.sent[3]!.answer([ok(4)]);
    expect((await Promise.all(writes)).map((o) => o.revision)).to.deep.equal([2, 2, 3, 2, 4]);
  });

  it('keeps a batch within its writes and bytes; a write over the byte limit leaves alone', async () => {
    const { sender, group } = commit();
    void group.txnIfMod(put('/x'));
    for (const [k, bytes] of [['/a', 10], ['/b', 10], ['/c', 10], ['/d', 10], ['/big', 500], ['/e', 60], ['/f', 50]] as const) void group.txnIfMod(put(k, bytes));
    const batches = [];
    for (let i = 0; i < 5; i++) {
      const s = sender.open()[0]!;
      batches.push(s.keys);
      s.answer(s.keys.map(() => ok(i)));
      await tick();
    }
    expect(batches).to.deep.equal([['/x'], ['/a', '/b', '/c'], ['/d', '/e'], ['/big'], ['/f']]);
  });

  it('sends a batch etcd refused for what one write carries again write by write, each with its own answer', async () => {
    const { sender, group, sizes } = commit();
    void group.txnIfMod(put('/x'));
    const writes = ['/a', '/b', '/c'].map((k) => group.txnIfMod(put(k)));
    sender.sent[0]!.answer([ok(1)]);
    await tick();
    sender.sent[1]!.fail(castGrpcError(Object.assign(new Error('5 NOT_FOUND: etcdserver: requested lease not found'), { code: 5 })));
    await tick();
    const alone = sender.sent.slice(2);
    expect(alone.map((s) => [s.keys, s.batch])).to.deep.equal([[['/a'], false], [['/b'], false], [['/c'], false]]);
    alone[0]!.answer([ok(2)]);
    alone[1]!.fail(new Error('the lease of /b is gone'));
    alone[2]!.answer([ok(3)]);
    const settled = await Promise.allSettled(writes);
    expect(settled.map((s) => (s.status === 'fulfilled' ? s.value.revision : (s.reason as Error).message))).to.deep.equal([2, 'the lease of /b is gone', 3]);
    expect(sizes).to.deep.equal([1, 3, 1, 1, 1]);
  });

  for (const [what, err] of [
    ['may have been applied', new AmbiguousWriteError(new Error('no answer'))],
    ['found etcd unavailable', castGrpcError(Object.assign(new Error('14 UNAVAILABLE: connect ECONNREFUSED'), { code: 14 }))],
  ] as const) {
    it(`fails every write of a batch that ${what}, and sends none again`, async () => {
      const { sender, group } = commit();
      void group.txnIfMod(put('/x'));
      const writes = ['/a', '/b'].map((k) => group.txnIfMod(put(k)));
      sender.sent[0]!.answer([ok(1)]);
      await tick();
      sender.sent[1]!.fail(err);
      const settled = await Promise.allSettled(writes);
      expect(settled.map((s) => s.status === 'rejected' && s.reason)).to.deep.equal([err, err]);
      expect(sender.sent).to.have.length(2);
    });
  }

  it('over any arrivals and answers: at most inFlight transactions out, each key once a batch, and every write answered once', async () => {
    const step = fc.oneof(
      fc.record({ write: fc.constantFrom('/a', '/b', '/c', '/d', '/e'), bytes: fc.integer({ min: 1, max: 150 }) }),
      fc.record({ answer: fc.nat(), fail: fc.boolean() }),
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 1, max: 3 }), fc.array(step, { maxLength: 40 }), async (inFlight, steps) => {
        const { sender, group } = commit({ inFlight, maxOps: 3, maxBytes: 200 });
        const answers = new Map<number, number>(); // write index → times answered
        let rev = 0;
        const answer = (s: Sent, fail: boolean) => (fail ? s.fail(new GRPCUnavailableError('down')) : s.answer(s.keys.map(() => ok(++rev))));
        const check = () => {
          expect(sender.open().length).to.be.at.most(inFlight);
          for (const s of sender.sent) expect(new Set(s.keys).size, `batch ${s.keys.join(',')}`).to.equal(s.keys.length);
        };
        let n = 0;
        for (const st of steps) {
          if ('write' in st) {
            const i = n++;
            const answered = () => answers.set(i, (answers.get(i) ?? 0) + 1);
            void group.txnIfMod(put(st.write, st.bytes)).then(answered, answered);
          } else {
            const open = sender.open();
            if (open.length) answer(open[st.answer % open.length]!, st.fail);
          }
          await tick();
          check();
        }
        for (let open = sender.open(); open.length; open = sender.open()) {
          answer(open[0]!, false);
          await tick();
          check();
        }
        expect([...Array(n).keys()].map((i) => answers.get(i) ?? 0)).to.deep.equal(Array(n).fill(1));
      }),
      { numRuns: 150 },
    );
  });
});

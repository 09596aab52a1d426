/** WatchBudget: which watches are cut off when clients stop reading. */
import { expect } from 'chai';
import { STREAM_LIMIT_BYTES, WatchBudget, type BudgetedStream } from '../../../../apiserver/http/watch-budget.js';

const MiB = 2 ** 20;

function stream(name: string, bytes: number, cut: string[], initial = 0): BudgetedStream & { bytes: number } {
  return { bytes, buffered() { return this.bytes; }, behind() { return Math.max(0, this.bytes - initial); }, cutOff: () => cut.push(name) };
}

describe('WatchBudget', () => {
  it('cuts off nothing while all streams together stay within the budget', () => {
    const cut: string[] = [];
    const budget = new WatchBudget(40 * MiB);
    const streams = ['a', 'b', 'c'].map((n) => stream(n, 12 * MiB, cut));
    streams.forEach((s) => budget.add(s));
    for (const s of streams) budget.wrote(s, 12 * MiB);
    expect(cut).to.deep.equal([]);
    expect(budget.buffered()).to.equal(36 * MiB);
  });

  it('over the budget, cuts off the streams holding most first, down to three quarters of it', () => {
    const cut: string[] = [];
    const reasons: string[] = [];
    const budget = new WatchBudget(40 * MiB, (r) => reasons.push(r));
    const sizes: Record<string, number> = { small: 2, mid: 10, big: 14, bigger: 15 };
    const streams = Object.entries(sizes).map(([n, mb]) => stream(n, mb * MiB, cut));
    streams.forEach((s) => budget.add(s));
    budget.wrote(streams[0]!, 41 * MiB);
    // 41 MiB: cutting "bigger" leaves 26 MiB, under 30.
    expect(cut).to.deep.equal(['bigger']);
    expect(reasons).to.deep.equal(['budget']);
    expect(budget.buffered()).to.equal(26 * MiB);
  });

  it('counts exactly only when its estimate passes the budget: clients that read leave nothing to cut', () => {
    const cut: string[] = [];
    const budget = new WatchBudget(10 * MiB);
    const s = stream('reader', 0, cut);
    budget.add(s);
    for (let i = 0; i < 100; i++) budget.wrote(s, MiB); // 100 MiB written, all read at once
    expect(cut).to.deep.equal([]);
  });

  it('cuts off a stream over its own cap at once, and forgets it', () => {
    const cut: string[] = [];
    const reasons: string[] = [];
    const budget = new WatchBudget(1024 * MiB, (r) => reasons.push(r));
    const s = stream('stuck', STREAM_LIMIT_BYTES + 1, cut);
    budget.add(s);
    budget.wrote(s, 1);
    expect([cut, reasons]).to.deep.equal([['stuck'], ['stream']]);
    expect(budget.buffered()).to.equal(0);
  });

  it("lets a stream's initial state past its own cap (a large WatchList), while the budget of all still counts it", () => {
    const cut: string[] = [];
    const budget = new WatchBudget(100 * MiB);
    const listing = stream('listing', 40 * MiB, cut, 40 * MiB);
    budget.add(listing);
    budget.wrote(listing, 40 * MiB);
    expect(cut, 'cut off at once, its client could never sync').to.deep.equal([]);
    expect(budget.buffered()).to.equal(40 * MiB);
    listing.bytes = 40 * MiB + STREAM_LIMIT_BYTES + 1;
    budget.wrote(listing, STREAM_LIMIT_BYTES + 1);
    expect(cut, 'falling behind on live events past the cap still cuts it off').to.deep.equal(['listing']);
  });
});

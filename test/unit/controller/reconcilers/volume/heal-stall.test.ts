/** healRecrawl: when the controller asks every self-heal daemon to start again — pure, no I/O. */
import { expect } from 'chai';
import { HEAL_STALL_MS, healRecrawl, type HealStallInput } from '../../../../../controller/reconcilers/volume/heal-stall.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');
const at = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const input = (over: Partial<HealStallInput> = {}): HealStallInput => ({
  bricks: [{ running: true, pendingHeals: 2 }, { running: true, pendingHeals: 0 }, { running: true, pendingHeals: 1 }],
  splitBrain: false,
  countsSince: NOW - HEAL_STALL_MS,
  recrawl: undefined,
  healTimeoutMs: 600_000,
  now: NOW,
  ...over,
});

describe('healRecrawl', () => {
  it('asks for a restart once the pending counts stayed the same for HEAL_STALL_MS with every brick running', () => {
    expect(healRecrawl(input())).to.deep.equal({ recrawl: `${at(NOW)}#0` });
  });

  it('waits out the rest of HEAL_STALL_MS while the counts are newer, and says when to look again', () => {
    expect(healRecrawl(input({ countsSince: NOW - 10_000 }))).to.deep.equal({ recrawl: undefined, inMs: HEAL_STALL_MS - 10_000 });
  });

  it('keeps the token when nothing waits, a brick is down, or a file is in split-brain (no restart heals that)', () => {
    const old = `${at(NOW - 3_600_000)}#0`;
    expect(healRecrawl(input({ recrawl: old, bricks: [{ running: true, pendingHeals: 0 }, { running: true, pendingHeals: 0 }] }))).to.deep.equal({ recrawl: old });
    expect(healRecrawl(input({ recrawl: old, bricks: [{ running: false, pendingHeals: 0 }, { running: true, pendingHeals: 3 }] }))).to.deep.equal({ recrawl: old });
    expect(healRecrawl(input({ recrawl: old, splitBrain: true }))).to.deep.equal({ recrawl: old });
  });

  it('doubles the wait after each restart that left the counts as they were, counting from that restart', () => {
    const first = NOW - 2 * HEAL_STALL_MS;
    const stale = { countsSince: first - HEAL_STALL_MS, recrawl: `${at(first)}#0` };
    expect(healRecrawl(input({ ...stale, now: first + HEAL_STALL_MS }))).to.deep.equal({ recrawl: `${at(first)}#0`, inMs: HEAL_STALL_MS });
    expect(healRecrawl(input(stale))).to.deep.equal({ recrawl: `${at(NOW)}#1` });
  });

  it('starts over at HEAL_STALL_MS when the counts moved after the last restart', () => {
    const last = NOW - 5 * HEAL_STALL_MS;
    expect(healRecrawl(input({ recrawl: `${at(last)}#3`, countsSince: last + 1000 }))).to.deep.equal({ recrawl: `${at(NOW)}#0` });
  });

  it('stops asking once the doubled wait reaches the daemons\' own crawl interval (cluster.heal-timeout)', () => {
    // After attempt 4 the next wait would be 32 × 30 s = 960 s, past the default 600 s crawl.
    const last = NOW - 40 * HEAL_STALL_MS;
    const stale = { countsSince: last - HEAL_STALL_MS, recrawl: `${at(last)}#4` };
    expect(healRecrawl(input(stale))).to.deep.equal({ recrawl: `${at(last)}#4` });
    expect(healRecrawl(input({ ...stale, healTimeoutMs: 86_400_000 }))).to.deep.equal({ recrawl: `${at(NOW)}#5` });
  });
});

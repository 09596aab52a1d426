/**
 * A Clock whose time moves only when a test calls advance(), so queues,
 * rate limiters and leader election are tested without real sleeping.
 * Timers fire in due order (ties in the order they were set); a timer a
 * firing callback sets inside the advanced window fires in the same call.
 */
import type { Clock, TimerHandle } from '../../runtime/clock.js';

interface FakeTimer {
  at: number;
  seq: number;
  fn: () => void;
}

/** Resolves after pending promise callbacks (and the I/O phase) have run. */
export const flushMicrotasks = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/** A hand-driven Clock. */
export class FakeClock implements Clock {
  private time: number;
  private seq = 0;
  private timers: FakeTimer[] = [];
  // How far the wall clock was stepped (stepWall): now() only; timers and monotonic() keep real time.
  private wallOffset = 0;
  // How long the machine was suspended (suspend): the wall clock and monotonic() (boot time) count it, timers and elapsed() do not.
  private suspended = 0;

  constructor(start = 1_700_000_000_000) {
    this.time = start;
  }

  now(): number {
    return this.time + this.wallOffset + this.suspended;
  }

  monotonic(): number {
    return this.time + this.suspended;
  }

  elapsed(): number {
    return this.time;
  }

  /** Steps the wall clock (NTP, `date -s`, a resumed VM), as the kernel does: monotonic time and timers do not move. */
  stepWall(ms: number): void {
    this.wallOffset += ms;
  }

  /** Suspends the machine for ms, as the kernel counts it: the wall clock and boot time move on; timers stand still. */
  suspend(ms: number): void {
    this.suspended += ms;
  }

  setTimer(fn: () => void, ms: number): TimerHandle {
    const timer: FakeTimer = { at: this.time + Math.max(0, ms), seq: this.seq++, fn };
    this.timers.push(timer);
    return { cancel: () => void (this.timers = this.timers.filter((t) => t !== timer)) };
  }

  /** Timers set and neither fired nor cancelled. */
  get pendingTimers(): number {
    return this.timers.length;
  }

  /** Due times (ms from now) of the pending timers, soonest first. */
  get pendingDelays(): number[] {
    return this.sorted().map((t) => t.at - this.time);
  }

  /** Moves time forward by ms, firing every timer due by then, in order. */
  advance(ms: number): void {
    const target = this.time + ms;
    for (let next = this.nextDue(target); next; next = this.nextDue(target)) {
      this.timers = this.timers.filter((t) => t !== next);
      this.time = next.at;
      next.fn();
    }
    this.time = target;
  }

  /**
   * Like advance, but lets promise continuations run after each timer, so
   * async loops that sleep on this clock (sleep → await → sleep) progress.
   */
  async advanceAsync(ms: number): Promise<void> {
    const target = this.time + ms;
    await flushMicrotasks();
    for (let next = this.nextDue(target); next; next = this.nextDue(target)) {
      this.timers = this.timers.filter((t) => t !== next);
      this.time = next.at;
      next.fn();
      await flushMicrotasks();
    }
    this.time = target;
    await flushMicrotasks();
  }

  private sorted(): FakeTimer[] {
    return [...this.timers].sort((a, b) => a.at - b.at || a.seq - b.seq);
  }

  private nextDue(target: number): FakeTimer | undefined {
    const next = this.sorted()[0];
    return next && next.at <= target ? next : undefined;
  }
}

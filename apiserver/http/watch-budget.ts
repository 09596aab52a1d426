/**
 * The memory all watches of a process may hold for clients that do not
 * read: each stream has its own cap, and all together share one budget.
 * Over the budget, the streams holding most (the slowest readers) are cut
 * off first until the rest fit in three quarters of it, as kube closes a
 * watcher that falls behind: the client lists again and re-watches.
 * Cutting destroys the connection, because ending it would keep the unread
 * bytes until the client read them.
 */

/** A stream the budget can weigh and cut off. */
export interface BudgetedStream {
  /** Bytes written and not yet read by the client. */
  buffered(): number;
  /** Of those, what counts against the stream's own cap (the initial state is let through once). */
  behind(): number;
  /** Drops the connection and what is queued on it. */
  cutOff(): void;
}

/** Per-stream cap: a client this far behind is not coming back. */
export const STREAM_LIMIT_BYTES = 16 * 1024 * 1024;

/** Counts what watches buffer and cuts off the slowest when over budget. */
export class WatchBudget {
  private readonly streams = new Set<BudgetedStream>();
  /** Bytes written since the last exact count, added to it: an upper bound of what is buffered. */
  private estimate = 0;

  constructor(
    private readonly limitBytes: number,
    private readonly onCutOff: (reason: 'stream' | 'budget') => void = () => undefined,
  ) {}

  add(s: BudgetedStream): void {
    this.streams.add(s);
  }

  remove(s: BudgetedStream): void {
    this.streams.delete(s);
  }

  /** Bytes buffered by all streams now. */
  buffered(): number {
    let total = 0;
    for (const s of this.streams) total += s.buffered();
    return total;
  }

  /**
   * After `s` wrote `bytes`: cuts it off over its own cap, and the slowest streams when the budget may
   * be exceeded. Counting exactly walks every stream, so it is done only when the estimate passes the budget.
   */
  wrote(s: BudgetedStream, bytes: number): void {
    if (s.behind() > STREAM_LIMIT_BYTES) return this.cutOff(s, 'stream');
    this.estimate += bytes;
    if (this.estimate > this.limitBytes) this.enforce();
  }

  private enforce(): void {
    const bySize = [...this.streams].map((s) => ({ s, bytes: s.buffered() })).sort((a, b) => b.bytes - a.bytes);
    let total = bySize.reduce((sum, x) => sum + x.bytes, 0);
    // Down to three quarters, so that a budget reached is not counted again at the next write.
    for (const { s, bytes } of total > this.limitBytes ? bySize : []) {
      if (total <= 0.75 * this.limitBytes) break;
      this.cutOff(s, 'budget');
      total -= bytes;
    }
    this.estimate = total;
  }

  private cutOff(s: BudgetedStream, reason: 'stream' | 'budget'): void {
    this.streams.delete(s);
    s.cutOff();
    this.onCutOff(reason);
  }
}

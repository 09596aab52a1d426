/**
 * The response side of a watch: a chunked 200 of newline-delimited JSON
 * lines. Lines are gathered for up to FLUSH_MS and written together (under
 * load one TLS write carries many events, for a few milliseconds of added
 * latency); an idle stream gets a keepalive line (client-node gives up after
 * 30 s of silence); the stream ends at its deadline, when the client leaves,
 * or is cut off when its client reads so slowly that too much is buffered
 * for it (watch-budget.ts).
 */
import type { ApiResponse as Response } from './context.js';
import type { BudgetedStream, WatchBudget } from './watch-budget.js';

const FLUSH_MS = 5;

/** Timing of one stream. */
export interface EventStreamOptions {
  keepaliveMs: number;
  timeoutMs: number;
  /** The line to send when idle (a bookmark, or a bare newline). */
  keepaliveLine: () => string;
  budget: WatchBudget;
}

/** A watch response being written. */
export class EventStream implements BudgetedStream {
  private pending: string[] = [];
  private closed = false;
  /** Bytes of the initial state not counted against the stream's cap (see initial()). */
  private allowance = 0;
  private inInitial = false;
  private readonly keepalive: NodeJS.Timeout;
  private readonly deadline: NodeJS.Timeout;
  private readonly onCloseHandlers: (() => void)[] = [];
  private readonly budget: WatchBudget;

  constructor(private readonly res: Response, opts: EventStreamOptions) {
    this.budget = opts.budget;
    this.budget.add(this);
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    this.keepalive = setInterval(() => this.write(opts.keepaliveLine()), opts.keepaliveMs);
    this.deadline = setTimeout(() => this.close(), opts.timeoutMs);
    res.on('close', () => this.close());
    // The client has read everything once: from here on, all it leaves unread counts.
    res.on('drain', () => (this.allowance = 0));
  }

  /**
   * Runs `fn`, whose writes are the watch's initial state (a WatchList's ADDED events, or the replay of a
   * resourceVersion): not counted against the stream's cap until the client has read it all once. It
   * leaves in one write, so a collection larger than the cap was cut off at once, and its client, asking
   * again the same way, could never sync. The budget of all streams still counts it.
   */
  initial<T>(fn: () => T): T {
    this.inInitial = true;
    try {
      return fn();
    } finally {
      this.inInitial = false;
    }
  }

  /** Whether the stream has ended. */
  get isClosed(): boolean {
    return this.closed;
  }

  /** Runs `fn` once when the stream ends (immediately if it has). */
  onClose(fn: () => void): void {
    if (this.closed) fn();
    else this.onCloseHandlers.push(fn);
  }

  /** Queues one line (ending in a newline). */
  write(line: string): void {
    if (this.closed) return;
    if (this.inInitial) this.allowance += Buffer.byteLength(line);
    if (this.pending.push(line) === 1) setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Ends the stream after writing what is queued. */
  close(): void {
    if (this.end()) this.res.end(this.pending.join(''));
    this.pending = [];
  }

  /** Bytes written that the client has not read yet. */
  buffered(): number {
    return this.res.writableLength;
  }

  /** What the client is behind on: the bytes it has not read, less the initial state it has not read once yet. */
  behind(): number {
    return Math.max(0, this.res.writableLength - this.allowance);
  }

  /** Drops the connection with what is queued on it: the client re-watches. */
  cutOff(): void {
    if (this.end()) this.res.destroy();
    this.pending = [];
  }

  /** Marks the stream ended; false if it already was. */
  private end(): boolean {
    if (this.closed) return false;
    this.closed = true;
    clearInterval(this.keepalive);
    clearTimeout(this.deadline);
    this.budget.remove(this);
    for (const fn of this.onCloseHandlers) fn();
    return true;
  }

  private flush(): void {
    const chunk = this.pending.join('');
    this.pending = [];
    if (this.closed || chunk === '') return;
    this.res.write(chunk);
    this.budget.wrote(this, chunk.length);
  }
}

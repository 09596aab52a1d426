/**
 * The response side of a watch: a chunked 200 of newline-delimited JSON
 * lines. Lines are gathered for up to FLUSH_MS and written together (under
 * load one TLS write carries many events, for a few milliseconds of added
 * latency); an idle stream gets a keepalive line (client-node gives up after
 * 30 s of silence); the stream ends at its deadline, when the client leaves,
 * or when a client reads so slowly that too much is buffered for it.
 */
import type { ApiResponse as Response } from './context.js';

const FLUSH_MS = 5;
const MAX_BUFFERED_BYTES = 32 * 1024 * 1024;

/** Timing of one stream. */
export interface EventStreamOptions {
  keepaliveMs: number;
  timeoutMs: number;
  /** The line to send when idle (a bookmark, or a bare newline). */
  keepaliveLine: () => string;
}

/** A watch response being written. */
export class EventStream {
  private pending: string[] = [];
  private closed = false;
  private readonly keepalive: NodeJS.Timeout;
  private readonly deadline: NodeJS.Timeout;
  private readonly onCloseHandlers: (() => void)[] = [];

  constructor(private readonly res: Response, opts: EventStreamOptions) {
    res.writeHead(200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-cache, private', 'Transfer-Encoding': 'chunked' });
    res.flushHeaders();
    this.keepalive = setInterval(() => this.write(opts.keepaliveLine()), opts.keepaliveMs);
    this.deadline = setTimeout(() => this.close(), opts.timeoutMs);
    res.on('close', () => this.close());
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
    if (this.pending.push(line) === 1) setTimeout(() => this.flush(), FLUSH_MS);
  }

  /** Ends the stream after writing what is queued. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.keepalive);
    clearTimeout(this.deadline);
    for (const fn of this.onCloseHandlers) fn();
    this.res.end(this.pending.join(''));
    this.pending = [];
  }

  private flush(): void {
    const chunk = this.pending.join('');
    this.pending = [];
    if (this.closed || chunk === '') return;
    this.res.write(chunk);
    if (this.res.writableLength > MAX_BUFFERED_BYTES) this.close();
  }
}

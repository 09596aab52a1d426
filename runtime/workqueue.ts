/**
 * A rate-limited work queue with client-go's guarantees, written once and
 * used by every reconciler and by the agent.
 *
 * Concurrency model (single-threaded JS, many async workers):
 * - fair: keys are handed out in the order they became ready (FIFO), in
 *   two lanes: urgent keys (progress of work already under way, such as a
 *   node reporting an instance started) go before the others, so a burst
 *   of new objects cannot starve the status of the ones before them;
 * - a key is never processed by two workers at once: get() moves it into
 *   `processing`, and an add() while it is there only marks it dirty;
 * - done(key) re-queues a key that was added while it was processed, so no
 *   update is lost;
 * - delayed adds (addAfter, addRateLimited) keep the earliest ready time
 *   per key, so a later, longer requeue never postpones an earlier one.
 */
import { realClock, type Clock, type TimerHandle } from './clock.js';
import { defaultRateLimiter, type RateLimiter } from './rate-limiter.js';

/** Observations a queue reports (prometheus adapters implement this). */
export interface QueueMetrics {
  depth(n: number): void;
  added(): void;
  /** Seconds a key waited between becoming ready and being handed out. */
  latency(seconds: number): void;
  retried(): void;
}

/** Options of a WorkQueue. */
export interface WorkQueueOptions {
  clock?: Clock;
  rateLimiter?: RateLimiter;
  metrics?: QueueMetrics;
}

/** A FIFO of keys with dedup, per-key exclusion, delays and rate limits. */
export class WorkQueue {
  private readonly clock: Clock;
  private readonly limiter: RateLimiter;
  private readonly metrics: QueueMetrics | undefined;
  private readonly lanes = { urgent: new Lane(), normal: new Lane() };
  /** The lane each waiting key is queued in (a promoted key leaves a stale entry in the normal lane). */
  private readonly queuedIn = new Map<string, keyof WorkQueue['lanes']>();
  private readonly dirty = new Set<string>();
  private readonly processing = new Set<string>();
  private readonly readySince = new Map<string, number>();
  private readonly waiting = new Map<string, { at: number; timer: TimerHandle }>();
  private waiters: Array<(key: string | undefined) => void> = [];
  /** Keys to queue in the urgent lane when they are next queued. */
  private readonly urgentKeys = new Set<string>();
  private shuttingDown = false;

  constructor(opts: WorkQueueOptions = {}) {
    this.clock = opts.clock ?? realClock;
    this.limiter = opts.rateLimiter ?? defaultRateLimiter(this.clock);
    this.metrics = opts.metrics;
  }

  /** Marks key as needing work now. */
  add(key: string): void {
    if (this.shuttingDown || this.dirty.has(key)) return;
    this.metrics?.added();
    this.dirty.add(key);
    this.readySince.set(key, this.clock.now());
    if (this.processing.has(key)) return;
    this.enqueue(key);
  }

  /** Marks key as needing work now, ahead of the keys added with add(); promotes it if it already waits. */
  addUrgent(key: string): void {
    if (this.shuttingDown) return;
    this.urgentKeys.add(key);
    if (this.queuedIn.get(key) === 'normal') return this.enqueue(key);
    this.add(key);
  }

  /** Adds key after ms (keeping any earlier pending time). */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    // On the timers' clock: after a wall-clock step forward, a short requeue (a hand-over poll, a fence retry)
    // was taken for later than a pending one up to a minute away, and dropped.
    const at = this.clock.elapsed() + ms;
    const pending = this.waiting.get(key);
    if (pending && pending.at <= at) return;
    pending?.timer.cancel();
    const timer = this.clock.setTimer(() => {
      this.waiting.delete(key);
      this.add(key);
    }, ms);
    this.waiting.set(key, { at, timer });
  }

  /** Adds key after its rate-limited backoff (a failed attempt). */
  addRateLimited(key: string): void {
    this.metrics?.retried();
    this.addAfter(key, this.limiter.when(key));
  }

  /** Forgets key's failures, resetting its backoff. */
  forget(key: string): void {
    this.limiter.forget(key);
  }

  /** Failures counted for key since its last forget. */
  retries(key: string): number {
    return this.limiter.retries(key);
  }

  /** The next key to process, or undefined once the queue shuts down. Call done(key) after. */
  get(): Promise<string | undefined> {
    // Checked first: a controller that lost its lease must stop acting at once, not drain its queue.
    if (this.shuttingDown) return Promise.resolve(undefined);
    if (this.length > 0) return Promise.resolve(this.take());
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Ends processing of key; re-queues it when it was added meanwhile. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) this.enqueue(key);
  }

  /** Keys ready to be handed out. */
  get length(): number {
    return this.queuedIn.size;
  }

  /** Whether key is being processed right now. */
  isProcessing(key: string): boolean {
    return this.processing.has(key);
  }

  /** Stops handing out keys; waiting get() calls resolve undefined. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.waiting.values()) timer.cancel();
    this.waiting.clear();
    const waiters = this.waiters;
    this.waiters = [];
    for (const w of waiters) w(undefined);
  }

  /** Whether shutDown was called. */
  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  private enqueue(key: string): void {
    const waiter = this.waiters.shift();
    if (waiter) return waiter(this.handOut(key));
    const lane = this.urgentKeys.has(key) ? 'urgent' : 'normal';
    this.queuedIn.set(key, lane);
    this.lanes[lane].push(key);
    this.metrics?.depth(this.length);
  }

  private take(): string {
    for (const name of ['urgent', 'normal'] as const) {
      for (let key = this.lanes[name].shift(); key !== undefined; key = this.lanes[name].shift()) {
        if (this.queuedIn.get(key) !== name) continue; // promoted to the urgent lane since
        this.queuedIn.delete(key);
        this.metrics?.depth(this.length);
        return this.handOut(key);
      }
    }
    throw new Error('take() on an empty queue');
  }

  private handOut(key: string): string {
    this.queuedIn.delete(key);
    this.urgentKeys.delete(key);
    this.dirty.delete(key);
    this.processing.add(key);
    const since = this.readySince.get(key);
    this.readySince.delete(key);
    if (since !== undefined) this.metrics?.latency((this.clock.now() - since) / 1000);
    return key;
  }
}

/** A FIFO of keys that shifts in O(1) (an array with a moving head, compacted now and then). */
class Lane {
  private items: string[] = [];
  private head = 0;

  push(key: string): void {
    this.items.push(key);
  }

  shift(): string | undefined {
    if (this.head >= this.items.length) return undefined;
    const key = this.items[this.head++]!;
    if (this.head > 1024 && this.head * 2 > this.items.length) {
      this.items = this.items.slice(this.head);
      this.head = 0;
    }
    return key;
  }
}

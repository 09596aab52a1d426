/**
 * The reconcile loop every controller shares: informers feed keys into a
 * rate-limited WorkQueue; N async workers take keys and call reconcile(key).
 *
 * Results (controller-runtime's contract):
 * - resolves with nothing → success: the key's backoff is forgotten;
 * - resolves { requeueAfterMs } → forgotten, and re-added after that delay;
 * - throws PermanentError → logged, not retried (the reconciler has already
 *   written a condition/event explaining it);
 * - throws anything else (including a 409 Conflict) → re-added with
 *   per-key exponential backoff, so conflicts are retried, never swallowed.
 * The queue guarantees one key is never reconciled twice at once.
 */
import type { Logger } from 'winston';
import { toApiError } from '../api/client/errors.js';
import { realClock, type Clock, type TimerHandle } from './clock.js';
import type { Informer, ListedObject } from './informer.js';
import type { RuntimeMetrics } from './metrics.js';
import type { RateLimiter } from './rate-limiter.js';
import { WorkQueue } from './workqueue.js';

/** What a reconcile asks for next. */
export interface Result {
  /** Reconcile this key again after this many milliseconds. */
  requeueAfterMs?: number;
}

/** A failure retrying cannot fix (e.g. an invalid spec). */
export class PermanentError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'PermanentError';
  }
}

/** How long a reconcile may run, or the caches take to sync, before it is logged (and again each time as long). */
const SLOW_MS = 30_000;

/** Settings of a Controller. */
export interface ControllerOptions {
  name: string;
  reconcile: (key: string) => Promise<Result | void>;
  log: Logger;
  workers?: number;
  metrics?: RuntimeMetrics;
  clock?: Clock;
  /** Re-enqueue every key of the registered informers this often (0 = never). */
  resyncMs?: number;
  /** Per-key retry delays; default client-go's (5 ms → 1000 s, with a 10 qps bucket). */
  rateLimiter?: RateLimiter;
}

/** How a watched informer's events reach the queue. */
export interface WatchOptions<T> {
  /** Ahead of everything added without it (WorkQueue.addUrgent); only with no delay. */
  urgent?: boolean;
  /** An update counts only when this holds (an event filter, like controller-runtime's predicates); adds and deletes always do. */
  changed?: (old: T, obj: T) => boolean;
  /** More keys to enqueue when an object is deleted (a delete found by a relist carries the object as last seen). */
  deletedKeys?: (obj: T) => string[];
  /** Only updates enqueue: a second watch of an informer, for updates another watch of it filters out. */
  updatesOnly?: boolean;
}

/** Binds informers to a work queue and runs workers over it. */
export class Controller {
  readonly queue: WorkQueue;
  private readonly sources: Array<{ informer: Informer<ListedObject>; keys: (obj: ListedObject) => string[] }> = [];
  private readonly clock: Clock;
  private resyncTimer: TimerHandle | undefined;
  private stopRequested: () => void = () => undefined;
  private readonly stopping = new Promise<void>((resolve) => (this.stopRequested = resolve));

  constructor(private readonly opts: ControllerOptions) {
    this.clock = opts.clock ?? realClock;
    this.queue = new WorkQueue({ clock: this.clock, metrics: opts.metrics?.forQueue(opts.name), rateLimiter: opts.rateLimiter });
  }

  /**
   * Enqueues the keys keys(obj) returns for every add, update and delete of
   * the informer; with delayMs, after that delay, so a burst of changes
   * coalesces into one reconcile per key; `urgent` keys go ahead of the
   * others (WorkQueue.addUrgent), for changes that report progress.
   */
  watch<T extends ListedObject>(informer: Informer<T>, keys: (obj: T) => string[], delayMs = 0, opts: WatchOptions<T> = {}): void {
    const add = (ks: string[]) => ks.forEach((k) => (opts.urgent && delayMs <= 0 ? this.queue.addUrgent(k) : this.queue.addAfter(k, delayMs)));
    const enqueue = (obj: T) => add(keys(obj));
    const update = (old: T, obj: T) => {
      if (opts.changed && !opts.changed(old, obj)) return;
      enqueue(old);
      enqueue(obj);
    };
    if (opts.updatesOnly) return informer.addHandlers({ update });
    informer.addHandlers({ add: enqueue, update, delete: (obj) => add([...keys(obj), ...(opts.deletedKeys?.(obj) ?? [])]) });
    this.sources.push({ informer: informer as unknown as Informer<ListedObject>, keys: keys as (obj: ListedObject) => string[] });
  }

  /** Runs workers until stop(); resolves when they have all finished. */
  async run(): Promise<void> {
    // No worker starts before every watched cache has synced (a reconcile on a partial cache would act on missing objects).
    const waiting = this.warnAfter(SLOW_MS, () => ({ message: 'caches not synced yet; no reconcile runs until they are', resources: this.sources.filter((s) => !s.informer.hasSynced).map((s) => s.informer.source.plural) }));
    // Or until stop(): a cache that never syncs (the GC's Secrets, say) must not hold a stopping process.
    await Promise.race([Promise.all(this.sources.map((s) => s.informer.waitForSync())), this.stopping]);
    waiting.cancel();
    if (this.queue.isShuttingDown) return;
    this.scheduleResync();
    const workers = Array.from({ length: this.opts.workers ?? 2 }, () => this.worker());
    await Promise.all(workers);
  }

  /** Stops handing out keys; in-flight reconciles finish. */
  stop(): void {
    this.resyncTimer?.cancel();
    this.queue.shutDown();
    this.stopRequested();
  }

  private scheduleResync(): void {
    const every = this.opts.resyncMs ?? 0;
    if (every <= 0 || this.queue.isShuttingDown) return;
    this.resyncTimer = this.clock.setTimer(() => {
      for (const { informer, keys } of this.sources) for (const obj of informer.list()) keys(obj).forEach((k) => this.queue.add(k));
      this.scheduleResync();
    }, every);
  }

  // Logs what `what` says after `ms`, and again every `ms`, until cancelled.
  private warnAfter(ms: number, what: () => { message: string } & Record<string, unknown>): TimerHandle {
    const { log, name } = this.opts;
    const clock = this.clock;
    const started = clock.now();
    const tick = () => {
      const { message, ...fields } = what();
      log.warn(message, { controller: name, seconds: Math.round((clock.now() - started) / 1000), ...fields });
      timer = clock.setTimer(tick, ms);
    };
    let timer = clock.setTimer(tick, ms);
    return { cancel: () => timer.cancel() };
  }

  private async worker(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.processKey(key);
      } finally {
        this.queue.done(key);
      }
    }
  }

  private async processKey(key: string): Promise<void> {
    const { name, metrics, log } = this.opts;
    const started = this.clock.now();
    let result = 'success';
    // A reconcile holds its key: while it hangs (on a request that never returns, say), that object is not reconciled again.
    const slow = this.warnAfter(SLOW_MS, () => ({ message: 'reconcile still running; its object waits until it returns', key }));
    try {
      const res = await this.opts.reconcile(key);
      this.queue.forget(key);
      if (res?.requeueAfterMs !== undefined) {
        result = 'requeue';
        this.queue.addAfter(key, res.requeueAfterMs);
      }
    } catch (err) {
      const e = toApiError(err);
      if (e instanceof PermanentError) {
        result = 'permanent';
        this.queue.forget(key);
        log.warn('reconcile failed permanently', { controller: name, key, error: e.message });
      } else {
        result = 'error';
        this.queue.addRateLimited(key);
        log.info('reconcile failed, will retry', { controller: name, key, retries: this.queue.retries(key), error: String(e instanceof Error ? e.message : e) });
      }
    } finally {
      slow.cancel();
      metrics?.reconciles.inc({ controller: name, result });
      metrics?.reconcileDuration.observe({ controller: name }, (this.clock.now() - started) / 1000);
    }
  }
}

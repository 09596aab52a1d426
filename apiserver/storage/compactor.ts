/**
 * Periodic etcd compaction, as kube-apiserver does it: every interval,
 * compact to the revision observed one interval earlier, so history a
 * client could still be resuming from survives for at least one interval.
 * With several apiservers, each compacts; compacting twice is harmless.
 */
import type { Logger } from 'winston';
import type { EtcdStore } from './etcd-store.js';

/** Runs compaction on a timer until stopped. */
export class Compactor {
  private timer: NodeJS.Timeout | null = null;
  private previous = 0;

  constructor(private readonly etcd: EtcdStore, private readonly intervalMs: number, private readonly log: Logger) {}

  /** Starts the timer (a zero interval disables compaction). */
  start(): void {
    if (this.intervalMs <= 0) return;
    this.timer = setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  /** Stops the timer. */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** One round: compact to the revision seen last round, remember the current one. */
  async tick(): Promise<void> {
    try {
      const current = await this.etcd.currentRevision();
      if (this.previous > 0) {
        await this.etcd.compact(this.previous);
        this.log.info('compacted etcd', { revision: this.previous });
      }
      this.previous = current;
    } catch (err) {
      this.log.warn('etcd compaction failed; will retry next interval', { error: String(err) });
    }
  }
}

/**
 * The apiserver's Prometheus metrics, on /metrics (authenticated; the
 * admin and anyone granted `get` on the non-resource URL may read them):
 * Node's process metrics, the event-loop delay among them, and what the
 * apiserver does to protect itself, such as watches cut off for reading
 * too slowly.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/** The metrics of one apiserver process. */
export class ApiServerMetrics {
  readonly registry = new Registry();
  /** Watches ended because their client read too slowly: `stream` (over its own cap) or `budget` (the slowest, over the process-wide budget). */
  readonly watchEvictions = new Counter({ name: 'cairn_apiserver_watch_evictions_total', help: 'Watches cut off because their client read too slowly', labelNames: ['reason'], registers: [this.registry] });
  /** Bytes written to watches that their clients have not read yet. */
  readonly watchBufferedBytes: Gauge;

  constructor(watchBuffered: () => number) {
    this.watchBufferedBytes = new Gauge({
      name: 'cairn_apiserver_watch_buffered_bytes',
      help: 'Bytes queued for watch clients that have not read them yet',
      registers: [this.registry],
      collect() {
        this.set(watchBuffered());
      },
    });
    collectDefaultMetrics({ register: this.registry, prefix: 'cairn_apiserver_' });
  }
}

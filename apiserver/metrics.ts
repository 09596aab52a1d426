/**
 * Prometheus metrics of one apiserver process, served on its /metrics to
 * authorized users (the admin, or an RBAC role allowing `get` on the
 * non-resource URL /metrics, as in Kubernetes). With --workers, each
 * worker process has its own. Besides Node's process metrics (the
 * event-loop delay among them): etcd's alarms, and what the apiserver does
 * to protect itself, such as watches cut off for reading too slowly.
 */
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';

/** The apiserver's metrics in one registry. */
export class ApiServerMetrics {
  readonly registry = new Registry();
  /** 1 while etcd reports the alarm raised (NOSPACE: writes are refused). */
  readonly etcdAlarm = new Gauge({
    name: 'cairn_apiserver_etcd_alarm',
    help: '1 while etcd reports this alarm raised (NOSPACE: etcd refuses writes until space is freed with `cairn etcd defrag`), else 0',
    labelNames: ['alarm'],
    registers: [this.registry],
  });
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

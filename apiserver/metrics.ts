/**
 * Prometheus metrics of one apiserver process, served on its /metrics to
 * authorized users (the admin, or an RBAC role allowing `get` on the
 * non-resource URL /metrics, as in Kubernetes). With --workers, each
 * worker process has its own.
 */
import { Gauge, Registry } from 'prom-client';

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
}

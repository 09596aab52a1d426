/**
 * Prometheus metrics of one apiserver process, served on its /metrics to
 * authorized users (the admin, or an RBAC role allowing `get` on the
 * non-resource URL /metrics, as in Kubernetes). With --workers, each
 * worker process has its own. Requests, open watches, watch-cache sizes
 * and etcd latency carry kube-apiserver's names and labels
 * (apiserver_request_total, apiserver_request_duration_seconds,
 * apiserver_longrunning_requests, apiserver_watch_cache_objects... ,
 * etcd_request_duration_seconds), so its dashboards and alerts apply.
 * Besides Node's process metrics (the event-loop delay among them): etcd's
 * alarms, and what the apiserver does to protect itself, such as watches
 * cut off for reading too slowly.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** kube-apiserver's latency buckets (seconds), for requests and for etcd alike. */
const LATENCY_BUCKETS = [0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1, 1.25, 1.5, 2, 3, 4, 5, 6, 8, 10, 15, 20, 30, 45, 60];

/** The labels of a resource request, as kube-apiserver sets them. */
export interface RequestLabels {
  verb: string;
  group: string;
  version: string;
  resource: string;
  subresource: string;
  /** resource (one object), namespace or cluster (a collection). */
  scope: string;
}

const REQUEST_LABELS = ['verb', 'group', 'version', 'resource', 'subresource', 'scope'] as const;

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
  /** Log follows and consoles ended because their client read too slowly (the tunnel cannot pause one stream). */
  readonly streamEvictions = new Counter({ name: 'cairn_apiserver_stream_evictions_total', help: 'Log follows and consoles cut off because their client read too slowly', labelNames: ['kind'], registers: [this.registry] });
  /** Bytes written to watches that their clients have not read yet. */
  readonly watchBufferedBytes: Gauge;
  /** Answered resource requests by verb, resource and HTTP code. */
  readonly requests = new Counter({ name: 'apiserver_request_total', help: 'Counter of apiserver requests broken out for each verb, group, version, resource, scope and HTTP response code', labelNames: [...REQUEST_LABELS, 'code'], registers: [this.registry] });
  /** How long answering took, watches excepted (they last as long as their client wants). */
  readonly requestDuration = new Histogram({ name: 'apiserver_request_duration_seconds', help: 'Response latency distribution in seconds for each verb, group, version, resource, subresource and scope (watches excepted)', labelNames: [...REQUEST_LABELS], buckets: LATENCY_BUCKETS, registers: [this.registry] });
  /** Watches open now. */
  readonly longRunning = new Gauge({ name: 'apiserver_longrunning_requests', help: 'Gauge of all active long-running apiserver requests (watches) broken out by verb, group, version, resource and scope', labelNames: ['verb', 'group', 'version', 'resource', 'scope'], registers: [this.registry] });
  /** Agents' tunnels this replica holds: a node without one has no logs or console. */
  readonly tunnels = new Gauge({ name: 'cairn_apiserver_tunnels', help: "Agents' tunnels open to this apiserver process (logs and consoles travel through them)", registers: [this.registry] });
  /** etcd request latency by operation and the resource of the key. */
  readonly etcdRequestDuration = new Histogram({ name: 'etcd_request_duration_seconds', help: 'Etcd request latency in seconds for each operation and object type', labelNames: ['operation', 'type'], buckets: LATENCY_BUCKETS, registers: [this.registry] });

  /** Measures a resource request from now until its response ends. */
  observeRequest(labels: RequestLabels, res: { statusCode: number; once(event: 'close', fn: () => void): unknown }): void {
    const started = process.hrtime.bigint();
    // Like watches, log streams last as long as their client wants: not a latency.
    const watch = labels.verb === 'watch' || labels.subresource === 'log';
    const open = { verb: labels.verb, group: labels.group, version: labels.version, resource: labels.resource, scope: labels.scope };
    if (watch) this.longRunning.inc(open);
    res.once('close', () => {
      if (watch) this.longRunning.dec(open);
      else this.requestDuration.observe({ ...labels }, Number(process.hrtime.bigint() - started) / 1e9);
      this.requests.inc({ ...labels, code: String(res.statusCode) });
    });
  }

  /** Objects in the watch cache, per resource. */
  readonly watchCacheObjects: Gauge;

  constructor(watchBuffered: () => number, cacheSizes: () => ReadonlyArray<{ resource: string; objects: number }> = () => []) {
    this.watchCacheObjects = new Gauge({
      name: 'apiserver_watch_cache_objects',
      help: 'Objects held in the watch cache, per resource',
      labelNames: ['resource'],
      registers: [this.registry],
      collect() {
        for (const c of cacheSizes()) this.set({ resource: c.resource }, c.objects);
      },
    });
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

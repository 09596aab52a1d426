/**
 * Prometheus metrics of the runtime, shared by every controller and the
 * agent: work-queue depth, adds, wait time and retries; reconcile counts by
 * result and durations; leader-election state and transitions. One
 * registry per process, exposed on /metrics by health-server.ts.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { QueueMetrics } from './workqueue.js';

/** The runtime's metrics in one registry. */
export class RuntimeMetrics {
  readonly registry = new Registry();
  private readonly queueDepth = new Gauge({ name: 'cairn_workqueue_depth', help: 'Keys waiting in a work queue', labelNames: ['name'], registers: [this.registry] });
  private readonly queueAdds = new Counter({ name: 'cairn_workqueue_adds_total', help: 'Keys added to a work queue', labelNames: ['name'], registers: [this.registry] });
  private readonly queueRetries = new Counter({ name: 'cairn_workqueue_retries_total', help: 'Rate-limited re-adds', labelNames: ['name'], registers: [this.registry] });
  private readonly queueLatency = new Histogram({
    name: 'cairn_workqueue_queue_duration_seconds',
    help: 'Seconds a key waited in a work queue before being processed',
    labelNames: ['name'],
    buckets: [0.001, 0.01, 0.1, 0.5, 1, 5, 10, 60],
    registers: [this.registry],
  });
  /** Reconciles by controller and result (success, requeue, error, permanent). */
  readonly reconciles = new Counter({ name: 'cairn_reconcile_total', help: 'Reconciles by controller and result', labelNames: ['controller', 'result'], registers: [this.registry] });
  /** Reconcile durations by controller. */
  readonly reconcileDuration = new Histogram({
    name: 'cairn_reconcile_duration_seconds',
    help: 'Seconds a reconcile took',
    labelNames: ['controller'],
    buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5],
    registers: [this.registry],
  });
  /** 1 while this process leads. */
  readonly isLeader = new Gauge({ name: 'cairn_leader_is_leader', help: '1 while this process holds the leader lease', labelNames: ['lease'], registers: [this.registry] });
  /** Leadership gained or lost. */
  readonly leaderTransitions = new Counter({
    name: 'cairn_leader_transitions_total',
    help: 'Leadership transitions of this process',
    labelNames: ['lease', 'transition'],
    registers: [this.registry],
  });

  constructor(opts: { processMetrics?: boolean } = {}) {
    // Event-loop lag sampled every 100 ms, not prom-client's 10 ms default: an idle agent should stay idle.
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: this.registry, prefix: 'cairn_', eventLoopMonitoringPrecision: 100 });
  }

  /** QueueMetrics of the queue with this name. */
  forQueue(name: string): QueueMetrics {
    return {
      depth: (n) => this.queueDepth.set({ name }, n),
      added: () => this.queueAdds.inc({ name }),
      latency: (s) => this.queueLatency.observe({ name }, s),
      retried: () => this.queueRetries.inc({ name }),
    };
  }
}

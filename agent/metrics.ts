/**
 * The agent's Prometheus metrics, next to the shared runtime metrics (queue
 * depth, reconcile durations): WorkItems by phase, operation durations and
 * failures by reason, instance restarts, lease renewal failures.
 */
import { Counter, Gauge, Histogram } from 'prom-client';
import type { WorkItem } from '../api/workitem.js';
import { RuntimeMetrics } from '../runtime/metrics.js';

/** Metrics of one agent. */
export class AgentMetrics extends RuntimeMetrics {
  /** Operation durations by verb and outcome. */
  readonly operationDuration = new Histogram({
    name: 'cairn_agent_operation_duration_seconds',
    help: 'Seconds a driver operation took, by verb and result',
    labelNames: ['verb', 'result'],
    buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
    registers: [this.registry],
  });
  /** Failed operations by reason. */
  readonly operationFailures = new Counter({ name: 'cairn_agent_operation_failures_total', help: 'Failed driver operations by reason', labelNames: ['reason'], registers: [this.registry] });
  /** Lease renewals that failed, by lease kind (heartbeat, fencing). */
  readonly leaseRenewFailures = new Counter({ name: 'cairn_agent_lease_renew_failures_total', help: 'Lease renewals that failed', labelNames: ['lease'], registers: [this.registry] });

  constructor(workItems: () => WorkItem[]) {
    super();
    new Gauge({
      name: 'cairn_agent_workitems',
      help: 'WorkItems of this node by phase',
      labelNames: ['phase'],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const w of workItems()) this.inc({ phase: w.status?.phase ?? 'Queued' });
      },
    });
    new Gauge({
      name: 'cairn_agent_instance_restarts',
      help: 'Restarts of the instances on this node, summed',
      registers: [this.registry],
      collect() {
        this.set(workItems().reduce((n, w) => n + (w.status?.instance?.restarts ?? 0), 0));
      },
    });
  }
}

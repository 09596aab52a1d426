/** The Node reconciler's I/O: lease freshness, drain progress and allocation from the cache, status written when it changed. */
import { nodeLeaseName } from '../../../api/names.js';
import type { CairnClient } from '../../../api/client/cairn-client.js';
import type { ControllerCache } from '../../cache.js';
import type { LeaseObservations } from '../../lease-observations.js';
import { nodeLeaseSeconds } from '../../node-health.js';
import type { Placements } from '../../placements.js';
import type { Clock } from '../../../runtime/clock.js';
import type { Result } from '../../../runtime/controller.js';
import type { EventRecorder } from '../../../runtime/events.js';
import { toNodeAllocated } from '../../scheduler/index.js';
import { sameJson } from '../stable-json.js';
import type { StaleGuard } from '../stale-guard.js';
import { planNode } from './plan.js';

/** When to look again at a node whose lease revoke lost a race, should the Lease's change not wake it. */
const REVOKE_BACKSTOP_MS = 1000;

/** What the Node reconciler reads and writes through. */
export interface NodeReconcilerDeps {
  client: CairnClient;
  recorder: EventRecorder;
  cache: ControllerCache;
  placements: Placements;
  leases: LeaseObservations;
  clock: Clock;
  stale: StaleGuard;
  /** When each node's changed allocation was last written (key namespace/name), for the plan's rate limit. */
  allocationWrites: Map<string, number>;
}

/** Reconciles the Node with key namespace/name. */
export async function reconcileNode(deps: NodeReconcilerDeps, key: string): Promise<Result | void> {
  const node = deps.cache.nodes.get(key);
  if (!node) {
    deps.allocationWrites.delete(key);
    deps.stale.forget(key);
    const [namespace, name] = key.split('/') as [string, string];
    deps.leases.forget(namespace, nodeLeaseName(name));
    return;
  }
  if (deps.stale.isStale(key, node.metadata.resourceVersion)) return;
  const namespace = node.metadata.namespace!;
  const name = node.metadata.name!;
  const now = deps.clock.now();
  const usage = deps.placements.usage(namespace).get(name);
  const leaseObject = deps.cache.lease(namespace, nodeLeaseName(name));
  const plan = planNode({
    node,
    lease: deps.leases.view(leaseObject, now),
    leaseMissingSince: leaseObject ? undefined : deps.leases.missingSince(namespace, nodeLeaseName(name), now),
    instancesOnNode: usage?.instances ?? 0,
    allocated: usage ? toNodeAllocated(usage) : {},
    allocatedWrittenAt: deps.allocationWrites.get(key),
    leaseDurationSeconds: nodeLeaseSeconds(deps.cache.cluster(namespace)),
    now,
  });
  if (plan.revokeLease) {
    const current = leaseObject?.metadata.resourceVersion ? { resourceVersion: leaseObject.metadata.resourceVersion, leaseDurationSeconds: leaseObject.spec?.leaseDurationSeconds } : undefined;
    // Renewed, created or deleted after all: the Lease informer brings the change, and it wakes this Node (loops.ts).
    // The requeue is only a backstop: at 100 ms it sent a doomed revoke ten times a second while the cache lagged.
    if (!(await deps.client.revokeLease(namespace, nodeLeaseName(name), current))) return { requeueAfterMs: REVOKE_BACKSTOP_MS };
  }
  for (const e of plan.events) void deps.recorder.record({ ...node, kind: 'Node', apiVersion: 'cairn.dev/v1alpha1' }, e.eventType, e.reason, e.message);
  if (!sameJson(node.status ?? {}, plan.status)) {
    await deps.client.replaceStatus('Node', { ...node, status: plan.status });
    deps.stale.replaced(key, node.metadata.resourceVersion);
    if (!sameJson(node.status?.allocated ?? {}, plan.status.allocated ?? {})) deps.allocationWrites.set(key, now);
  }
  return plan.requeueAfterMs !== undefined ? { requeueAfterMs: plan.requeueAfterMs } : undefined;
}

/** What the Instance reconciler's plan (plan.ts, migration.ts) looks at: the Instance and what the cache shows. */
import type { Cluster } from '../../../api/cluster.js';
import type { Instance } from '../../../api/instance.js';
import type { Volume } from '../../../api/volume.js';
import type { WorkItem } from '../../../api/workitem.js';
import type { NodeView } from '../../node-health.js';

/** A scheduling decision (from controller/scheduler). */
export type ScheduleDecision = { nodeName: string } | { unschedulable: true; message: string };

/** Everything the plan looks at. */
export interface InstanceObserved {
  instance: Instance;
  cluster?: Cluster;
  workItems: readonly WorkItem[];
  volumes: ReadonlyMap<string, Volume>;
  node(name: string): NodeView;
  /**
   * The claim: held by node `holder` whose node lease is not revoked (its term may go on); with ms until
   * that lease expires unless renewed, and the claim Lease's name and version as cached when it exists.
   */
  fencing: { held: boolean; remainingMs: number; holder?: string; leaseName?: string; resourceVersion?: string };
  /** Places the instance now (called only when it has no WorkItem). */
  schedule(): ScheduleDecision;
  /** Why nodeName cannot hold the instance resized from `from` to `to` (a message with a hint), or undefined when it can. */
  resizeRefusal?(nodeName: string, from: { cpus: number; memory: string }, to: { cpus: number; memory: string }): string | undefined;
  /** Why nodeName cannot receive the instance by live migration (cordoned, no room, anti-affinity...), or undefined when it can. */
  targetRefusal?(nodeName: string): string | undefined;
  now: number;
}

/**
 * The one small interface every driver implements (process instances, file
 * replicas, later qemu). Split by cost and by process:
 * - observe() is cheap and runs inside the agent process: it reads state
 *   files and /proc, never changes anything, and says whether ensure() has
 *   work to do. The agent may call it as often as it likes (liveness polls).
 * - ensure() and remove() change the node; the agent runs them through the
 *   OperationRunner, so each runs in its own worker process with a timeout,
 *   an operation id and an AbortSignal. They are idempotent: running one
 *   twice, or after a worker died half-way, converges to the same node.
 * Drivers keep no state in memory; everything lives under the data dir, so
 * a restarted agent re-adopts what it left.
 */
import type { ConditionInput } from '../../api/conditions.js';
import type { WorkItem, WorkItemInstanceStatus, WorkItemMigrationStatus, WorkItemVolumeReplicaStatus } from '../../api/workitem.js';

/** What ensure() would do next; reported as WorkItemStatus.action and used to pick the default timeout. */
export type DriverAction = 'create' | 'resize' | 'delete' | 'start' | 'restart' | 'stop' | 'recordExit' | MigrationAction;

/** The steps of a live migration (qemu/migration.ts). */
export type MigrationAction = 'listen' | 'migrate' | 'finishMigration' | 'abortMigration' | 'resume';

/** The verbs the runner can run in a worker. */
export type Verb = 'ensure' | 'remove';

/** The node-side settings every driver call needs; plain data so it can cross into a worker. */
export interface DriverSettings {
  /** Root of the agent's state: instances/ and volumes/ live under it. */
  dataDir: string;
  nodeName: string;
  /** A delegated cgroup v2 directory to put instances under; unset: the cgroup2 mount found in /proc/self/mounts. */
  cgroupRoot?: string;
  /** The accelerator VMs with accelerator auto use here (probed at agent start); unset: tcg. */
  accelerator?: 'kvm' | 'tcg';
  /** Address other nodes reach this node's migration listeners on. Default 127.0.0.1. */
  migrationAddress?: string;
  /** The node's fencing deadline file, which instances' shims watch (unset: instances run unfenced, as in driver tests). */
  fenceFile?: string;
}

/** What observe() needs: the settings and a clock (injectable for tests). */
export interface DriverEnv extends DriverSettings {
  now(): number;
}

/** Structured log lines of one operation; the runner tags them with the operation id. */
export interface OperationLog {
  info(message: string, meta?: Record<string, unknown>): void;
  warn(message: string, meta?: Record<string, unknown>): void;
}

/** What ensure() and remove() get: the environment plus the operation's id, cancellation and log. */
export interface OperationContext extends DriverEnv {
  operationId: string;
  signal: AbortSignal;
  log: OperationLog;
}

/** A driver's view of one WorkItem on this node. */
export interface Observation {
  /** True when ensure() has nothing to do now (it may still have work later: see requeueAfterMs). */
  converged: boolean;
  /** When not converged: what ensure() would do. */
  action?: DriverAction;
  /** One line for WorkItemStatus.message. */
  message: string;
  /** Observe again after this long (restart backoff expiring). */
  requeueAfterMs?: number;
  /** For WorkItemStatus.instance. */
  instance?: WorkItemInstanceStatus;
  /** For WorkItemStatus.volumeReplica. */
  volumeReplica?: WorkItemVolumeReplicaStatus;
  /** For WorkItemStatus.migration: this node's side of a live migration. */
  migration?: WorkItemMigrationStatus;
  /** Conditions to merge into WorkItemStatus.conditions with setCondition(). */
  conditions?: ConditionInput[];
}

/** Default terminationGracePeriodSeconds of an Instance. */
export const DEFAULT_GRACE_SECONDS = 10;

/** Grace period of an instance's stop in ms: every instance driver honours it. */
export function graceMs(item: WorkItem): number {
  return (item.spec.instance?.terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS) * 1000;
}

/** A driver: observe in-process, ensure and remove in a supervised worker. */
export interface Driver {
  readonly name: string;
  /** The node's current state for `item`; never changes anything. */
  observe(item: WorkItem, env: DriverEnv): Promise<Observation>;
  /** Makes the node match `item` (idempotent); returns the observation afterwards. */
  ensure(item: WorkItem, ctx: OperationContext): Promise<Observation>;
  /** Undoes what ensure() did for `item` (idempotent; a missing thing is success). */
  remove(item: WorkItem, ctx: OperationContext): Promise<void>;
}

/**
 * `cairn controller`: the leader-elected controller as its own process.
 * Exits 1 when it loses leadership (its supervisor — systemd, Kubernetes,
 * or `cairn server` — restarts it as a follower with a clean cache), 0 on
 * SIGTERM/SIGINT after releasing the lease.
 */
import { createLogger } from '../../api/log.js';
import { shutDown } from './shut-down.js';
import { startControllerManager } from '../../controller/manager.js';
import { validateLeaderTimings } from '../../runtime/leader-election.js';
import { connectionOptions, type ConnectionFlags } from '../connection-flags.js';

/** The flags of `cairn controller`, as commander parses them. */
export interface ControllerFlags extends ConnectionFlags {
  identity?: string;
  leaseDuration: number;
  renewDeadline: number;
  retryPeriod: number;
  workers: number;
  resyncPeriod: number;
  metricsBind: string;
  metricsPort: number;
  logLevel: string;
}

/** Runs `cairn controller` until it loses leadership (exit 1) or is told to stop (exit 0). */
export async function runController(flags: ControllerFlags): Promise<void> {
  const timings = { leaseDurationMs: flags.leaseDuration, renewDeadlineMs: flags.renewDeadline, retryPeriodMs: flags.retryPeriod };
  validateLeaderTimings(timings);
  const log = createLogger('controller', flags.logLevel);
  // Supervised by `cairn server` over IPC (process.send exists): when the server dies, so does its
  // controller. 'disconnect' fires only once and not for listeners added later, so a server that died
  // while this process was still starting is seen as !process.connected, and the listener goes in first.
  const supervised = typeof process.send === 'function';
  if (supervised && !process.connected) process.exit(0);
  let onParentGone: () => void = () => process.exit(0);
  if (supervised) process.once('disconnect', () => onParentGone());
  const manager = await startControllerManager({
    connection: connectionOptions(flags),
    identity: flags.identity,
    timings,
    workers: flags.workers,
    resyncMs: flags.resyncPeriod,
    metricsHost: flags.metricsBind,
    metricsPort: flags.metricsPort,
    log,
  });
  log.info('controller started', { identity: manager.identity, pid: process.pid, health: manager.healthUrl });
  const shutdown = () => void shutDown(log, [['stopping the controller', () => manager.stop()]]);
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  onParentGone = shutdown;
  const outcome = await manager.done;
  if (outcome === 'lost') {
    log.error('lost leadership; exiting so the supervisor restarts this controller as a follower', { identity: manager.identity });
    process.exit(1);
  }
}

/**
 * `cairn controller`: the leader-elected controller as its own process.
 * Exits 1 when it loses leadership (its supervisor — systemd, Kubernetes,
 * or `cairn server` — restarts it as a follower with a clean cache), 0 on
 * SIGTERM/SIGINT after releasing the lease.
 */
import { Command } from 'commander';
import { createLogger } from '../../api/log.js';
import { startControllerManager } from '../../controller/manager.js';
import { DEFAULT_LEADER_TIMINGS, validateLeaderTimings } from '../../runtime/leader-election.js';
import { addConnectionFlags, connectionOptions, type ConnectionFlags } from '../connection-flags.js';
import { parseCount, parseDuration, parsePort } from '../flags.js';

interface ControllerFlags extends ConnectionFlags {
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

/** `cairn controller`. */
export function controllerCommand(): Command {
  return addConnectionFlags(new Command('controller'))
    .description('Run the leader-elected controller: scheduling, WorkItems, status, node lifecycle and failover')
    .option('--identity <id>', 'holder identity in the leader Lease (default: <hostname>_<pid>)')
    .option('--lease-duration <duration>', 'how long followers wait before taking over an unrenewed leader lease', parseDuration, DEFAULT_LEADER_TIMINGS.leaseDurationMs)
    .option('--renew-deadline <duration>', 'how long the leader keeps trying to renew before it stops reconciling and exits', parseDuration, DEFAULT_LEADER_TIMINGS.renewDeadlineMs)
    .option('--retry-period <duration>', 'interval between attempts to acquire or renew the lease', parseDuration, DEFAULT_LEADER_TIMINGS.retryPeriodMs)
    .option('--workers <n>', 'concurrent reconciles of the Instance and Volume loops (each mostly waits on the apiserver)', parseCount, 64)
    .option('--resync-period <duration>', 'how often every object is reconciled again even without changes (0 disables)', parseDuration, 600_000)
    .option('--metrics-bind <address>', 'address of /healthz, /readyz and /metrics', '127.0.0.1')
    .option('--metrics-port <port>', 'port of /healthz, /readyz and /metrics (0 picks a free one)', parsePort, 8442)
    .option('--log-level <level>', 'error, warn, info or debug', 'info')
    .addHelpText('after', `
Examples:
  cairn controller --kubeconfig /var/lib/cairn/admin.kubeconfig
  cairn controller --server https://10.0.0.1:6443 --token "$TOKEN" --certificate-authority ca.crt --identity ctl-a
  curl http://127.0.0.1:8442/metrics`)
    .action((flags: ControllerFlags) => runController(flags));
}

async function runController(flags: ControllerFlags): Promise<void> {
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
  log.info('controller started', { identity: manager.identity, health: manager.healthUrl });
  const shutdown = () => void manager.stop().then(() => process.exit(0));
  process.once('SIGTERM', shutdown);
  process.once('SIGINT', shutdown);
  onParentGone = shutdown;
  const outcome = await manager.done;
  if (outcome === 'lost') {
    log.error('lost leadership; exiting so the supervisor restarts this controller as a follower', { identity: manager.identity });
    process.exit(1);
  }
}

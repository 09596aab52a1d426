/** `cairn controller`: its flags and help; what it does is in ../run/controller.ts, loaded when it runs. */
import { Command } from 'commander';
import { DEFAULT_LEADER_TIMINGS } from '../../runtime/leader-election.js';
import { addConnectionFlags } from '../connection-flags.js';
import { durationOption, logLevelOption, parseCount, parsePort } from '../flags.js';
import type { ControllerFlags } from '../run/controller.js';

/** `cairn controller`. */
export function controllerCommand(): Command {
  return addConnectionFlags(new Command('controller'))
    .description('Run the leader-elected controller: scheduling, WorkItems, status, node lifecycle and failover')
    .option('--identity <id>', 'holder identity in the leader Lease (default: <hostname>_<pid>)')
    .addOption(durationOption('--lease-duration <duration>', 'how long followers wait before taking over an unrenewed leader lease', DEFAULT_LEADER_TIMINGS.leaseDurationMs, { positive: true }))
    .addOption(durationOption('--renew-deadline <duration>', 'how long the leader keeps trying to renew before it stops reconciling and exits', DEFAULT_LEADER_TIMINGS.renewDeadlineMs, { positive: true }))
    .addOption(durationOption('--retry-period <duration>', 'interval between attempts to acquire or renew the lease', DEFAULT_LEADER_TIMINGS.retryPeriodMs, { positive: true }))
    .option('--workers <n>', 'concurrent reconciles of the Instance and Volume loops (each mostly waits on the apiserver)', parseCount, 64)
    .addOption(durationOption('--resync-period <duration>', 'how often every object is reconciled again even without changes (0 disables)', 600_000))
    .option('--metrics-bind <address>', 'address of /healthz, /readyz and /metrics', '127.0.0.1')
    .option('--metrics-port <port>', 'port of /healthz, /readyz and /metrics (0 picks a free one)', parsePort, 8442)
    .addOption(logLevelOption('info'))
    .addHelpText('after', `
Examples:
  cairn controller --kubeconfig /var/lib/cairn/admin.kubeconfig
  cairn controller --server https://10.0.0.1:6443 --token "$TOKEN" --certificate-authority ca.crt --identity ctl-a
  curl http://127.0.0.1:8442/metrics`)
    .action(async (flags: ControllerFlags) => (await import('../run/controller.js')).runController(flags));
}

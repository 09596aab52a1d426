/** `cairn agent`: its flags and help; what it does is in ../run/agent.ts, loaded when it runs. */
import os from 'node:os';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { isCairnKey } from '../../api/names.js';
import { QUANTITY_PATTERN } from '../../api/quantity.js';
import { addConnectionFlags } from '../connection-flags.js';
import { durationOption, logLevelOption, parseCount, parsePort } from '../flags.js';
import type { AgentFlags } from '../run/agent.js';

function parseLabels(value: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of value.split(',').filter(Boolean)) {
    const m = /^([A-Za-z0-9./_-]+)=([A-Za-z0-9._-]*)$/.exec(pair.trim());
    if (!m) throw new InvalidArgumentError(`"${pair}" is not a label; use key=value pairs separated by commas, e.g. zone=a,disk=ssd`);
    if (isCairnKey(m[1]!)) throw new InvalidArgumentError(`"${m[1]}" is in the cairn.dev domain, whose Node labels only operators set (kubectl label nodes.cairn.dev NODE ${m[1]}=${m[2]}); a node may not claim one for itself`);
    labels[m[1]!] = m[2]!;
  }
  return labels;
}

function parseQuantityFlag(value: string): string {
  if (!QUANTITY_PATTERN.test(value)) throw new InvalidArgumentError(`"${value}" is not a quantity; use forms like 4096Mi or 100Gi`);
  return value;
}

/** `cairn agent`. */
export function agentCommand(): Command {
  return addConnectionFlags(new Command('agent'))
    .description('Run the node agent: register this machine as a Node, renew its heartbeat, and run the WorkItems addressed to it')
    .requiredOption('--cluster <name>', 'the Cluster this node belongs to (its namespace)')
    .option('--node-name <name>', 'name of this Node', os.hostname().toLowerCase())
    .option('--data-dir <dir>', 'where instances, volume replicas, logs and state live', path.join(os.homedir(), '.cairn', 'agent'))
    .option('--labels <k=v,...>', 'labels of the Node (for nodeSelectors)', parseLabels, {})
    .option('--cpus <n>', 'cpus to offer (default: detected)', parseCount)
    .option('--memory <quantity>', 'memory to offer (default: detected), e.g. 8Gi', parseQuantityFlag)
    .option('--storage <quantity>', 'storage to offer (default: free space under --data-dir)', parseQuantityFlag)
    .addOption(durationOption('--heartbeat-interval <duration>', 'how often the node Lease (heartbeat and fence) is renewed; match the Cluster\'s failureDetection.heartbeatIntervalSeconds', 2_000, { positive: true }))
    .addOption(durationOption('--lease-duration <duration>', 'node Lease duration: the node counts as unreachable after this long without renewal, and its instances stop themselves before that (docs/fencing.md); match the Cluster\'s failureDetection.nodeLeaseDurationSeconds', 10_000, { positive: true }))
    .option('--workers <n>', 'WorkItems reconciled at once', parseCount, 8)
    .option('--monitor-bind <address>', 'address of /healthz, /metrics and /status', '127.0.0.1')
    .option('--monitor-port <port>', 'port of /healthz, /metrics and /status (0 picks a free one)', parsePort, 8443)
    .addOption(durationOption('--shutdown-grace <duration>', 'on shutdown, time between SIGTERM and SIGKILL of running operations', 5_000))
    .addOption(durationOption('--watch-idle-timeout <duration>', 'restart the WorkItem watch when it delivers nothing, not even a bookmark, for this long (a partition can leave a connection silently dead)', 60_000))
    .addOption(new Option('--qemu-accelerator <choice>', 'accelerator of qemu VMs whose spec says auto: auto boots a probe guest under KVM at start and falls back to tcg (software emulation) when KVM does not run it').choices(['auto', 'kvm', 'tcg']).default('auto'))
    .option('--migration-address <ip>', 'address other nodes reach this node on for live migrations into it (qemu -incoming and the NBD disk export)', '127.0.0.1')
    .addOption(logLevelOption('info'))
    .addOption(new Option('--join-token <token>', 'join the cluster: exchange this token (from cairn token create) for a node credential kept in --data-dir; needs --server and --certificate-authority').env('CAIRN_JOIN_TOKEN'))
    .addHelpText('after', `
With --join-token, or once joined (the data dir holds node-credential.json), the agent authenticates
as its node only (system:node:<cluster>:<node>) and renews that credential itself; give --server and
--certificate-authority (or --insecure-skip-tls-verify) instead of a kubeconfig.

Examples:
  cairn agent --server https://10.0.0.1:6443 --certificate-authority ca.crt --join-token "$JOIN_TOKEN" --cluster prod --node-name node-a
  cairn agent --kubeconfig admin.kubeconfig --cluster demo --node-name node-a --data-dir /var/lib/cairn/agent
  cairn agent --server https://10.0.0.1:6443 --token "$TOKEN" --certificate-authority ca.crt --cluster prod --labels zone=a
  curl http://127.0.0.1:8443/status`)
    .action(async (flags: AgentFlags) => (await import('../run/agent.js')).runAgent(flags));
}

/**
 * `cairn agent`: the node agent. Dials out to the apiserver; needs no
 * inbound port except its loopback monitoring endpoint. SIGTERM/SIGINT end
 * its operations (SIGTERM, then SIGKILL after --shutdown-grace) but leave
 * instances running; a restarted agent re-adopts them.
 */
import type { AcceleratorChoice } from '../../api/cluster.js';
import os from 'node:os';
import path from 'node:path';
import fs from 'node:fs';
import { Command, InvalidArgumentError, Option } from 'commander';
import type { ConnectionOptions } from '../../api/client/kubeconfig.js';
import { CREDENTIAL_FILE, credentialConnection, obtainCredential, type StoredCredential } from '../../agent/credentials.js';
import { realClock } from '../../runtime/clock.js';
import { createLogger } from '../../api/log.js';
import { QUANTITY_PATTERN } from '../../api/quantity.js';
import { startAgent } from '../../agent/agent.js';
import { cairnVersion } from '../../apiserver/server.js';
import { addConnectionFlags, connectionOptions, type ConnectionFlags } from '../connection-flags.js';
import { parseCount, parseDuration, parsePort } from '../flags.js';

interface AgentFlags extends ConnectionFlags {
  cluster: string;
  nodeName: string;
  dataDir: string;
  labels: Record<string, string>;
  cpus?: number;
  memory?: string;
  storage?: string;
  heartbeatInterval: number;
  leaseDuration: number;
  workers: number;
  monitorBind: string;
  monitorPort: number;
  shutdownGrace: number;
  watchIdleTimeout: number;
  qemuAccelerator: AcceleratorChoice;
  migrationAddress: string;
  logLevel: string;
  joinToken?: string;
}

function parseLabels(value: string): Record<string, string> {
  const labels: Record<string, string> = {};
  for (const pair of value.split(',').filter(Boolean)) {
    const m = /^([A-Za-z0-9./_-]+)=([A-Za-z0-9._-]*)$/.exec(pair.trim());
    if (!m) throw new InvalidArgumentError(`"${pair}" is not a label; use key=value pairs separated by commas, e.g. zone=a,disk=ssd`);
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
    .option('--heartbeat-interval <duration>', 'how often the heartbeat Lease is renewed', parseDuration, 10_000)
    .option('--lease-duration <duration>', 'heartbeat Lease duration: the node counts as unreachable after this long without renewal', parseDuration, 40_000)
    .option('--workers <n>', 'WorkItems reconciled at once', parseCount, 8)
    .option('--monitor-bind <address>', 'address of /healthz, /metrics and /status', '127.0.0.1')
    .option('--monitor-port <port>', 'port of /healthz, /metrics and /status (0 picks a free one)', parsePort, 8443)
    .option('--shutdown-grace <duration>', 'on shutdown, time between SIGTERM and SIGKILL of running operations', parseDuration, 5_000)
    .option('--watch-idle-timeout <duration>', 'restart the WorkItem watch when it delivers nothing, not even a bookmark, for this long (a partition can leave a connection silently dead)', parseDuration, 60_000)
    .addOption(new Option('--qemu-accelerator <choice>', 'accelerator of qemu VMs whose spec says auto: auto boots a probe guest under KVM at start and falls back to tcg (software emulation) when KVM does not run it').choices(['auto', 'kvm', 'tcg']).default('auto'))
    .option('--migration-address <ip>', 'address other nodes reach this node on for live migrations into it (qemu -incoming and the NBD disk export)', '127.0.0.1')
    .option('--log-level <level>', 'error, warn, info or debug', 'info')
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
    .action((flags: AgentFlags) => runAgent(flags));
}

// A join token, or a credential from an earlier join, means node credentials; otherwise the kubeconfig or --token as given.
async function agentConnection(flags: AgentFlags): Promise<{ connection: ConnectionOptions; credential?: StoredCredential }> {
  delete process.env.CAIRN_JOIN_TOKEN; // instances and operations inherit the agent's environment
  const given = connectionOptions(flags);
  const joined = fs.existsSync(path.join(flags.dataDir, CREDENTIAL_FILE));
  if (!flags.joinToken && (!joined || flags.kubeconfig || flags.token)) return { connection: given };
  if (!given.server) throw new Error('--join-token needs --server (the apiserver URL) and --certificate-authority (its CA, e.g. the pki/ca.crt of the server data dir)');
  if (flags.kubeconfig || flags.token) throw new Error('--join-token replaces --kubeconfig and --token: give only --server and --certificate-authority with it');
  const server = { ...given, server: given.server };
  const credential = await obtainCredential({ dataDir: flags.dataDir, cluster: flags.cluster, nodeName: flags.nodeName, connection: server, joinToken: flags.joinToken, clock: realClock });
  return { connection: credentialConnection(server, credential), credential };
}

async function runAgent(flags: AgentFlags): Promise<void> {
  if (flags.heartbeatInterval >= flags.leaseDuration) throw new Error(`--heartbeat-interval (${flags.heartbeatInterval} ms) must be shorter than --lease-duration (${flags.leaseDuration} ms)`);
  const log = createLogger('agent', flags.logLevel).child({ node: flags.nodeName });
  const { connection, credential } = await agentConnection(flags);
  const agent = await startAgent({
    connection,
    credential,
    cluster: flags.cluster,
    nodeName: flags.nodeName,
    dataDir: flags.dataDir,
    labels: flags.labels,
    capacity: { cpus: flags.cpus, memory: flags.memory, storage: flags.storage },
    heartbeatIntervalMs: flags.heartbeatInterval,
    leaseDurationSeconds: Math.ceil(flags.leaseDuration / 1000),
    workers: flags.workers,
    monitorHost: flags.monitorBind,
    monitorPort: flags.monitorPort,
    shutdownGraceMs: flags.shutdownGrace,
    watchIdleTimeoutMs: flags.watchIdleTimeout,
    qemuAccelerator: flags.qemuAccelerator,
    migrationAddress: flags.migrationAddress,
    agentVersion: cairnVersion(),
    log,
  });
  process.stdout.write(`cairn agent for node ${flags.nodeName} of cluster ${flags.cluster} running${agent.monitorUrl ? `; status at ${agent.monitorUrl}/status` : ''}\n`);
  let stopping = false;
  const shutdown = (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down; instances keep running', { signal });
    void agent.stop().then(() => process.exit(0));
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/**
 * `cairn agent`: the node agent. Dials out to the apiserver; needs no
 * inbound port except its loopback monitoring endpoint. SIGTERM/SIGINT end
 * its operations (SIGTERM, then SIGKILL after --shutdown-grace) but leave
 * instances running; a restarted agent re-adopts them.
 */
import path from 'node:path';
import fs from 'node:fs';
import type { AcceleratorChoice } from '../../api/cluster.js';
import type { ConnectionOptions } from '../../api/client/kubeconfig.js';
import { CREDENTIAL_FILE, credentialConnection, obtainCredential, type StoredCredential } from '../../agent/credentials.js';
import { realClock } from '../../runtime/clock.js';
import { createLogger } from '../../api/log.js';
import { shutDown } from './shut-down.js';
import { startAgent } from '../../agent/agent.js';
import { cairnVersion } from '../../api/version.js';
import { connectionOptions, type ConnectionFlags } from '../connection-flags.js';

/** The flags of `cairn agent`, as commander parses them. */
export interface AgentFlags extends ConnectionFlags {
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

// A join token, a credential from an earlier join, or --server without --token means node credentials; with none
// to be had, obtainCredential refuses saying how to join (connected without one, the agent retried for good).
// Otherwise the kubeconfig or --token as given.
async function agentConnection(flags: AgentFlags): Promise<{ connection: ConnectionOptions; credential?: StoredCredential }> {
  delete process.env.CAIRN_JOIN_TOKEN; // instances and operations inherit the agent's environment
  const given = connectionOptions(flags);
  const joined = fs.existsSync(path.join(flags.dataDir, CREDENTIAL_FILE));
  if (!flags.joinToken && (flags.kubeconfig || flags.token || (!joined && !given.server))) return { connection: given };
  if (!given.server) throw new Error('--join-token needs --server (the apiserver URL) and --certificate-authority (its CA, e.g. the pki/ca.crt of the server data dir)');
  if (flags.kubeconfig || flags.token) throw new Error('--join-token replaces --kubeconfig and --token: give only --server and --certificate-authority with it');
  const server = { ...given, server: given.server };
  const credential = await obtainCredential({ dataDir: flags.dataDir, cluster: flags.cluster, nodeName: flags.nodeName, connection: server, joinToken: flags.joinToken, clock: realClock });
  return { connection: credentialConnection(server, credential), credential };
}

/** Runs `cairn agent` until SIGTERM or SIGINT (instances keep running). */
export async function runAgent(flags: AgentFlags): Promise<void> {
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
    void shutDown(log, [['stopping the agent', () => agent.stop()]]);
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

/**
 * `cairn server` and `cairn apiserver`: their flags and help; what they do
 * is in ../run/server.ts, loaded when one runs (it brings in the apiserver).
 */
import os from 'node:os';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { parseQuantity, QUANTITY_PATTERN } from '../../api/quantity.js';
import { defaultApiServerOptions, defaultAuditLogRotation } from '../../apiserver/options.js';
import { addEtcdTlsFlags } from '../etcd-flags.js';
import { durationOption, logLevelOption, parseCount, parseList, parsePort } from '../flags.js';
import type { ServerFlags } from '../run/server.js';

/** The flags both commands share; dataDirHelp says what each keeps in --data-dir. */
function addApiServerFlags(cmd: Command, dataDirHelp: string): Command {
  const flags = cmd
    .option('--data-dir <dir>', dataDirHelp, path.join(os.homedir(), '.cairn', 'server'))
    .option('--listen <address>', 'address to listen on', defaultApiServerOptions.listen)
    .option('--port <port>', 'HTTPS port; 0 picks a free port (the URL is printed and written to the kubeconfig)', parsePort, defaultApiServerOptions.port)
    .option('--advertise-address <address>', 'address clients use to reach this server (added to the serving certificate)')
    .option('--crd-dir <dir>', 'CustomResourceDefinitions to serve (default: the crds/ shipped with Cairn)')
    .option('--kubeconfig <path>', 'where to write the admin kubeconfig (default: <data-dir>/admin.kubeconfig)')
    .option('--kubeconfig-namespace <cluster>', "namespace (Cluster) of the admin kubeconfig's context, so clients need no -n")
    .addOption(durationOption('--compaction-interval <duration>', 'how often to compact etcd history (0 disables)', defaultApiServerOptions.compactionIntervalMs))
    .addOption(durationOption('--event-ttl <duration>', 'how long Events are kept', defaultApiServerOptions.eventTtlSeconds * 1000, { lifetime: true }))
    .addOption(durationOption('--node-credential-ttl <duration>', 'lifetime of the credential an agent gets for its join token; agents renew it at two thirds of it', defaultApiServerOptions.nodeCredentialTtlMs, { lifetime: true }))
    .option('--encryption-key-file <file>', 'the AES-GCM keys Secrets are encrypted with in etcd, the first one for writes (default: <data-dir>/encryption-keys.yaml, made with a new key when missing; every apiserver of one etcd needs the same file)')
    .addOption(logLevelOption(defaultApiServerOptions.logLevel))
    .option('--workers <n>', 'apiserver processes sharing the port (one per core uses the whole machine; each keeps its own watch cache)', parseCount, 1)
    .option('--max-requests-inflight <n>', 'requests served at once, apart from watches, leases and node agents (priority and fairness: a flood waits or gets 429, heartbeats never do); 0: no limit', parseLimit, defaultApiServerOptions.maxRequestsInflight)
    .option('--max-requests-queued <n>', 'requests that may wait for one of those seats; beyond, 429 with Retry-After', parseLimit, defaultApiServerOptions.maxRequestsQueued)
    .addOption(new Option('--watch-memory-budget <size>', 'memory all watches of a process may hold for clients that read too slowly; beyond it the slowest are cut off and re-watch (Ki, Mi, Gi)').argParser(parseSize).default(defaultApiServerOptions.watchBudgetBytes, '256Mi'))
    .addOption(new Option('--audit-log-max-size <size>', 'size at which the audit log is rotated (Ki, Mi, Gi)').argParser(parseSize).default(defaultAuditLogRotation.maxSizeBytes, '100Mi'))
    .option('--audit-log-max-files <n>', 'audit log files kept, the current one included (at least 2)', parseCount, defaultAuditLogRotation.maxFiles);
  return addEtcdTlsFlags(flags).addOption(new Option('--insecure-http', 'serve plain HTTP (no TLS; tokens are still required), for debugging on loopback only').default(false));
}

function parseLimit(value: string): number {
  if (!/^\d{1,6}$/.test(value)) throw new InvalidArgumentError(`"${value}" is not a whole number from 0 to 999999`);
  return Number(value);
}

function parseSize(value: string): number {
  if (!QUANTITY_PATTERN.test(value) || parseQuantity(value) === 0) throw new InvalidArgumentError(`"${value}" is not a size; use forms like 100Mi or 1Gi`);
  return parseQuantity(value);
}

/** `cairn server`. */
export function serverCommand(): Command {
  return addApiServerFlags(new Command('server'), 'where certificates, the admin token and kubeconfig (and the embedded etcd, unless --etcd-endpoints is given) live')
    .description('Run the all-in-one Cairn control plane: the API server, with a managed local etcd unless --etcd-endpoints is given')
    .option('--etcd-endpoints <urls>', 'external etcd endpoints, comma-separated (default: start an embedded etcd under --data-dir)', parseList)
    .addOption(new Option('--etcd-quota <size>', "the embedded etcd's space quota (its --quota-backend-bytes; default etcd's, 2Gi): past it etcd refuses writes until `cairn etcd defrag` frees space").argParser(parseSize))
    .option('--no-controller', 'do not run the controller (run `cairn controller` separately, or none to drive status by hand)')
    .option('--controller-metrics-port <port>', "port of the controller's /healthz and /metrics (default: a free port, logged)", parsePort, 0)
    .option('--audit-log-path <file>', 'where to log every mutating request, one JSON line each (default: <data-dir>/audit.log; "" for none)')
    .addHelpText('after', `
Examples:
  cairn server --data-dir /var/lib/cairn --port 6443
  cairn server --data-dir /tmp/c --port 0          # a free port; the URL is printed
  export KUBECONFIG=/var/lib/cairn/admin.kubeconfig && kubectl api-resources`)
    .action(async (flags: ServerFlags) => (await import('../run/server.js')).runServer(flags, true));
}

/** `cairn apiserver`. */
export function apiserverCommand(): Command {
  return addApiServerFlags(new Command('apiserver'), 'where certificates, the admin token and kubeconfig live')
    .description('Run one stateless API server replica over an external etcd')
    .requiredOption('--etcd-endpoints <urls>', 'etcd endpoints, comma-separated', parseList)
    .option('--audit-log-path <file>', 'where to log every mutating request, one JSON line each (default: no audit log)')
    .addHelpText('after', `
Examples:
  cairn apiserver --etcd-endpoints http://10.0.0.1:2379,http://10.0.0.2:2379 --listen 0.0.0.0 --data-dir /var/lib/cairn
  cairn apiserver --etcd-endpoints https://10.0.0.1:2379 --etcd-cafile etcd-ca.crt \\
    --etcd-certfile apiserver-etcd-client.crt --etcd-keyfile apiserver-etcd-client.key --audit-log-path /var/log/cairn/audit.log`)
    .action(async (flags: ServerFlags) => (await import('../run/server.js')).runServer(flags, false));
}

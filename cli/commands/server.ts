/**
 * `cairn server` (all-in-one: apiserver, plus a managed local etcd when no
 * --etcd-endpoints is given) and `cairn apiserver` (apiserver over an
 * external etcd). Both shut down gracefully on SIGTERM/SIGINT.
 */
import os from 'node:os';
import path from 'node:path';
import { Command, InvalidArgumentError, Option } from 'commander';
import { createLogger } from '../../api/log.js';
import { parseQuantity, QUANTITY_PATTERN } from '../../api/quantity.js';
import { defaultAuditLogRotation } from '../../apiserver/audit/audit-log.js';
import { explainEtcdFailure } from '../../apiserver/etcd/client-tls.js';
import { lockDataDir } from '../../apiserver/etcd/data-dir-lock.js';
import { EtcdSupervisor } from '../../apiserver/etcd/supervisor.js';
import { defaultApiServerOptions, defaultCrdDir, startApiServer, type ApiServerOptions } from '../../apiserver/server.js';
import { startWorkerPool } from '../../apiserver/worker-pool.js';
import { ChildSupervisor } from '../child-supervisor.js';
import { parseCount, parseDuration, parseList, parsePort } from '../flags.js';

interface ServerFlags {
  dataDir: string;
  listen: string;
  port: number;
  advertiseAddress?: string;
  etcdEndpoints?: string[];
  insecureHttp: boolean;
  crdDir?: string;
  kubeconfig?: string;
  kubeconfigNamespace?: string;
  compactionInterval: number;
  eventTtl: number;
  nodeCredentialTtl: number;
  logLevel: string;
  workers: number;
  controller?: boolean;
  controllerMetricsPort?: number;
  auditLogPath?: string;
  auditLogMaxSize: number;
  auditLogMaxFiles: number;
  etcdCafile?: string;
  etcdCertfile?: string;
  etcdKeyfile?: string;
}

function addApiServerFlags(cmd: Command): Command {
  return cmd
    .option('--data-dir <dir>', 'where certificates, the admin token and kubeconfig (and the embedded etcd) live', path.join(os.homedir(), '.cairn', 'server'))
    .option('--listen <address>', 'address to listen on', defaultApiServerOptions.listen)
    .option('--port <port>', 'HTTPS port; 0 picks a free port (the URL is printed and written to the kubeconfig)', parsePort, defaultApiServerOptions.port)
    .option('--advertise-address <address>', 'address clients use to reach this server (added to the serving certificate)')
    .option('--crd-dir <dir>', 'CustomResourceDefinitions to serve (default: the crds/ shipped with Cairn)')
    .option('--kubeconfig <path>', 'where to write the admin kubeconfig (default: <data-dir>/admin.kubeconfig)')
    .option('--kubeconfig-namespace <cluster>', "namespace (Cluster) of the admin kubeconfig's context, so clients need no -n")
    .option('--compaction-interval <duration>', 'how often to compact etcd history (0 disables)', parseDuration, defaultApiServerOptions.compactionIntervalMs)
    .option('--event-ttl <duration>', 'how long Events are kept', parseDuration, defaultApiServerOptions.eventTtlSeconds * 1000)
    .option('--node-credential-ttl <duration>', 'lifetime of the credential an agent gets for its join token; agents renew it at two thirds of it', parseDuration, defaultApiServerOptions.nodeCredentialTtlMs)
    .option('--log-level <level>', 'error, warn, info or debug', defaultApiServerOptions.logLevel)
    .option('--workers <n>', 'apiserver processes sharing the port (one per core uses the whole machine; each keeps its own watch cache)', parseCount, 1)
    .addOption(new Option('--audit-log-max-size <size>', 'size at which the audit log is rotated (Ki, Mi, Gi)').argParser(parseSize).default(defaultAuditLogRotation.maxSizeBytes, '100Mi'))
    .option('--audit-log-max-files <n>', 'audit log files kept, the current one included (at least 2)', parseCount, defaultAuditLogRotation.maxFiles)
    .option('--etcd-cafile <file>', 'CA certificate that signed the etcd serving certificate (external https:// --etcd-endpoints only)')
    .option('--etcd-certfile <file>', 'client certificate for an etcd run with --client-cert-auth (external --etcd-endpoints only; with --etcd-keyfile)')
    .option('--etcd-keyfile <file>', 'private key of --etcd-certfile (external --etcd-endpoints only)')
    .addOption(new Option('--insecure-http', 'serve plain HTTP (no TLS; tokens are still required), for debugging on loopback only').default(false));
}

function parseSize(value: string): number {
  if (!QUANTITY_PATTERN.test(value) || parseQuantity(value) === 0) throw new InvalidArgumentError(`"${value}" is not a size; use forms like 100Mi or 1Gi`);
  return parseQuantity(value);
}

/** `cairn server`. */
export function serverCommand(): Command {
  return addApiServerFlags(new Command('server'))
    .description('Run the all-in-one Cairn control plane: the API server, with a managed local etcd unless --etcd-endpoints is given')
    .option('--etcd-endpoints <urls>', 'external etcd endpoints, comma-separated (default: start an embedded etcd under --data-dir)', parseList)
    .option('--no-controller', 'do not run the controller (run `cairn controller` separately, or none to drive status by hand)')
    .option('--controller-metrics-port <port>', "port of the controller's /healthz and /metrics (default: a free port, logged)", parsePort, 0)
    .option('--audit-log-path <file>', 'where to log every mutating request, one JSON line each (default: <data-dir>/audit.log; "" for none)')
    .addHelpText('after', `
Examples:
  cairn server --data-dir /var/lib/cairn --port 6443
  cairn server --data-dir /tmp/c --port 0          # a free port; the URL is printed
  export KUBECONFIG=/var/lib/cairn/admin.kubeconfig && kubectl api-resources`)
    .action((flags: ServerFlags) => run(flags, true));
}

/** `cairn apiserver`. */
export function apiserverCommand(): Command {
  return addApiServerFlags(new Command('apiserver'))
    .description('Run one stateless API server replica over an external etcd')
    .requiredOption('--etcd-endpoints <urls>', 'etcd endpoints, comma-separated', parseList)
    .option('--audit-log-path <file>', 'where to log every mutating request, one JSON line each (default: no audit log)')
    .addHelpText('after', `
Examples:
  cairn apiserver --etcd-endpoints http://10.0.0.1:2379,http://10.0.0.2:2379 --listen 0.0.0.0 --data-dir /var/lib/cairn
  cairn apiserver --etcd-endpoints https://10.0.0.1:2379 --etcd-cafile etcd-ca.crt \\
    --etcd-certfile apiserver-etcd-client.crt --etcd-keyfile apiserver-etcd-client.key --audit-log-path /var/log/cairn/audit.log`)
    .action((flags: ServerFlags) => run(flags, false));
}

async function run(flags: ServerFlags, embedEtcd: boolean): Promise<void> {
  const log = createLogger('server', flags.logLevel);
  let etcd: EtcdSupervisor | null = null;
  let unlock: () => void = () => undefined;
  let endpoints = flags.etcdEndpoints ?? [];
  const etcdTls = { caFile: flags.etcdCafile, certFile: flags.etcdCertfile, keyFile: flags.etcdKeyfile };
  if (endpoints.length === 0 && (etcdTls.caFile || etcdTls.certFile || etcdTls.keyFile)) {
    throw new Error('--etcd-cafile, --etcd-certfile and --etcd-keyfile are for an external etcd given with --etcd-endpoints; the embedded etcd listens on loopback only, without TLS');
  }
  if (embedEtcd && endpoints.length === 0) {
    unlock = lockDataDir(flags.dataDir);
    etcd = new EtcdSupervisor({ dataDir: path.join(flags.dataDir, 'etcd'), logFile: path.join(flags.dataDir, 'etcd.log') }, log);
    endpoints = [await etcd.start()];
  }
  const opts: ApiServerOptions = {
    etcdEndpoints: endpoints,
    dataDir: flags.dataDir,
    listen: flags.listen,
    port: flags.port,
    advertiseAddress: flags.advertiseAddress,
    insecureHttp: flags.insecureHttp,
    crdDir: flags.crdDir ?? defaultCrdDir(),
    kubeconfigPath: flags.kubeconfig,
    kubeconfigNamespace: flags.kubeconfigNamespace,
    compactionIntervalMs: flags.compactionInterval,
    eventTtlSeconds: Math.round(flags.eventTtl / 1000),
    nodeCredentialTtlMs: flags.nodeCredentialTtl,
    logLevel: flags.logLevel,
    auditLog: auditLogOptions(flags, embedEtcd),
    etcdTls,
  };
  let server;
  try {
    server = flags.workers > 1 ? await startWorkerPool(flags.workers, opts, log) : await startApiServer(opts);
  } catch (err) {
    await etcd?.stop();
    unlock();
    throw explainEtcdFailure(err, endpoints, etcdTls);
  }
  process.stdout.write(`Cairn API server listening at ${server.url}\nkubeconfig: ${server.kubeconfigPath}\n  export KUBECONFIG=${server.kubeconfigPath}\n`);
  const controller = embedEtcd && flags.controller !== false ? superviseController(server.kubeconfigPath, flags, log) : undefined;
  let stopping = false;
  const shutdown = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    log.info('shutting down', { signal });
    await controller?.stop();
    await server.close();
    await etcd?.stop();
    unlock();
    process.exit(0);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

// `cairn server` logs to its data dir unless told otherwise; `cairn apiserver` only when given a path.
function auditLogOptions(flags: ServerFlags, allInOne: boolean): ApiServerOptions['auditLog'] {
  const file = flags.auditLogPath ?? (allInOne ? path.join(flags.dataDir, 'audit.log') : '');
  return file === '' ? undefined : { path: path.resolve(file), maxSizeBytes: flags.auditLogMaxSize, maxFiles: flags.auditLogMaxFiles };
}

/** Runs `cairn controller` against this server as a supervised child process. */
function superviseController(kubeconfig: string, flags: ServerFlags, log: ReturnType<typeof createLogger>): ChildSupervisor {
  const args = [...process.execArgv, process.argv[1]!, 'controller', '--kubeconfig', kubeconfig, '--metrics-port', String(flags.controllerMetricsPort ?? 0), '--log-level', flags.logLevel];
  const supervisor = new ChildSupervisor({ name: 'controller', command: process.execPath, args, log });
  supervisor.start();
  return supervisor;
}

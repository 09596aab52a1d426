/**
 * `cairn server` (all-in-one: apiserver, plus a managed local etcd when no
 * --etcd-endpoints is given) and `cairn apiserver` (apiserver over an
 * external etcd). Both shut down gracefully on SIGTERM/SIGINT.
 */
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../api/log.js';
import { shutDown } from './shut-down.js';
import { explainEtcdFailure } from '../../apiserver/etcd/client-tls.js';
import { lockDataDir } from '../../apiserver/etcd/data-dir-lock.js';
import { EtcdSupervisor } from '../../apiserver/etcd/supervisor.js';
import { defaultCrdDir, startApiServer, type ApiServerOptions } from '../../apiserver/server.js';
import { startWorkerPool } from '../../apiserver/worker-pool.js';
import { ChildSupervisor } from '../child-supervisor.js';
import { etcdTlsFiles, type EtcdTlsFlags } from '../etcd-flags.js';

/** The flags of `cairn server` and `cairn apiserver`, as commander parses them. */
export interface ServerFlags extends EtcdTlsFlags {
  dataDir: string;
  listen: string;
  port: number;
  advertiseAddress?: string;
  etcdEndpoints?: string[];
  /** The embedded etcd's --quota-backend-bytes. */
  etcdQuota?: number;
  insecureHttp: boolean;
  crdDir?: string;
  kubeconfig?: string;
  kubeconfigNamespace?: string;
  compactionInterval: number;
  eventTtl: number;
  nodeCredentialTtl: number;
  logLevel: string;
  workers: number;
  watchMemoryBudget: number;
  maxRequestsInflight: number;
  maxRequestsQueued: number;
  controller?: boolean;
  controllerMetricsPort?: number;
  auditLogPath?: string;
  auditLogMaxSize: number;
  auditLogMaxFiles: number;
  encryptionKeyFile?: string;
}

/** Runs `cairn server` (embedEtcd: an etcd of its own unless --etcd-endpoints) or `cairn apiserver`. */
export async function runServer(flags: ServerFlags, embedEtcd: boolean): Promise<void> {
  const log = createLogger('server', flags.logLevel);
  let etcd: EtcdSupervisor | null = null;
  let unlock: () => void = () => undefined;
  let endpoints = flags.etcdEndpoints ?? [];
  const etcdTls = etcdTlsFiles(flags);
  if (endpoints.length === 0 && (etcdTls.caFile || etcdTls.certFile || etcdTls.keyFile)) {
    throw new Error('--etcd-cafile, --etcd-certfile and --etcd-keyfile are for an external etcd given with --etcd-endpoints; the embedded etcd listens on loopback only, without TLS');
  }
  if (endpoints.length > 0 && flags.etcdQuota) throw new Error("--etcd-quota sets the embedded etcd's quota; an external etcd takes --quota-backend-bytes itself");
  // `cairn server` owns its data dir, over an external etcd too: its controller's identity is the data dir's
  // (serverControllerIdentity), and two holders of one identity would both renew the leader lease as theirs.
  if (embedEtcd) unlock = lockDataDir(flags.dataDir);
  if (embedEtcd && endpoints.length === 0) {
    etcd = new EtcdSupervisor({ dataDir: path.join(flags.dataDir, 'etcd'), logFile: path.join(flags.dataDir, 'etcd.log'), quotaBackendBytes: flags.etcdQuota }, log);
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
    watchBudgetBytes: flags.watchMemoryBudget,
    maxRequestsInflight: flags.maxRequestsInflight,
    maxRequestsQueued: flags.maxRequestsQueued,
    auditLog: auditLogOptions(flags, embedEtcd),
    etcdTls,
    encryptionKeyFile: flags.encryptionKeyFile && path.resolve(flags.encryptionKeyFile),
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
    await shutDown(log, [
      ['stopping the controller', () => controller?.stop()],
      ['closing the API server', () => server.close()],
      ['stopping the embedded etcd', () => etcd?.stop()],
      ['unlocking the data dir', unlock],
    ]);
  };
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  process.on('SIGINT', () => void shutdown('SIGINT'));
}

// `cairn server` logs to its data dir unless told otherwise; `cairn apiserver` only when given a path.
function auditLogOptions(flags: ServerFlags, allInOne: boolean): ApiServerOptions['auditLog'] {
  const file = flags.auditLogPath ?? (allInOne ? path.join(flags.dataDir, 'audit.log') : '');
  return file === '' ? undefined : { path: path.resolve(file), maxSizeBytes: flags.auditLogMaxSize, maxFiles: flags.auditLogMaxFiles };
}

/**
 * The controller's holder identity in the leader Lease: the same for every start of a server on this data
 * dir, so the controller of a restarted server (after a crash too) takes its lease back at once instead of
 * waiting it out. Unique while it runs: the data dir is locked by one server, which runs one controller
 * at a time (the supervisor starts another only once the last exited; a controller exits with its server).
 */
export function serverControllerIdentity(dataDir: string): string {
  return `${os.hostname()}_server-${createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 12)}`;
}

/** Runs `cairn controller` against this server as a supervised child process. */
function superviseController(kubeconfig: string, flags: ServerFlags, log: ReturnType<typeof createLogger>): ChildSupervisor {
  const identity = serverControllerIdentity(flags.dataDir);
  const args = [...process.execArgv, process.argv[1]!, 'controller', '--kubeconfig', kubeconfig, '--identity', identity, '--metrics-port', String(flags.controllerMetricsPort ?? 0), '--log-level', flags.logLevel];
  const supervisor = new ChildSupervisor({ name: 'controller', command: process.execPath, args, log });
  supervisor.start();
  return supervisor;
}

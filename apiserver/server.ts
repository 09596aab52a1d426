/**
 * Starting and stopping one apiserver process: certificates and the admin
 * token on first start, the etcd client, the watch cache, the HTTPS
 * listener (plain HTTP only when asked, for loopback debugging), the admin
 * kubeconfig, periodic compaction, and the watch on etcd's alarms.
 */
import cluster from 'node:cluster';
import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Etcd3 } from 'etcd3';
import type { Logger } from 'winston';
import { createLogger } from '../api/log.js';
import { cairnVersion } from '../api/version.js';
import { openAuditLog } from './audit/audit-log.js';
import { UnionAuthenticator } from './auth/authenticator.js';
import { discoveryAuthorizer, MASTERS_GROUP, mastersAuthorizer, UnionAuthorizer } from './auth/authorizer.js';
import { ensureBootstrapRoles } from './auth/bootstrap-roles.js';
import { NodeAuthorizer } from './auth/node-authorizer.js';
import { cachePolicy, RbacAuthorizer } from './auth/rbac-authorizer.js';
import { credentialExchangeAuthorizer, nodeCredentialRoutes } from './auth/node-credentials.js';
import { StoredTokenAuthenticator } from './auth/stored-tokens.js';
import { startTokenCleaner } from './auth/token-cleaner.js';
import { ensureAdminCredentials, TokenAuthenticator } from './auth/tokens.js';
import { absentKindDefinitions } from './builtin/absent-kinds.js';
import { configMapDefinition, secretDefinition } from './builtin/config-data.js';
import { eventDefinition } from './builtin/event.js';
import { leaseDefinition } from './builtin/lease.js';
import { namespaceDefinition } from './builtin/namespace.js';
import { rbacDefinitions } from './builtin/rbac.js';
import { tokenDefinition } from './builtin/token.js';
import { ACCESS_REVIEW_KEY, accessReviewHandler, selfSubjectAccessReviewDefinition } from './http/access-review.js';
import { selfReviewHandlers, selfSubjectReviewDefinition, selfSubjectRulesReviewDefinition } from './http/self-reviews.js';
import { defaultCrdDir, loadCrds } from './crd-loader.js';
import { EtcdAlarmMonitor } from './etcd/alarm-monitor.js';
import { loadEtcdCredentials } from './etcd/client-tls.js';
import { ThinTxnClient } from './etcd/txn-client.js';
import { etcdCallOptions, etcdHostPolicy } from './etcd/fault-handling.js';
import { raisedAlarms } from './etcd/maintenance.js';
import { EtcdNoSpaceError, recoveryCommand } from './etcd/no-space.js';
import { WatchBudget } from './http/watch-budget.js';
import { createApp } from './http/app.js';
import { answerClientError } from './http/client-error.js';
import type { ApiContext } from './http/context.js';
import { OpenApi } from './http/openapi.js';
import { OpenApiV2 } from './http/openapi-v2.js';
import { defaultApiServerOptions, type ApiServerOptions } from './options.js';
import { createRequestListener, type SubresourceHandler } from './http/request-listener.js';
import { WorkloadSeats } from './http/priority-levels.js';
import type { Security } from './http/security.js';
import { buildKubeconfig, writeKubeconfig } from './kubeconfig.js';
import { ApiServerMetrics } from './metrics.js';
import { ApiError } from './errors.js';
import { keyResource } from './storage/keys.js';
import { serveInstanceLog, type LogDeps } from './tunnel/instance-log.js';
import { Tunnels } from './tunnel/tunnels.js';
import { upgradeListener } from './tunnel/upgrade.js';
import { ensurePki } from './pki.js';
import { Registry } from './registry.js';
import type { ResourceDefinition } from './resources.js';
import { Lister } from './rest/lister.js';
import { Namespaces } from './rest/namespaces.js';
import { ResourceStore } from './rest/resource-store.js';
import { controllerFinalizerAtCreation } from './rest/controller-finalizer.js';
import { Compactor } from './storage/compactor.js';
import { AtRestEncryption, ensureKeyFile } from './storage/encryption.js';
import { EtcdStore, MAX_RECEIVE_BYTES } from './storage/etcd-store.js';
import { LeaseManager } from './storage/lease-manager.js';
import { WatchCache } from './storage/watch-cache.js';

/** A running apiserver. */
export interface RunningApiServer {
  url: string;
  kubeconfigPath: string;
  /** Stops accepting, ends watches, closes etcd; resolves when done. */
  close(): Promise<void>;
}

/** Starts an apiserver; resolves once it is listening with a warm cache. */
export async function startApiServer(o: ApiServerOptions): Promise<RunningApiServer> {
  const log = createLogger('apiserver', o.logLevel);
  if (o.insecureHttp && !isLoopback(o.listen)) {
    throw new Error(`--insecure-http serves without TLS, so tokens would cross the network in clear text; it is only allowed on a loopback --listen address, not ${o.listen}`);
  }
  fs.mkdirSync(o.dataDir, { recursive: true, mode: 0o700 });
  const pki = await ensurePki(path.join(o.dataDir, 'pki'), { hosts: serverHosts(o) });
  const admin = await ensureAdminCredentials(o.dataDir);
  const adminAuthenticator = new TokenAuthenticator([{ sha256: admin.sha256, user: { name: 'admin', groups: [MASTERS_GROUP] } }]);

  const metrics = new ApiServerMetrics(() => watchBudget.buffered(), () => cache.sizes());
  const watchBudget = new WatchBudget(o.watchBudgetBytes ?? defaultApiServerOptions.watchBudgetBytes, (reason) => metrics.watchEvictions.inc({ reason }));
  const { client, writes, alarms } = connectEtcd(o, log, metrics);
  const encryption = new AtRestEncryption(ensureKeyFile(o.encryptionKeyFile ?? path.join(o.dataDir, 'encryption-keys.yaml')));
  const etcd = new EtcdStore(client, (operation, key, seconds) => metrics.etcdRequestDuration.observe({ operation, type: keyResource(key) }, seconds), encryption, writes);
  const registry = new Registry(servedDefinitions(o.crdDir));
  const cache = new WatchCache(etcd, registry.defs, log);
  await cache.start();
  const clusterDef = registry.find('cairn.dev', 'v1alpha1', 'clusters');
  if (!clusterDef) throw new Error(`no Cluster CRD found in ${o.crdDir}`);
  const namespaces = new Namespaces(etcd, cache, clusterDef, new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'));
  const store = new ResourceStore({ etcd, registry, namespaces, eventLeases: new LeaseManager(etcd, o.eventTtlSeconds), now: () => new Date(), creationFinalizers: controllerFinalizerAtCreation(cache.forResource(leaseDefinition)), cached: (key) => cache.stored(key) });
  await ensureBootstrapRoles(store, registry, log);
  const ctx: ApiContext = { registry, etcd, cache, store, lister: new Lister(etcd, cache), namespaces, log, watches: new Set(), watchKeepaliveMs: o.watchKeepaliveMs ?? 15_000, watchBudget, metrics, seats: workloadSeats(o) };
  let closing = false;
  const notReady = async () => (closing ? 'shutting down' : (await cache.waitFresh(2000).catch(() => false)) ? null : 'etcd is unreachable or the watch cache is behind it');
  const audit = openAuditLog(o.auditLog, log);
  const security: Security = {
    authenticator: new UnionAuthenticator([adminAuthenticator, new StoredTokenAuthenticator(tokenDefinition, cache)]),
    authorizer: new UnionAuthorizer([mastersAuthorizer, new NodeAuthorizer(cache, registry), discoveryAuthorizer, credentialExchangeAuthorizer, new RbacAuthorizer(cache)]),
    audit,
  };
  const routes = nodeCredentialRoutes({ def: tokenDefinition, store, tokens: cache.forResource(tokenDefinition), ttlMs: o.nodeCredentialTtlMs ?? defaultApiServerOptions.nodeCredentialTtlMs });
  const app = createApp(ctx, { security, routes, openapi: new OpenApi(registry), openapiV2: new OpenApiV2(registry), cairnVersion: cairnVersion(), notReady, readyWarnings: () => alarms.warnings() });

  let tunnels: LogDeps | undefined; // set once listening: the tunnels need this replica's address
  const starting = (): LogDeps => {
    throw new ApiError(503, 'ServiceUnavailable', 'the apiserver is still starting; retry');
  };
  const subresources: Record<string, SubresourceHandler> = { 'cairn.dev/instances/log': (req, res, info) => serveInstanceLog(tunnels ?? starting(), req, res, info.namespace ?? '', info.name ?? '') };
  const listener = createRequestListener(ctx, security, app, { [ACCESS_REVIEW_KEY]: accessReviewHandler(security.authorizer, registry), ...selfReviewHandlers(cachePolicy(cache)) }, subresources);
  const serve = () => (o.insecureHttp ? http.createServer(listener) : https.createServer({ key: pki.keyPem, cert: pki.certPem, minVersion: 'TLSv1.2' }, listener));
  const server = serve();
  server.keepAliveTimeout = 65_000;
  server.on('clientError', answerClientError);
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(o.port, o.listen, () => resolve()));
  const url = serverUrl(o, server, o.listen === '0.0.0.0' || o.listen === '::' ? '127.0.0.1' : o.listen);
  // Workers share one port, so each also listens on a port of its own where other replicas reach the tunnels it holds.
  const peer = cluster.isWorker ? serve() : undefined;
  if (peer) await new Promise<void>((resolve, reject) => peer.once('error', reject).listen({ port: 0, host: o.advertiseAddress ?? '127.0.0.1', exclusive: true }, () => resolve()));
  const peerUrl = peer ? serverUrl(o, peer, o.advertiseAddress ?? '127.0.0.1') : o.advertiseAddress ? serverUrl(o, server, o.advertiseAddress) : url;
  const tunnelDeps: LogDeps = { ctx, tunnels: new Tunnels(client, peerUrl, log, (open) => metrics.tunnels.set(open)), peers: { adminToken: admin.token, caPem: pki.caCertPem, self: peerUrl }, security };
  tunnels = tunnelDeps;
  for (const s of [server, peer]) s?.on('upgrade', upgradeListener(tunnelDeps));
  // Once listening, a failed accept() (EMFILE, ENFILE) is emitted on the server: with no listener it would end the process.
  for (const s of [server, peer]) s?.on('error', (err: Error) => log.error('the API server could not accept a connection', { error: err.message }));
  const kubeconfigPath = o.kubeconfigPath ?? path.join(o.dataDir, 'admin.kubeconfig');
  await writeKubeconfig(kubeconfigPath, buildKubeconfig({ server: url, token: admin.token, namespace: o.kubeconfigNamespace, ...(o.insecureHttp ? {} : { caCertPem: pki.caCertPem }) }));
  const compactor = new Compactor(etcd, o.compactionIntervalMs, log);
  compactor.start();
  alarms.start();
  const stopTokenCleaner = startTokenCleaner(tokenDefinition, cache.forResource(tokenDefinition), store, log);
  log.info('apiserver listening', { url, kubeconfig: kubeconfigPath, etcd: o.etcdEndpoints });

  return {
    url,
    kubeconfigPath,
    async close() {
      closing = true;
      compactor.stop();
      alarms.stop();
      stopTokenCleaner();
      await tunnelDeps.tunnels.close();
      peer?.close();
      peer?.closeAllConnections();
      const closed = new Promise((r) => server.close(r));
      for (const end of [...ctx.watches]) end();
      server.closeIdleConnections();
      const forced = setTimeout(() => server.closeAllConnections(), 5000);
      await closed;
      await audit.close();
      clearTimeout(forced);
      await cache.stop();
      client.close();
      writes.close();
    },
  };
}

function serverUrl(o: ApiServerOptions, server: http.Server, host: string): string {
  const port = (server.address() as AddressInfo).port;
  return `${o.insecureHttp ? 'http' : 'https'}://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** The names and addresses the serving certificate must cover. */
export function serverHosts(o: Pick<ApiServerOptions, 'listen' | 'advertiseAddress'>): string[] {
  return [os.hostname(), o.listen, ...(o.advertiseAddress ? [o.advertiseAddress] : [])].filter((h) => h !== '0.0.0.0' && h !== '::');
}

/**
 * The etcd client and the monitor of etcd's alarms. A write etcd refuses for
 * NOSPACE becomes an EtcdNoSpaceError naming the command that frees space
 * (a 507 to the client) and tells the monitor at once, which feeds /readyz,
 * the metric and the log.
 */
function connectEtcd(o: ApiServerOptions, log: Logger, metrics: ApiServerMetrics): { client: Etcd3; writes: ThinTxnClient; alarms: EtcdAlarmMonitor } {
  const recovery = recoveryCommand(o.etcdEndpoints, o.etcdTls);
  const onState = (alarm: string, raised: boolean) => metrics.etcdAlarm.set({ alarm }, raised ? 1 : 0);
  const alarms = new EtcdAlarmMonitor({ listAlarms: async () => (await raisedAlarms(client)).map((a) => a.alarm), recovery, log, onState });
  const noSpace = (cause: unknown) => {
    alarms.noteNoSpace();
    return new EtcdNoSpaceError(recovery, cause);
  };
  // The client's default global policy re-sends a call that failed recoverably, a committed write
  // whose answer was lost included; EtcdStore recognises such a write as its own.
  const credentials = loadEtcdCredentials(o.etcdTls, o.etcdEndpoints);
  const hostPolicy = () => etcdHostPolicy(noSpace);
  const client = new Etcd3({
    hosts: o.etcdEndpoints,
    credentials,
    faultHandling: { host: hostPolicy },
    defaultCallOptions: etcdCallOptions,
    grpcOptions: { 'grpc.max_receive_message_length': MAX_RECEIVE_BYTES },
  });
  // Writes take a thinner path with the same fault handling (etcd/txn-client.ts).
  return { client, writes: new ThinTxnClient(o.etcdEndpoints, hostPolicy, credentials), alarms };
}

function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/** The workload level's seats and queue from the options (their defaults when absent). */
function workloadSeats(o: ApiServerOptions): WorkloadSeats {
  return new WorkloadSeats(o.maxRequestsInflight ?? defaultApiServerOptions.maxRequestsInflight, o.maxRequestsQueued ?? defaultApiServerOptions.maxRequestsQueued);
}

export { defaultCrdDir, defaultApiServerOptions, type ApiServerOptions };

/** Every kind the apiserver serves: the CRDs in `crdDir` and the built-in kinds (also what `cairn restore` keys objects by). */
export function servedDefinitions(crdDir: string): ResourceDefinition[] {
  return [
    ...loadCrds(crdDir),
    leaseDefinition,
    eventDefinition,
    namespaceDefinition,
    secretDefinition,
    configMapDefinition,
    tokenDefinition,
    ...rbacDefinitions,
    selfSubjectAccessReviewDefinition,
    selfSubjectRulesReviewDefinition,
    selfSubjectReviewDefinition,
    ...absentKindDefinitions,
  ];
}

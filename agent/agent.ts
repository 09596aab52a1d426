/**
 * The node agent process: registers its Node, renews its node Lease (its
 * heartbeat and its fence, docs/fencing.md),
 * list+watches only the WorkItems addressed to it (fieldSelector
 * spec.nodeName=<node>, served from an index by the apiserver) and
 * reconciles them through the shared work queue. It never accepts inbound
 * control connections. When the apiserver is unreachable at start it works
 * from its persisted copy of its WorkItems, keeping instances running
 * until their fencing deadlines; heartbeats and status resume on their own.
 * Logs and consoles reach users through the tunnel the agent opens
 * (tunnel/), never through a connection to the node.
 *
 * Shutdown: stop taking work, SIGTERM every operation worker (SIGKILL
 * after the grace period), flush the store. Instances keep running: they
 * belong to the node, not to the agent process.
 */
import path from 'node:path';
import fs from 'node:fs';
import type { Logger } from 'winston';
import { CairnClient } from '../api/client/cairn-client.js';
import type { AcceleratorChoice } from '../api/cluster.js';
import { formatTime } from '../api/conditions.js';
import { loadKubeConfig, type ConnectionOptions } from '../api/client/kubeconfig.js';
import { GROUP, PLURALS, VERSION } from '../api/types.js';
import type { NodeDriver } from '../api/node.js';
import type { WorkItem } from '../api/workitem.js';
import { realClock, type Clock } from '../runtime/clock.js';
import { Controller } from '../runtime/controller.js';
import { startHealthServer, type HealthServer } from '../runtime/health-server.js';
import { Informer } from '../runtime/informer.js';
import { ExponentialBackoffLimiter } from '../runtime/rate-limiter.js';
import type { DriverSettings } from './drivers/driver.js';
import { fenceDeadlinePath } from './drivers/paths.js';
import { rotateInstanceLogs } from './drivers/process/log-rotation.js';
import { bootId } from './drivers/process/proc.js';
import { probeQemu, type QemuCapability } from './drivers/qemu/probe.js';
import { probeGluster } from './drivers/volume/gluster-brick.js';
import { claimNameOf, InstanceClaims } from './fencing/claims.js';
import { NodeFence } from './fencing/node-fence.js';
import { CredentialRotator, type StoredCredential } from './credentials.js';
import { mountVolfileLookup } from './gluster/mount-volfiles.js';
import { startVolfileServer, volfileSocket } from './gluster/volfile-server.js';
import { startLivenessSweep } from './liveness.js';
import { startMountWatch } from './gluster/mount-watch.js';
import { guardedInterval } from '../runtime/guarded-interval.js';
import { LocalStore, keyOf } from './local-store.js';
import { MetadataCopy, OwnerCopier } from './metadata-copy.js';
import { detectCapacity, type CapacityOverrides } from './machine.js';
import { AgentMetrics } from './metrics.js';
import { registerNode } from './node-registration.js';
import { OperationRunner } from './operations/runner.js';
import { cancelGuestOperations, reconcileWorkItem, type AgentReconcilerDeps } from './reconciler.js';
import { nodeReport } from './report.js';
import { TunnelClient } from './tunnel/tunnel-client.js';

/** How often running instances' and bricks' processes are checked (cheaply, through /proc), and mounts' clients. */
const LIVENESS_SWEEP = { instancesMs: 2_000, bricksMs: 1_000 };
/** How often the copies of the Node and the Cluster are refreshed (metadata-copy.ts). */
const NODE_COPY_REFRESH_MS = 60_000;
/** How often the volfile server checks whether a mount's volfile changed (a brick moved). */
const VOLFILE_REFRESH_MS = 1_000;

/** Settings of the agent (flags of `cairn agent`). */
export interface AgentOptions {
  connection: ConnectionOptions;
  cluster: string;
  nodeName: string;
  dataDir: string;
  labels: Record<string, string>;
  capacity: CapacityOverrides;
  heartbeatIntervalMs: number;
  leaseDurationSeconds: number;
  workers: number;
  monitorHost: string;
  /** 0 = a free port; -1 = none. */
  monitorPort: number;
  shutdownGraceMs: number;
  /** Restart a WorkItem watch silent for this long (default 60 s). */
  watchIdleTimeoutMs?: number;
  agentVersion: string;
  /** Accelerator of qemu VMs with accelerator auto: auto probes whether KVM runs guests (default). */
  qemuAccelerator?: AcceleratorChoice;
  /** Address other nodes reach this node's live-migration listeners on (default 127.0.0.1). */
  migrationAddress?: string;
  /** The node credential the connection uses, renewed while the agent runs (joined with a join token). */
  credential?: StoredCredential;
  log: Logger;
  clock?: Clock;
}

/** A running agent. */
export interface RunningAgent {
  monitorUrl: string | undefined;
  stop(): Promise<void>;
}

/** Starts the agent and returns once its monitoring endpoint is up (registration continues in the background until the apiserver answers). */
export async function startAgent(opts: AgentOptions): Promise<RunningAgent> {
  const clock = opts.clock ?? realClock;
  const { log } = opts;
  fs.mkdirSync(opts.dataDir, { recursive: true });
  const kubeConfig = loadKubeConfig(opts.connection);
  const client = new CairnClient(kubeConfig, `cairn-agent/${opts.nodeName}`);
  const rotator = opts.credential && new CredentialRotator(kubeConfig, opts.credential, { dataDir: opts.dataDir, connection: { ...opts.connection, server: opts.credential.server }, clock, log });
  rotator?.start();
  const store = LocalStore.at(opts.dataDir, (err) => log.error('cannot write the local copy of the WorkItems; retrying', { error: err.message, dataDir: opts.dataDir }));
  store.load();
  const copy = MetadataCopy.at(opts.dataDir);
  const source = { group: GROUP, version: VERSION, plural: PLURALS.WorkItem, namespace: opts.cluster, fieldSelector: `spec.nodeName=${opts.nodeName}` };
  const informer = new Informer<WorkItem>(kubeConfig, source, { log, clock, idleTimeoutMs: opts.watchIdleTimeoutMs });
  const metrics = new AgentMetrics(() => (informer.hasSynced ? informer.list() : store.list()));
  const [qemu, gluster] = await Promise.all([probeQemu(opts.qemuAccelerator ?? 'auto'), probeGluster()]);
  log.info('gluster driver', { available: gluster.available, version: gluster.version, message: gluster.message });
  log.info('qemu driver', { available: qemu.driver.available, accelerator: qemu.accelerator, message: qemu.driver.message });
  const deadlineFile = fenceDeadlinePath(opts.dataDir, opts.cluster);
  const settings: DriverSettings = { dataDir: opts.dataDir, nodeName: opts.nodeName, fenceFile: deadlineFile, ...(qemu.accelerator ? { accelerator: qemu.accelerator } : {}), ...(opts.migrationAddress ? { migrationAddress: opts.migrationAddress } : {}) };
  const runner = new OperationRunner({ ...settings, logger: log, killGraceMs: opts.shutdownGraceMs });
  const operations: AgentReconcilerDeps['operations'] = new Map();
  let controller: Controller | undefined;
  const items = () => (informer.hasSynced ? informer.list() : store.list());
  const wakeAll = () => items().forEach((w) => controller?.queue.add(keyOf(w)));
  const stored = store.storedFence;
  // Its own connection pool: a renewal must not wait behind hundreds of status writes (the term would lapse).
  const fenceConfig = kubeConfig.withOwnPool();
  const fence = new NodeFence(fenceConfig, { cluster: opts.cluster, nodeName: opts.nodeName, intervalMs: opts.heartbeatIntervalMs, leaseDurationSeconds: opts.leaseDurationSeconds, deadlineFile, clock, bootId: bootId(), log, onUnsafe: () => { cancelGuestOperations(operations); wakeAll(); }, onNewTerm: wakeAll, onResult: (ok) => !ok && metrics.leaseRenewFailures.inc({ lease: 'node' }), onRenewed: () => persistFence(store, fence, copy, log) }, stored);
  const claims = new InstanceClaims(kubeConfig, { cluster: opts.cluster, nodeName: opts.nodeName, leaseDurationSeconds: opts.leaseDurationSeconds, clock, onChange: (key, term, leaseName) => {
    store.recordClaim(key, term);
    if (term) copy.save('Lease', claims.lease(key));
    else copy.remove('Lease', opts.cluster, leaseName);
  } });
  if (stored && fence.term === stored.term) claims.restore(stored.term, store.claimedIn(stored.term), (k) => { const w = store.get(k); return w && claimNameOf(w); });
  const deps: AgentReconcilerDeps = { client, runner, fence, claims, store, cached: (k) => informer.get(k), synced: () => informer.hasSynced, settings, clock, log, metrics, operations };
  controller = new Controller({ name: 'workitem', reconcile: (k) => reconcileWorkItem(deps, k), workers: opts.workers, log, metrics, clock, rateLimiter: new ExponentialBackoffLimiter(200, 60_000) });
  wireInformer(informer, controller, store, operations);
  const owners = new OwnerCopier(copy, (kind, ns, name) => client.get(kind, ns, name), items, (err) => log.warn('cannot refresh the metadata copy of an owner', { error: String(err) }));
  informer.addHandlers({ add: (w) => owners.changed(w), update: (_old, w) => owners.changed(w), delete: (w) => owners.changed(w) });
  store.list().forEach((w) => owners.changed(w));
  const registration = registerUntilDone(client, opts, [qemu.driver, gluster], qemu.accelerator, log);
  void registration.then(() => copyNodeAndCluster(client, copy, opts));
  fence.start();
  for (const w of store.list()) controller.queue.add(keyOf(w));
  informer.start();
  const workers = controller.run();
  const volfiles = await startVolfileServer(volfileSocket(opts.dataDir), mountVolfileLookup(items, opts.dataDir), (m, meta) => log.info(m, meta));
  const failed = (what: string) => (err: unknown) => log.warn(`${what} failed; it runs again at its next interval`, { error: String(err) });
  const enqueue = (k: string) => controller!.queue.add(k);
  const timers = [
    startLogRotation(opts, log),
    ...startLivenessSweep(items, enqueue, LIVENESS_SWEEP, failed('the liveness sweep')),
    startMountWatch(opts.dataDir, items, enqueue, LIVENESS_SWEEP.bricksMs, failed('the look for dead gluster mounts')),
    guardedInterval(() => volfiles.refresh(), VOLFILE_REFRESH_MS, failed('the volfile refresh')),
    setInterval(() => void copyNodeAndCluster(client, copy, opts), NODE_COPY_REFRESH_MS),
  ];
  // Its own pool: the tunnel is long-lived and must not take a socket the WorkItem traffic needs.
  const tunnel = new TunnelClient({ kubeConfig: kubeConfig.withOwnPool(), cluster: opts.cluster, nodeName: opts.nodeName, dataDir: opts.dataDir, items, log });
  tunnel.start();
  const monitor = opts.monitorPort >= 0 ? await startMonitor(opts, metrics, informer, runner, store, registration) : undefined;
  log.info('agent started', { node: opts.nodeName, cluster: opts.cluster, dataDir: opts.dataDir, monitor: monitor?.url });
  return {
    monitorUrl: monitor?.url,
    async stop() {
      rotator?.stop();
      tunnel.stop();
      controller!.stop();
      owners.stop();
      fence.stop();
      for (const t of timers) clearInterval(t);
      await runner.shutdown(opts.shutdownGraceMs);
      await Promise.race([workers, new Promise((r) => setTimeout(r, opts.shutdownGraceMs))]);
      persistFence(store, fence, copy, log);
      await informer.stop();
      await volfiles.close();
      await monitor?.close();
      kubeConfig.destroyAgent();
      fenceConfig.destroyAgent();
    },
  };
}

/**
 * Enqueues changed WorkItems and cancels an operation whose WorkItem changed under it, but never a fence
 * stop: whatever the WorkItem says meanwhile, that stop must end before the node's lease runs out (once
 * cancelled, it was retried with the queue's backoff, up to a minute later).
 */
function wireInformer(informer: Informer<WorkItem>, controller: Controller, store: LocalStore, operations: AgentReconcilerDeps['operations']): void {
  const cancelIfChanged = (w: WorkItem) => {
    const op = operations.get(keyOf(w));
    if (op && !op.fence && (op.generation !== w.metadata.generation || w.metadata.deletionTimestamp)) op.abort.abort('the WorkItem changed or is being deleted');
  };
  informer.addHandlers({
    add: (w) => controller.queue.add(keyOf(w)),
    update: (old, w) => {
      cancelIfChanged(w);
      // The agent's own status writes come back as updates; reconciling on them would retry a failing
      // WorkItem at once after every attempt, defeating the queue's backoff (a hot loop of workers).
      if (!statusOnlyChange(old, w)) controller.queue.add(keyOf(w));
    },
    delete: (w) => {
      const op = operations.get(keyOf(w));
      if (op && !op.fence) op.abort.abort('the WorkItem was deleted');
      controller.queue.add(keyOf(w));
    },
  });
  // After the first sync, stored items the apiserver no longer has were deleted while we were away.
  void informer.waitForSync().then(() => {
    for (const w of store.list()) if (!informer.get(keyOf(w))) controller.queue.add(keyOf(w));
  });
}

/** Whether only status (and resourceVersion) differ between two versions of a WorkItem. */
function statusOnlyChange(a: WorkItem, b: WorkItem): boolean {
  const [m, n] = [a.metadata, b.metadata];
  return m.generation !== undefined && m.generation === n.generation && m.uid === n.uid && m.deletionTimestamp === n.deletionTimestamp && JSON.stringify(m.finalizers ?? []) === JSON.stringify(n.finalizers ?? []);
}

/** Registers the Node, retrying until the apiserver answers. */
async function registerUntilDone(client: CairnClient, opts: AgentOptions, probed: NodeDriver[], accelerator: QemuCapability['accelerator'], log: Logger): Promise<void> {
  const registration = {
    cluster: opts.cluster,
    nodeName: opts.nodeName,
    labels: opts.labels,
    capacity: detectCapacity(opts.dataDir, opts.capacity),
    dataDir: path.resolve(opts.dataDir),
    agentVersion: opts.agentVersion,
    agentStartTime: formatTime(new Date()),
    drivers: [{ name: 'process' as const, available: true }, { name: 'file' as const, available: true }, ...probed],
    ...(accelerator ? { accelerator } : {}),
  };
  for (let delay = 500; ; delay = Math.min(delay * 2, 10_000)) {
    try {
      await registerNode(client, registration);
      log.info('node registered', { node: opts.nodeName, cluster: opts.cluster });
      return;
    } catch (err) {
      log.warn('node registration failed; retrying', { node: opts.nodeName, error: String(err), retryInMs: delay });
      await new Promise((r) => setTimeout(r, delay));
    }
  }
}

/**
 * Writes the term and the claims made in it now (on every renewal, and at shutdown): a restarted agent must
 * find the latest. The node lease goes to the metadata copy too, so a restore of etcd continues the term.
 */
function persistFence(store: LocalStore, fence: NodeFence, copy: MetadataCopy, log: Logger): void {
  try {
    store.recordFence(fence);
    store.flush();
    copy.save('Lease', fence.lease);
  } catch (err) {
    // A full or read-only disk: the renewal stands, and the next one writes again. Thrown, it would end the agent.
    log.error('cannot write the fencing term to the data dir', { error: (err as Error).message });
  }
}

/** Refreshes the copies of the node's Node and Cluster (two GETs; a failure keeps the previous copies). */
async function copyNodeAndCluster(client: CairnClient, copy: MetadataCopy, opts: AgentOptions): Promise<void> {
  try {
    copy.save('Node', await client.get('Node', opts.cluster, opts.nodeName));
    copy.save('Cluster', await client.get('Cluster', undefined, opts.cluster));
  } catch (err) {
    opts.log.warn('cannot refresh the metadata copy of the Node and Cluster', { error: String(err) });
  }
}

function startLogRotation(opts: AgentOptions, log: Logger): NodeJS.Timeout {
  const rotate = setInterval(() => void rotateInstanceLogs(opts.dataDir).catch((err: unknown) => log.warn('log rotation failed', { error: String(err) })), 60_000);
  rotate.unref();
  return rotate;
}

function startMonitor(opts: AgentOptions, metrics: AgentMetrics, informer: Informer<WorkItem>, runner: OperationRunner, store: LocalStore, registration: Promise<void>): Promise<HealthServer> {
  let registered = false;
  void registration.then(() => (registered = true));
  return startHealthServer({
    host: opts.monitorHost,
    port: opts.monitorPort,
    registry: metrics.registry,
    healthy: () => true,
    ready: () => (registered && informer.hasSynced) || 'not yet registered and synced with the apiserver',
    json: { '/status': () => nodeReport(opts, informer.hasSynced ? informer.list() : store.list(), runner) },
  });
}

/**
 * The controller process: leader election first, then — only while
 * leading — the informers and the Cluster, Node, Instance and Volume
 * reconcile loops. Losing the lease stops every loop at once and run()
 * resolves 'lost' so the caller exits non-zero (its supervisor restarts it
 * as a follower, with a clean cache). /healthz, /readyz and /metrics are
 * served from the start, leader or not.
 */
import os from 'node:os';
import type { Logger } from 'winston';
import { CairnClient } from '../api/client/cairn-client.js';
import { loadKubeConfig, type ConnectionOptions } from '../api/client/kubeconfig.js';
import { CONTROLLER_LEASE_NAME, SYSTEM_NAMESPACE } from '../api/names.js';
import { createLogger } from '../api/log.js';
import { ControllerCache } from './cache.js';
import { LeaseObservations } from './lease-observations.js';
import { Placements } from './placements.js';
import { StaleGuard } from './reconcilers/stale-guard.js';
import { realClock } from '../runtime/clock.js';
import { EventRecorder } from '../runtime/events.js';
import { startHealthServer, type HealthServer } from '../runtime/health-server.js';
import { LeaderElector, type LeaderElectionTimings } from '../runtime/leader-election.js';
import { LeaseLock } from '../runtime/lease-lock.js';
import { RuntimeMetrics } from '../runtime/metrics.js';
import { buildControllers, type ReconcileLoops } from './loops.js';

/** Settings of the controller process (flags of `cairn controller`). */
export interface ControllerManagerOptions {
  connection: ConnectionOptions;
  /** Holder identity in the leader Lease; default hostname_pid. */
  identity?: string;
  timings: LeaderElectionTimings;
  /** Workers of the Instance and Volume loops (Cluster and Node use half, at least 1). */
  workers: number;
  resyncMs: number;
  metricsHost: string;
  /** 0 = any free port; -1 = no health server. */
  metricsPort: number;
  log?: Logger;
}

/** A running controller process. */
export interface ControllerManager {
  /** Resolves 'lost' when leadership was lost, 'stopped' after stop(). */
  done: Promise<'lost' | 'stopped'>;
  healthUrl: string | undefined;
  identity: string;
  isLeader(): boolean;
  stop(): Promise<void>;
}

/** Starts the controller: health server, leader election, and the loops while leading. */
export async function startControllerManager(opts: ControllerManagerOptions): Promise<ControllerManager> {
  const log = opts.log ?? createLogger('controller');
  const identity = opts.identity ?? `${os.hostname()}_${process.pid}`;
  const kubeConfig = loadKubeConfig(opts.connection);
  const metrics = new RuntimeMetrics();
  const recorder = new EventRecorder(kubeConfig, 'cairn-controller', identity, log);
  const lock = new LeaseLock(kubeConfig, { namespace: SYSTEM_NAMESPACE, name: CONTROLLER_LEASE_NAME, identity, leaseDurationSeconds: Math.ceil(opts.timings.leaseDurationMs / 1000) });
  const leaseRef = { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { namespace: SYSTEM_NAMESPACE, name: CONTROLLER_LEASE_NAME } };
  let loops: ReconcileLoops | undefined;
  let cache: ControllerCache | undefined;
  const lease = { lease: CONTROLLER_LEASE_NAME };
  const elector = new LeaderElector({
    lock,
    timings: opts.timings,
    log,
    onStartedLeading: () => {
      log.info('became leader; starting reconcile loops', { identity });
      metrics.isLeader.set(lease, 1);
      metrics.leaderTransitions.inc({ ...lease, transition: 'acquired' });
      void recorder.record(leaseRef, 'Normal', 'LeaderElection', `${identity} became leader`);
      cache = new ControllerCache(kubeConfig, log);
      loops = buildControllers({ cache, client: new CairnClient(kubeConfig, 'cairn-controller'), recorder, log, metrics, clock: realClock, leases: new LeaseObservations(), placements: new Placements(cache), stale: new StaleGuard(), workers: opts.workers, resyncMs: opts.resyncMs });
      void loops.start();
    },
    onStoppedLeading: (reason) => {
      log.warn('stopped leading; stopping every reconcile loop', { identity, reason });
      loops?.stop();
      void cache?.stop();
      metrics.isLeader.set(lease, 0);
      metrics.leaderTransitions.inc({ ...lease, transition: 'lost' });
      void recorder.record(leaseRef, 'Warning', 'LeaderElection', `${identity} stopped leading: ${reason}`);
      // The lease is released once the reconciles in flight have ended (leader-election.ts); the cache
      // writes nothing, and a relist under way would hold the release back for no reason.
      return loops?.stopped;
    },
    onNewLeader: (holder) => log.info('another controller leads', { leader: holder }),
  });
  const health = opts.metricsPort >= 0 ? await startHealth(opts, metrics, elector, () => loops) : undefined;
  const stopSignal = new AbortController();
  // A deposed leader ('lost') must stop acting at once: its caller exits, which also cuts off requests still in
  // flight (waiting for them would hang for as long as the apiserver does, while another controller takes over).
  // One shutting down ('stopped') releases the lease only once its reconciles have ended (leader-election.ts).
  const done = elector.run(stopSignal.signal);
  return {
    done,
    healthUrl: health?.url,
    identity,
    isLeader: () => elector.isLeader,
    async stop() {
      stopSignal.abort();
      await done;
      await health?.close();
      kubeConfig.destroyAgent();
    },
  };
}

function startHealth(opts: ControllerManagerOptions, metrics: RuntimeMetrics, elector: LeaderElector, loops: () => ReconcileLoops | undefined): Promise<HealthServer> {
  return startHealthServer({
    host: opts.metricsHost,
    port: opts.metricsPort,
    registry: metrics.registry,
    healthy: () => elector.healthy || 'leader lease renewal is overdue',
    ready: () => !elector.isLeader || loops()?.synced === true || 'leader: caches not yet synced',
  });
}

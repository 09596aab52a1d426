/**
 * A controller integration environment: real etcd, an in-process
 * apiserver, the controller manager running in this process with short
 * leader-election timings, and fake agents (test/support/fake-agent.ts)
 * that the test starts, freezes and stops. Logs of the controller and the
 * agents go to memory (CAIRN_TEST_LOG=1 also prints them) so a failing
 * test can dump them.
 */
import { Writable } from 'node:stream';
import { CoreV1Api, CoordinationV1Api, type CoreV1Event, type V1Lease } from '@kubernetes/client-node';
import winston from 'winston';
import { CairnClient } from '../../api/client/cairn-client.js';
import { loadKubeConfig, type PooledKubeConfig } from '../../api/client/kubeconfig.js';
import type { Cluster, ClusterSpec } from '../../api/cluster.js';
import type { Kind } from '../../api/types.js';
import { startControllerManager, type ControllerManager } from '../../controller/manager.js';
import { FakeAgent, type FakeAgentOptions } from './fake-agent.js';
import { startTestEnv, type TestEnv } from './in-process.js';

/** Failure detection short enough for tests (the CRD minimums for the lease durations). */
export const FAST_FAILURE_DETECTION = { heartbeatIntervalSeconds: 1, nodeLeaseDurationSeconds: 2, failoverGracePeriodSeconds: 1 };

/** A running controller integration environment. */
export interface ControllerEnv {
  env: TestEnv;
  kubeConfig: PooledKubeConfig;
  /** A client as the user. */
  client: CairnClient;
  controller: ControllerManager;
  agents: FakeAgent[];
  /** Stops the controller and starts a new one (a new leader with an empty cache); resolves once it leads. */
  restartController(identity?: string): Promise<ControllerManager>;
  /** Log lines of the controller and agents so far. */
  logs: string[];
  /** Creates a Cluster with the fast failure detection unless spec says otherwise. */
  createCluster(name: string, spec?: ClusterSpec): Promise<Cluster>;
  /** Starts a fake agent that registers node `nodeName` in `cluster`. */
  startAgent(cluster: string, nodeName: string, opts?: Partial<FakeAgentOptions>): Promise<FakeAgent>;
  /** core/v1 Events of a namespace. */
  events(namespace: string): Promise<CoreV1Event[]>;
  /** Leases of a namespace. */
  leases(namespace: string): Promise<V1Lease[]>;
  /** Every object in a namespace by kind (Cairn kinds and Leases), for "nothing left" checks. */
  everything(namespace: string): Promise<Record<string, string[]>>;
  stop(): Promise<void>;
}

const LOG_LINES = 4000;

function memoryLogger(lines: string[]): winston.Logger {
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      const line = chunk.toString().trimEnd();
      lines.push(line);
      if (lines.length > LOG_LINES) lines.shift();
      if (process.env.CAIRN_TEST_LOG) process.stderr.write(`${line}\n`);
      done();
    },
  });
  return winston.createLogger({
    level: process.env.CAIRN_LOG_LEVEL ?? 'info',
    format: winston.format.combine(winston.format.timestamp(), winston.format.json()),
    transports: [new winston.transports.Stream({ stream: sink })],
  });
}

/** Starts etcd, the apiserver and the controller (waits until it leads). */
export async function startControllerEnv(): Promise<ControllerEnv> {
  const env = await startTestEnv();
  const logs: string[] = [];
  const log = memoryLogger(logs);
  const kubeConfig = loadKubeConfig({ kubeconfig: env.server.kubeconfigPath });
  const client = new CairnClient(kubeConfig, 'test');
  const startController = async (identity: string): Promise<ControllerManager> => {
    const manager = await startControllerManager({
      connection: { kubeconfig: env.server.kubeconfigPath },
      identity,
      timings: { leaseDurationMs: 2000, renewDeadlineMs: 1500, retryPeriodMs: 300 },
      workers: 4,
      resyncMs: 0,
      metricsHost: '127.0.0.1',
      metricsPort: -1,
      log: log.child({ component: 'controller', identity }),
    });
    const deadline = Date.now() + 10_000;
    while (!manager.isLeader()) {
      if (Date.now() > deadline) throw new Error(`controller ${identity} did not become leader within 10 s`);
      await new Promise((r) => setTimeout(r, 50));
    }
    superviseLeadership(manager);
    return manager;
  };
  // A leader whose renewal misses its 1.5 s deadline (a loaded machine stalls that long) is deposed and its
  // run ends 'lost': `cairn controller` then exits and its supervisor starts it again. The tests play the
  // supervisor, or every later test of the file would wait on a controller that no longer runs.
  let stopping = false;
  const superviseLeadership = (manager: ControllerManager) =>
    void manager.done.then(async (outcome) => {
      if (outcome !== 'lost' || stopping || self.controller !== manager) return;
      log.warn('test controller deposed; starting another, as its supervisor would', { component: 'controller-env' });
      try {
        const next = await startController(`test-controller-${Date.now()}`);
        if (stopping) return void (await next.stop()); // the env stopped while it started: it must not outlive it
        self.controller = next;
      } catch (err) {
        log.error('the test controller could not be started again', { component: 'controller-env', error: String(err) });
      }
    });
  const controller = await startController('test-controller');
  const agents: FakeAgent[] = [];
  const core = kubeConfig.makeApiClient(CoreV1Api);
  const coordination = kubeConfig.makeApiClient(CoordinationV1Api);
  const self: ControllerEnv = {
    env,
    kubeConfig,
    client,
    controller,
    agents,
    logs,
    async restartController(identity = `test-controller-${Date.now()}`) {
      await self.controller.stop();
      self.controller = await startController(identity);
      return self.controller;
    },
    createCluster(name, spec = {}) {
      return client.create('Cluster', { metadata: { name }, spec: { failureDetection: FAST_FAILURE_DETECTION, ...spec } });
    },
    async startAgent(cluster, nodeName, opts = {}) {
      const agent = new FakeAgent({ kubeconfigPath: env.server.kubeconfigPath, cluster, nodeName, log: log.child({ component: 'fake-agent', node: nodeName }), ...opts });
      agents.push(agent);
      await agent.start();
      return agent;
    },
    async events(namespace) {
      return (await core.listNamespacedEvent({ namespace })).items;
    },
    async leases(namespace) {
      return (await coordination.listNamespacedLease({ namespace })).items;
    },
    async everything(namespace) {
      const out: Record<string, string[]> = {};
      for (const kind of ['Node', 'Instance', 'Volume', 'WorkItem'] as Kind[]) {
        const names = (await client.list(kind, { namespace })).items.map((o) => o.metadata.name!);
        if (names.length) out[kind] = names;
      }
      const leases = (await self.leases(namespace)).map((l) => l.metadata!.name!);
      if (leases.length) out.Lease = leases;
      return out;
    },
    async stop() {
      stopping = true;
      await Promise.all(agents.map((a) => a.stop()));
      await self.controller.stop();
      kubeConfig.destroyAgent();
      await env.stop();
    },
  };
  return self;
}

/** Prints the last log lines (call from afterEach when a test failed). */
export function dumpLogs(cenv: ControllerEnv | undefined, lines = 200): void {
  if (!cenv) return;
  process.stderr.write(`--- last ${lines} log lines ---\n${cenv.logs.slice(-lines).join('\n')}\n`);
  for (const a of cenv.agents) if (a.errors.length) process.stderr.write(`--- fake agent ${a.nodeName} errors ---\n${a.errors.join('\n')}\n`);
}

/** Polls `probe` until it returns a value other than undefined; fails after `timeoutMs`, naming `what` and the last value seen. */
export async function until<T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 15_000, everyMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

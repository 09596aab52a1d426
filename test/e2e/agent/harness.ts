/**
 * Shared pieces of the `cairn agent` end-to-end tests: one real
 * `cairn server --no-controller` (embedded etcd) for every test file of
 * a mocha run (of each file, under --parallel), started on first use; API clients;
 * WorkItem builders as the controller would write them; and bookkeeping
 * so every agent, instance process, proxy and temp dir a test makes is
 * gone afterwards. No controller runs: the tests write WorkItems
 * themselves and read what the agent writes back.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { CoordinationV1Api, type V1Lease } from '@kubernetes/client-node';
import { CairnClient } from '../../../api/client/cairn-client.js';
import { loadKubeConfig } from '../../../api/client/kubeconfig.js';
import { AGENT_FINALIZER } from '../../../api/names.js';
import type { WorkItem, WorkItemInstanceSpec, WorkItemVolumeReplicaSpec } from '../../../api/workitem.js';
import type { Cluster } from '../../../api/cluster.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';
import { startPartitionProxy, type PartitionProxy } from '../../support/partition-proxy.js';
import { eventually } from '../../support/eventually.js';
import { killGroup, killMarked, startAgentProcess, type AgentProcess, type AgentProcessOptions } from '../../support/agent-process.js';

let shared: Promise<ServerProcess> | undefined;

/**
 * The one apiserver of this mocha run, started on first use and stopped after the run's root suite.
 * With --parallel every file is a run of its own in a worker that outlives it: the next file there
 * starts a new server.
 */
function sharedServer(hook: Mocha.Context): Promise<ServerProcess> {
  if (shared) return shared;
  let root = hook.test!.parent!;
  while (root.parent) root = root.parent;
  root.afterAll('stop the shared apiserver', async function () {
    this.timeout(20_000);
    const server = shared;
    shared = undefined;
    await (await server?.catch(() => undefined))?.cleanup();
  });
  return (shared = startServerProcess({ controller: false }));
}

/** What a test file works with. */
export interface AgentE2E {
  server: ServerProcess;
  client: CairnClient;
  leases: CoordinationV1Api;
  /** Unique token in every instance command of this file, to find and kill its processes. */
  marker: string;
  /** A new temp dir, removed after the file. */
  tmp(prefix: string): string;
  /** Creates the Cluster (and so the namespace). */
  createCluster(name: string): Promise<void>;
  /** Starts an agent against the server (or `server`), killed after the file. */
  startAgent(o: Omit<AgentProcessOptions, 'kubeconfig'>): Promise<AgentProcess>;
  /** A TCP proxy in front of the apiserver; pass `https://` + its host:port as the agent's --server. */
  proxy(): Promise<TcpProxy & { https: string }>;
  /** A proxy that can stall all traffic like a partition (see partition-proxy.ts). */
  partitionProxy(): Promise<PartitionProxy & { https: string }>;
  /** Process groups to SIGKILL after the file. */
  trackGroup(pgid: number | undefined): void;
  workItem(ns: string, name: string): Promise<WorkItem | undefined>;
  /** Polls the WorkItem until `ok` holds; returns it. */
  waitWorkItem(ns: string, name: string, what: string, ok: (w: WorkItem) => boolean, timeoutMs?: number): Promise<WorkItem>;
  lease(ns: string, name: string): Promise<V1Lease | undefined>;
}

/** Installs before/after hooks for one describe() block and returns the handle they fill. */
export function useAgentE2E(): AgentE2E {
  const dirs: string[] = [];
  const agents: AgentProcess[] = [];
  const proxies: Array<TcpProxy | PartitionProxy> = [];
  const groups = new Set<number>();
  const marker = `cairn-e2e-${randomBytes(4).toString('hex')}`;
  const h = { marker } as AgentE2E;

  before(async function () {
    this.timeout(40_000);
    const server = await sharedServer(this);
    const kc = loadKubeConfig({ kubeconfig: server.kubeconfig });
    Object.assign(h, {
      server,
      client: new CairnClient(kc, 'e2e-test'),
      leases: kc.makeApiClient(CoordinationV1Api),
    });
  });

  after(async function () {
    this.timeout(30_000);
    await Promise.all(agents.map((a) => a.kill9()));
    const logDir = process.env.CAIRN_E2E_LOGS;
    if (logDir) {
      fs.mkdirSync(logDir, { recursive: true });
      for (const a of agents) fs.writeFileSync(path.join(logDir, `agent-${a.pid}.log`), a.logs());
    }
    for (const pgid of groups) killGroup(pgid);
    killMarked(marker);
    await Promise.all(proxies.map((p) => p.close()));
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  h.tmp = (prefix) => {
    const d = fs.mkdtempSync(path.join(os.tmpdir(), `cairn-agent-e2e-${prefix}-`));
    dirs.push(d);
    return d;
  };
  h.createCluster = async (name) => {
    const c: Cluster = { metadata: { name }, spec: {} } as Cluster;
    await h.client.create('Cluster', c);
  };
  h.startAgent = async (o) => {
    const a = await startAgentProcess({ kubeconfig: h.server.kubeconfig, ...o });
    agents.push(a);
    return a;
  };
  h.proxy = async () => {
    const p = await startTcpProxy(h.server.url.replace(/^https:/, 'http:'));
    proxies.push(p);
    return Object.assign(p, { https: p.url.replace(/^http:/, 'https:') });
  };
  h.partitionProxy = async () => {
    const p = await startPartitionProxy(h.server.url);
    proxies.push(p);
    return Object.assign(p, { https: p.url.replace(/^http:/, 'https:') });
  };
  h.trackGroup = (pgid) => {
    if (pgid) groups.add(pgid);
  };
  h.workItem = (ns, name) => h.client.get('WorkItem', ns, name);
  h.waitWorkItem = async (ns, name, what, ok, timeoutMs = 20_000) => {
    let last: WorkItem | undefined;
    try {
      await eventually(`${what} (WorkItem ${ns}/${name})`, async () => {
        last = await h.client.get('WorkItem', ns, name);
        return !!last && ok(last);
      }, timeoutMs, 100);
    } catch (err) {
      throw new Error(`${(err as Error).message}; last seen: ${JSON.stringify(last?.status ?? last ?? null)}`);
    }
    return last!;
  };
  h.lease = async (ns, name) => {
    try {
      return await h.leases.readNamespacedLease({ namespace: ns, name });
    } catch (err) {
      if ((err as { code?: number }).code === 404) return undefined;
      throw err;
    }
  };
  return h;
}

/** A process-instance WorkItem as the controller writes it (finalizer, fencing lease). */
export function instanceWorkItem(ns: string, nodeName: string, name: string, command: string[], extra: Partial<WorkItemInstanceSpec> = {}, timeoutSeconds?: number): WorkItem {
  return {
    apiVersion: 'cairn.dev/v1alpha1',
    kind: 'WorkItem',
    metadata: { name: `${name}.${nodeName}`, namespace: ns, finalizers: [AGENT_FINALIZER] },
    spec: {
      nodeName,
      type: 'InstanceRuntime',
      owner: { kind: 'Instance', name },
      ...(timeoutSeconds ? { timeoutSeconds } : {}),
      instance: {
        driver: 'process',
        runState: 'Running',
        cpus: 1,
        memory: '64Mi',
        restartPolicy: 'Always',
        terminationGracePeriodSeconds: 1,
        process: { command },
        fencing: { leaseName: `instance-${name}` },
        ...extra,
      },
    },
  } as WorkItem;
}

/** A file-replica WorkItem as the controller writes it. */
export function replicaWorkItem(ns: string, nodeName: string, volume: string, replica: Partial<WorkItemVolumeReplicaSpec> & { size: string }): WorkItem {
  return {
    apiVersion: 'cairn.dev/v1alpha1',
    kind: 'WorkItem',
    metadata: { name: `${volume}.r0.${nodeName}`, namespace: ns, finalizers: [AGENT_FINALIZER] },
    spec: {
      nodeName,
      type: 'VolumeReplica',
      owner: { kind: 'Volume', name: volume },
      volumeReplica: { volumeName: volume, index: 0, driver: 'file', ...replica },
    },
  } as WorkItem;
}

/** The token in the command line of every process of instance `name` (see tickCommand). */
export function tag(marker: string, name: string): string {
  return `[${marker}/${name}]`;
}

/** A shell loop printing `tick` twice a second; its tag makes its processes findable. */
export function tickCommand(marker: string, name: string): string[] {
  return ['sh', '-c', `while true; do echo tick; sleep 0.5; done # ${tag(marker, name)}`];
}

/** A shell loop that ignores SIGTERM (so stopping it takes the whole grace period). */
export function stubbornCommand(marker: string, name: string): string[] {
  return ['sh', '-c', `trap "" TERM; while true; do sleep 0.2; done # ${tag(marker, name)}`];
}

/** Ready condition of a WorkItem. */
export function readyCondition(w: WorkItem) {
  return w.status?.conditions?.find((c) => c.type === 'Ready');
}

/** Epoch ms of a Lease's renewTime (0 when unset). */
export function renewMs(l: V1Lease | undefined): number {
  const t = l?.spec?.renewTime as unknown;
  if (!t) return 0;
  return t instanceof Date ? t.getTime() : Date.parse(String(t));
}

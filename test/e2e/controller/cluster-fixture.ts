/**
 * The world the controller e2e tests run a real controller against: a
 * `cairn server --no-controller` process, one Cluster, fake agents (from
 * test/support/fake-agent.ts, in this process) for its nodes, and a
 * WorkItem invariant monitor. Plus the convergence checks the tests share.
 */
import { expect } from 'chai';
import type { CairnClient } from '../../../api/client/cairn-client.js';
import type { PooledKubeConfig } from '../../../api/client/kubeconfig.js';
import type { Instance } from '../../../api/instance.js';
import type { Resources } from '../../../api/types.js';
import type { Volume } from '../../../api/volume.js';
import type { WorkItem } from '../../../api/workitem.js';
import { eventually } from '../../support/eventually.js';
import { FakeAgent } from '../../support/fake-agent.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';
import { clientFor, createCluster } from './harness.js';
import { WorkItemMonitor } from './invariants.js';

/** A server, a cluster with fake nodes, and a monitor. */
export interface TestCluster {
  server: ServerProcess;
  kc: PooledKubeConfig;
  client: CairnClient;
  namespace: string;
  agents: FakeAgent[];
  monitor: WorkItemMonitor;
  stop(): Promise<void>;
}

/** Starts the server, the Cluster `namespace` and one fake agent per node. */
export async function startTestCluster(namespace: string, nodes: Record<string, Resources>): Promise<TestCluster> {
  const server = await startServerProcess({});
  const { kc, client } = clientFor(server.kubeconfig);
  const agents: FakeAgent[] = [];
  let monitor: WorkItemMonitor | undefined;
  const stop = async () => {
    await Promise.all(agents.map((a) => a.stop()));
    await monitor?.stop();
    kc.destroyAgent();
    await server.cleanup();
  };
  try {
    await createCluster(client, namespace);
    for (const [nodeName, capacity] of Object.entries(nodes)) {
      // A long heartbeat lease: a busy 2-core machine must not make nodes look dead (node failover is not under test here).
      const agent = new FakeAgent({ kubeconfigPath: server.kubeconfig, cluster: namespace, nodeName, capacity, leaseDurationSeconds: 15, renewEveryMs: 1000 });
      agents.push(agent);
      await agent.start();
    }
    monitor = new WorkItemMonitor(server.kubeconfig, namespace, new Map(Object.entries(nodes)));
    await monitor.start();
  } catch (err) {
    await stop();
    throw err;
  }
  return { server, kc, client, namespace, agents, monitor, stop };
}

/** What the cluster holds now. */
export interface ClusterState {
  instances: Instance[];
  volumes: Volume[];
  workItems: WorkItem[];
}

/** Lists Instances, Volumes and WorkItems of the namespace. */
export async function readState(client: CairnClient, namespace: string): Promise<ClusterState> {
  const [instances, volumes, workItems] = await Promise.all([
    client.listAll('Instance', { namespace }),
    client.listAll('Volume', { namespace }),
    client.listAll('WorkItem', { namespace }),
  ]);
  return { instances: instances.items, volumes: volumes.items, workItems: workItems.items };
}

/** Why the state is not converged yet (empty when it is): every Instance Running on its one WorkItem, every Volume Ready. */
export function notConverged(s: ClusterState): string[] {
  const problems: string[] = [];
  for (const i of s.instances) {
    const mine = s.workItems.filter((w) => w.spec.owner.kind === 'Instance' && w.spec.owner.name === i.metadata.name);
    if (i.status?.phase !== 'Running') problems.push(`Instance ${i.metadata.name} is ${i.status?.phase ?? 'without status'}`);
    else if (mine.length !== 1) problems.push(`Instance ${i.metadata.name} has ${mine.length} WorkItems`);
    else if (i.status.nodeName !== mine[0]!.spec.nodeName) problems.push(`Instance ${i.metadata.name} says node ${i.status.nodeName}, its WorkItem ${mine[0]!.spec.nodeName}`);
  }
  for (const v of s.volumes) {
    const mine = s.workItems.filter((w) => w.spec.owner.kind === 'Volume' && w.spec.owner.name === v.metadata.name);
    if (v.status?.phase !== 'Ready') problems.push(`Volume ${v.metadata.name} is ${v.status?.phase ?? 'without status'}`);
    else if (mine.length !== (v.spec.replicas ?? 1)) problems.push(`Volume ${v.metadata.name} has ${mine.length} WorkItems`);
  }
  return problems;
}

/** Waits until notConverged() is empty; fails naming what is not converged yet. */
export async function waitConverged(client: CairnClient, namespace: string, what: string, timeoutMs: number): Promise<ClusterState> {
  let last: ClusterState | undefined;
  try {
    await eventually(what, async () => notConverged((last = await readState(client, namespace))).length === 0, timeoutMs, 200);
  } catch (err) {
    throw new Error(`${(err as Error).message}: ${last ? notConverged(last).slice(0, 10).join('; ') : 'nothing read'}`);
  }
  return last!;
}

/**
 * Asserts the converged shape: one WorkItem per Instance on the node its
 * status names, `replicas` WorkItems per Volume on distinct nodes with
 * indexes 0..n-1, every WorkItem owned (ownerReference with controller:
 * true and spec.owner naming an existing owner with the same uid), none
 * terminating, and no node over capacity.
 */
export function expectConverged(s: ClusterState, capacity: ReadonlyMap<string, Resources>): void {
  expect(notConverged(s), 'not converged').to.deep.equal([]);
  const owners = new Map<string, string>();
  for (const i of s.instances) owners.set(`Instance/${i.metadata.name}`, i.metadata.uid!);
  for (const v of s.volumes) owners.set(`Volume/${v.metadata.name}`, v.metadata.uid!);
  for (const w of s.workItems) {
    const name = w.metadata.name;
    expect(w.metadata.deletionTimestamp, `WorkItem ${name} is terminating`).to.equal(undefined);
    const refs = w.metadata.ownerReferences ?? [];
    expect(refs, `WorkItem ${name} ownerReferences`).to.have.length(1);
    const ref = refs[0]!;
    expect(ref.controller, `WorkItem ${name} ownerReference.controller`).to.equal(true);
    expect(owners.get(`${ref.kind}/${ref.name}`), `owner of WorkItem ${name} (${ref.kind}/${ref.name})`).to.equal(ref.uid);
    expect(`${w.spec.owner.kind}/${w.spec.owner.name}/${w.spec.owner.uid}`, `WorkItem ${name} spec.owner`).to.equal(`${ref.kind}/${ref.name}/${ref.uid}`);
    expect(w.status?.phase, `WorkItem ${name} phase`).to.equal('Done');
  }
  for (const v of s.volumes) {
    const mine = s.workItems.filter((w) => w.spec.owner.kind === 'Volume' && w.spec.owner.name === v.metadata.name);
    const nodes = mine.map((w) => w.spec.nodeName);
    expect(new Set(nodes).size, `Volume ${v.metadata.name} replicas on distinct nodes (${nodes.join(', ')})`).to.equal(nodes.length);
    expect(mine.map((w) => w.spec.volumeReplica?.index).sort(), `Volume ${v.metadata.name} replica indexes`).to.deep.equal([...Array(v.spec.replicas ?? 1).keys()]);
    expect(v.status?.readyReplicas).to.equal(v.spec.replicas ?? 1);
  }
  for (const [node, cap] of capacity) {
    const here = s.workItems.filter((w) => w.spec.nodeName === node);
    const cpus = here.reduce((n, w) => n + (w.spec.instance?.cpus ?? 0), 0);
    expect(cpus, `cpus on ${node}`).to.be.at.most(cap.cpus ?? 0);
  }
}

/**
 * Failover in seconds, fenced (docs/fencing.md), with the Cluster's default
 * failure detection (heartbeat 2 s, node lease 10 s, grace 0): `cairn
 * server` with its controller and three real agents with the default lease
 * timings, the agents of node-a and node-b behind TCP proxies that can be cut.
 *
 * - Machine death: the agent of the node running an instance and every
 *   process it ran are killed (SIGKILL): the instance runs on another node
 *   within 25 s (the benchmark measures the real figure), as one copy.
 * - Partition: a node is cut off from the apiserver with its instance
 *   running: the instance stops there before any copy starts elsewhere, and
 *   no sample (every 20 ms) ever shows two copies. When the partition heals
 *   the node runs nothing stale.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CairnClient } from '../../../api/client/cairn-client.js';
import { loadKubeConfig } from '../../../api/client/kubeconfig.js';
import type { Instance } from '../../../api/instance.js';
import { copiesOf, killMarked, processesWith, startAgentProcess, type AgentProcess } from '../../support/agent-process.js';
import { until } from '../../support/controller-env.js';
import { eventually } from '../../support/eventually.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';
import { tag, tickCommand } from '../agent/harness.js';

const NS = 'fo';
const MARKER = `cairn-failover-e2e-${process.pid}`;

/** Samples the local copies of an instance every 20 ms until stopped; remembers the most seen at once. */
function copySampler(marker: string) {
  let most = 0;
  let samples = 0;
  const timer = setInterval(() => {
    most = Math.max(most, copiesOf(marker).length);
    samples++;
  }, 20);
  return {
    stop: () => clearInterval(timer),
    get most() {
      return most;
    },
    get samples() {
      return samples;
    },
  };
}

describe('system: failover in seconds with the default failure detection, fenced', function () {
  this.timeout(120_000);
  let server: ServerProcess;
  let client: CairnClient;
  const agents = new Map<string, AgentProcess>();
  const proxies = new Map<string, TcpProxy>();
  let dir: string;

  const startAgent = async (node: string) => {
    const proxy = proxies.get(node);
    const connection = proxy ? { server: proxy.url.replace(/^http:/, 'https:'), kubeconfig: server.kubeconfig } : { kubeconfig: server.kubeconfig };
    // The defaults of `cairn agent`: --heartbeat-interval 2s --lease-duration 10s.
    const extraArgs = ['--labels', `proxied=${proxy ? 'yes' : 'no'}`];
    agents.set(node, await startAgentProcess({ ...connection, cluster: NS, nodeName: node, dataDir: path.join(dir, node), heartbeatInterval: '2s', leaseDuration: '10s', extraArgs }));
  };
  const instanceOf = (name: string) => client.get('Instance', NS, name);
  const runningNode = async (name: string) => {
    const i = await instanceOf(name);
    return i?.status?.phase === 'Running' ? i.status.nodeName : undefined;
  };
  const create = (name: string, nodeSelector?: Record<string, string>) =>
    client.create('Instance', {
      metadata: { name, namespace: NS },
      spec: { memory: '32Mi', terminationGracePeriodSeconds: 1, ...(nodeSelector ? { placement: { nodeSelector } } : {}), process: { command: tickCommand(MARKER, name) } },
    } as Instance);

  before(async function () {
    this.timeout(60_000);
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-failover-'));
    server = await startServerProcess({ controller: true });
    client = new CairnClient(loadKubeConfig({ kubeconfig: server.kubeconfig }));
    await client.create('Cluster', { metadata: { name: NS }, spec: {} });
    for (const n of ['node-a', 'node-b']) proxies.set(n, await startTcpProxy(server.url.replace(/^https:/, 'http:')));
    for (const n of ['node-a', 'node-b', 'node-c']) await startAgent(n);
    await eventually('three Ready nodes', async () => (await client.list('Node', { namespace: NS })).items.filter((n) => n.status?.phase === 'Ready').length === 3, 30_000, 200);
  });

  after(async () => {
    for (const a of agents.values()) await a.stop(3000).catch(() => undefined);
    killMarked(MARKER);
    for (const p of proxies.values()) await p.close();
    await server?.cleanup();
    fs.rmSync(dir, { recursive: true, force: true });
  });

  it('uses the documented defaults', async () => {
    const cluster = (await client.get('Cluster', undefined, NS))!;
    expect(cluster.spec?.failureDetection).to.deep.equal({ heartbeatIntervalSeconds: 2, nodeLeaseDurationSeconds: 10, failoverGracePeriodSeconds: 0 });
  });

  it('a killed node (agent and instances, kill -9): its instance runs elsewhere within 25 s, as one copy', async () => {
    await create('victim');
    const lost = await until('victim Running', () => runningNode('victim'), 30_000, 100);
    const copies = copySampler(tag(MARKER, 'victim'));
    try {
      await agents.get(lost)!.kill9();
      for (const p of processesWith(tag(MARKER, 'victim'))) process.kill(p.pid, 'SIGKILL');
      const killedAt = Date.now();
      const moved = await until('victim Running on another node', async () => {
        const n = await runningNode('victim');
        return n && n !== lost ? n : undefined;
      }, 25_000, 50);
      const seconds = (Date.now() - killedAt) / 1000;
      expect(moved).to.not.equal(lost);
      expect(seconds, 'failover within 25 s').to.be.below(25);
      await eventually('the copy runs', () => copiesOf(tag(MARKER, 'victim')).length === 1, 5_000, 50);
      expect(copies.most, 'never two copies').to.equal(1);
    } finally {
      copies.stop();
    }
    await startAgent(lost); // the machine comes back: nothing stale runs there
    await eventually('node Ready again', async () => (await client.get('Node', NS, lost))?.status?.phase === 'Ready', 30_000, 200);
    expect(copiesOf(tag(MARKER, 'victim'))).to.have.length(1);
  });

  it('a node cut off from the apiserver stops its instance before a copy starts elsewhere; no sample shows two copies', async () => {
    await create('island', { proxied: 'yes' });
    const cut = await until('island Running', () => runningNode('island'), 30_000, 100);
    await eventually('one copy', () => copiesOf(tag(MARKER, 'island')).length === 1, 5_000, 50);
    const [original] = copiesOf(tag(MARKER, 'island'));
    const copies = copySampler(tag(MARKER, 'island'));
    try {
      proxies.get(cut)!.cut();
      const cutAt = Date.now();
      await eventually('the cut-off node stops its copy', () => !copiesOf(tag(MARKER, 'island')).includes(original!), 15_000, 20);
      const stoppedAt = Date.now();
      const moved = await until('island Running on another node', async () => {
        const n = await runningNode('island');
        return n && n !== cut ? n : undefined;
      }, 30_000, 50);
      expect(moved).to.not.equal(cut);
      expect(stoppedAt - cutAt, 'stopped within the node lease').to.be.below(10_000);
      await eventually('the new copy runs', () => copiesOf(tag(MARKER, 'island')).length === 1, 5_000, 50);
      expect(copies.samples).to.be.greaterThan(100);
      expect(copies.most, 'never two copies').to.equal(1);
      // The partition heals: the node comes back in a new term and finds its WorkItem gone.
      proxies.get(cut)!.restore();
      await eventually('node Ready again', async () => (await client.get('Node', NS, cut))?.status?.phase === 'Ready', 30_000, 200);
      await new Promise((r) => setTimeout(r, 2_000));
      expect(copies.most, 'never two copies, also after the partition healed').to.equal(1);
      expect(copiesOf(tag(MARKER, 'island'))).to.have.length(1);
    } finally {
      copies.stop();
    }
  });
});

/**
 * The whole system at once: `cairn server` with its supervised controller
 * and three real `cairn agent` processes, running a replicated (gluster)
 * volume and an instance attached to it. A machine failure is simulated by
 * killing an agent and every process it ran, instances and bricks (SIGKILL). The instance must come back
 * on another node that holds a replica — only after the dead node's lease
 * had expired, as one copy — and the lost replica is recreated elsewhere. The
 * machine then returns: its agent finds its WorkItems gone and leaves
 * nothing running.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CoordinationV1Api } from '@kubernetes/client-node';
import { CairnClient } from '../../../api/client/cairn-client.js';
import { loadKubeConfig } from '../../../api/client/kubeconfig.js';
import { copiesOf, killMarked, startAgentProcess, type AgentProcess } from '../../support/agent-process.js';
import { eventually } from '../../support/eventually.js';
import { killGlusterUnder } from '../../support/gluster.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';

const NS = 'sys';
const MARKER = `cairn-system-e2e-${process.pid}`;
const NODE_LEASE_SECONDS = 6;

describe('system: server, controller and three agents survive a machine failure', function () {
  this.timeout(120_000);
  let server: ServerProcess;
  let client: CairnClient;
  let leases: CoordinationV1Api;
  const agents = new Map<string, AgentProcess>();
  const dirs: string[] = [];

  const startAgent = async (node: string) => {
    const dataDir = path.join(dirs[0]!, node);
    const agent = await startAgentProcess({ kubeconfig: server.kubeconfig, cluster: NS, nodeName: node, dataDir, heartbeatInterval: '1s', leaseDuration: `${NODE_LEASE_SECONDS}s`, shutdownGrace: '2s' });
    agents.set(node, agent);
  };
  const instanceOf = (name: string) => client.get('Instance', NS, name);

  before(async () => {
    dirs.push(fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-sys-')));
    server = await startServerProcess({ controller: true });
    const kc = loadKubeConfig({ kubeconfig: server.kubeconfig });
    client = new CairnClient(kc);
    leases = kc.makeApiClient(CoordinationV1Api);
    await client.create('Cluster', {
      metadata: { name: NS },
      spec: { failureDetection: { heartbeatIntervalSeconds: 1, nodeLeaseDurationSeconds: NODE_LEASE_SECONDS, failoverGracePeriodSeconds: 1 } },
    });
    for (const n of ['node-a', 'node-b', 'node-c']) await startAgent(n);
  });

  after(async () => {
    for (const a of agents.values()) await a.stop(3000).catch(() => undefined);
    killMarked(MARKER);
    for (const d of dirs) killGlusterUnder(d);
    await server?.cleanup();
    for (const d of dirs) fs.rmSync(d, { recursive: true, force: true });
  });

  it('runs a replicated volume and an instance attached to it', async () => {
    // The writer appends twice a second. An entry whose first heal onto the replacement brick loses to
    // the writer's lock waits for the self-heal daemon's next crawl (600 s by default): crawl every 10 s
    // here, so the replacement is healed within the test's minute (seen in full CI runs, with the status).
    await client.create('Volume', { metadata: { name: 'data', namespace: NS }, spec: { size: '64Mi', replicas: 2, driver: 'gluster', options: { 'cluster.heal-timeout': '10' } } });
    await client.create('Instance', {
      metadata: { name: 'writer', namespace: NS },
      spec: {
        memory: '32Mi',
        terminationGracePeriodSeconds: 1,
        volumes: [{ name: 'data', volumeName: 'data' }],
        process: { command: ['sh', '-c', `while true; do date >> "$CAIRN_VOLUME_DATA/stamps.log"; sleep 0.5; done # ${MARKER}`] },
      },
    });
    await eventually('writer Running', async () => (await instanceOf('writer'))?.status?.phase === 'Running', 30_000, 200);
    await eventually('volume Ready', async () => (await client.get('Volume', NS, 'data'))?.status?.phase === 'Ready', 30_000, 200);
    expect(copiesOf(MARKER)).to.have.length(1);
  });

  it("fails the instance over to a node with a replica only after the dead node's lease expired, as one copy, and recreates the lost replica", async () => {
    const before = (await instanceOf('writer'))!;
    const lost = before.status!.nodeName!;
    expect((await leases.readNamespacedLease({ namespace: NS, name: 'instance-writer' })).spec?.holderIdentity, 'claimed by its node').to.equal(lost);
    const lease = await leases.readNamespacedLease({ namespace: NS, name: `node-${lost}` });
    // The machine dies: its agent and every process it ran.
    await agents.get(lost)!.kill9();
    killMarked(MARKER);
    killGlusterUnder(path.join(dirs[0]!, lost));
    const diedAt = Date.now();

    let moved: Awaited<ReturnType<typeof instanceOf>>;
    await eventually(
      'writer Running on another node',
      async () => {
        moved = await instanceOf('writer');
        return moved?.status?.phase === 'Running' && moved.status.nodeName !== lost;
      },
      60_000,
      200,
    );
    const newWorkItem = (await client.get('WorkItem', NS, moved!.status!.workItemName!))!;
    // Never two copies: the replacement was created no earlier than a full node lease after the dead node's last renewal.
    const lastRenewal = Math.min(diedAt, new Date(lease.spec!.renewTime!).getTime());
    expect(Date.parse(newWorkItem.metadata.creationTimestamp!)).to.be.at.least(lastRenewal + NODE_LEASE_SECONDS * 1000 - 1000);
    expect(copiesOf(MARKER)).to.have.length(1);
    expect(moved!.status?.lastFailover?.fromNode).to.equal(lost);
    let volume: Awaited<ReturnType<typeof client.get<'Volume'>>>;
    await eventually(
      'volume Ready again without the lost node',
      async () => {
        volume = await client.get('Volume', NS, 'data');
        return volume?.status?.phase === 'Ready' && !!volume.status.replicas?.every((r) => r.nodeName !== lost);
      },
      60_000,
      200,
      async () => ({ volume: volume?.status, workItems: (await client.list('WorkItem', { namespace: NS })).items.map((w) => ({ name: w.metadata.name, status: w.status })) }),
    );
    expect(volume!.status!.replicas!.map((r) => r.nodeName)).to.include(moved!.status!.nodeName);
    const node = await client.get('Node', NS, lost);
    expect(node?.status?.phase).to.equal('Unreachable');
  });

  it('lets the machine come back: its agent finds its WorkItems gone and runs nothing stale', async () => {
    const lost = (await client.list('Node', { namespace: NS })).items.find((n) => n.status?.phase === 'Unreachable')!.metadata.name!;
    await startAgent(lost);
    await eventually('node Ready again', async () => (await client.get('Node', NS, lost))?.status?.phase === 'Ready', 30_000, 200);
    const writer = (await instanceOf('writer'))!;
    expect(writer.status?.phase).to.equal('Running');
    expect(writer.status?.nodeName).to.not.equal(lost);
    expect(copiesOf(MARKER)).to.have.length(1);
    const onLost = (await client.list('WorkItem', { namespace: NS })).items.filter((w) => w.spec.nodeName === lost);
    expect(onLost).to.deep.equal([]);
  });
});

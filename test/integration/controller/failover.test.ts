/**
 * Controller acceptance, node failure, against a real etcd + apiserver with
 * fake agents. A node whose agent stops renewing its node lease has that
 * lease revoked and turns Unreachable (Ready=Unknown, NodeLeaseExpired, a
 * Warning Event). Its instance is failed over only once the lease has
 * expired and the failover grace period has passed: every read that
 * completed before that moment must show no copy anywhere else; the next
 * node claims the instance only after the dead node's claim was deleted.
 * Its volume's only replica is kept on it, not recreated empty elsewhere.
 *
 * Timings (Cluster spec.failureDetection): node lease 2 s, grace 1 s.
 */
import { expect } from 'chai';
import { getCondition } from '../../../api/conditions.js';
import type { Instance } from '../../../api/instance.js';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL } from '../../../api/names.js';
import type { WorkItem } from '../../../api/workitem.js';
import { dumpLogs, startControllerEnv, until, type ControllerEnv } from '../../support/controller-env.js';
import type { FakeAgent } from '../../support/fake-agent.js';

const NS = 'fo';

function instanceSpec(name: string, extra: Partial<Instance['spec']> = {}): Instance {
  return { metadata: { name, namespace: NS }, spec: { cpus: 1, memory: '256Mi', process: { command: ['/bin/sleep', '3600'] }, ...extra } };
}
const NODE_LEASE_MS = 2000;
const GRACE_MS = 1000;

/** One poll: when the request started and ended, and what it saw. */
interface Sample<T> {
  startedAt: number;
  endedAt: number;
  value: T;
}

/** Polls `probe` every `everyMs` until stop(), keeping every sample. */
function sampler<T>(probe: () => Promise<T>, everyMs = 40) {
  const samples: Array<Sample<T>> = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const startedAt = Date.now();
      const value = await probe();
      samples.push({ startedAt, endedAt: Date.now(), value });
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    samples,
    async stop() {
      running = false;
      await loop;
    },
  };
}

describe('controller: node expiry, Unreachable and fenced failover (real etcd + apiserver, fake agents)', function () {
  this.timeout(60_000);
  let c: ControllerEnv;
  let dead: FakeAgent;
  let live: FakeAgent;

  const getInstance = (name: string) => c.client.get('Instance', NS, name);
  const leaseOf = async (name: string) => (await c.leases(NS)).find((l) => l.metadata?.name === name);
  const workItemsOf = async (kind: 'Instance' | 'Volume', name: string): Promise<WorkItem[]> =>
    (await c.client.list('WorkItem', { namespace: NS, labelSelector: `${OWNER_KIND_LABEL}=${kind},${OWNER_NAME_LABEL}=${name}` })).items;

  before(async () => {
    c = await startControllerEnv();
    await c.createCluster(NS);
    // Only n1 exists when the workloads are created, so they all land there.
    dead = await c.startAgent(NS, 'n1');
    await c.client.create('Instance', instanceSpec('db'));
    await c.client.create('Instance', instanceSpec('pinned', { placement: { nodeName: 'n1' } }));
    await c.client.create('Instance', instanceSpec('manual', { failoverPolicy: 'Manual' }));
    await c.client.create('Instance', instanceSpec('doomed'));
    await c.client.create('Volume', { metadata: { name: 'vol', namespace: NS }, spec: { size: '1Gi', replicas: 1 } });
    await until('instances Running on n1 and vol Ready', async () => {
      const is = (await c.client.list('Instance', { namespace: NS })).items;
      const v = await c.client.get('Volume', NS, 'vol');
      return is.length === 4 && is.every((i) => i.status?.phase === 'Running' && i.status.nodeName === 'n1') && v?.status?.phase === 'Ready' ? true : undefined;
    });
    expect(dead.heldClaims.sort()).to.deep.equal(['instance-db', 'instance-doomed', 'instance-manual', 'instance-pinned']);
    live = await c.startAgent(NS, 'n2');
    await until('n2 Ready', async () => ((await c.client.get('Node', NS, 'n2'))?.status?.phase === 'Ready' ? true : undefined));
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') dumpLogs(c);
  });
  after(async () => c?.stop());

  it('revokes the silent node\'s lease and marks it Unreachable, then fails its instance over (claim deleted, then claimed anew), and recreates its replica', async () => {
    // n1's agent goes silent: no renewals, no status, no finalizers.
    dead.heartbeat = false;
    dead.working = false;
    const lastHeartbeat = dead.lastHeartbeatAt;
    // Deleting an instance of the dead node must wait for the revocation too (nobody can confirm it stopped).
    await c.client.delete('Instance', NS, 'doomed');
    const watch = sampler(async () => ({
      node: await c.client.get('Node', NS, 'n1'),
      instance: await getInstance('db'),
      onLive: (await workItemsOf('Instance', 'db')).some((w) => w.spec.nodeName === 'n2'),
      doomed: (await getInstance('doomed')) !== undefined,
    }));
    try {
      // Node: Unreachable, Ready=Unknown reason NodeLeaseExpired, never before the lease could have expired; its lease revoked.
      const node = await until('n1 Unreachable', async () => {
        const n = await c.client.get('Node', NS, 'n1');
        return n?.status?.phase === 'Unreachable' ? n : undefined;
      });
      const ready = getCondition(node.status!.conditions, 'Ready')!;
      expect(ready).to.include({ status: 'Unknown', reason: 'NodeLeaseExpired' });
      expect(ready.message).to.contain(`${NS}/node-n1`);
      expect((await leaseOf('node-n1'))?.spec?.holderIdentity ?? undefined, 'the node lease was revoked').to.equal(undefined);
      const early = watch.samples.filter((s) => s.endedAt < lastHeartbeat + NODE_LEASE_MS);
      for (const s of early) expect(s.value.node?.status?.phase, 'Ready until its lease expired').to.equal('Ready');
      const event = await until('NodeUnreachable event', async () =>
        (await c.events(NS)).find((e) => e.involvedObject.kind === 'Node' && e.involvedObject.name === 'n1' && e.reason === 'NodeUnreachable'),
      );
      expect(event.type).to.equal('Warning');
      const cluster = await until('nodesUnreachable 1', async () => {
        const cl = await c.client.get('Cluster', undefined, NS);
        return cl?.status?.counts?.nodesUnreachable === 1 ? cl : undefined;
      });
      expect(cluster.status!.phase).to.equal('Degraded');

      const moved = await until('db Running on n2', async () => {
        const i = await getInstance('db');
        return i?.status?.phase === 'Running' && i.status.nodeName === 'n2' ? i : undefined;
      }, 20_000);
      // Under load the move can complete within one sample's reads: let a sample see it before stopping.
      await until('a sample with the copy on n2', async () => watch.samples.some((x) => x.value.onLive) || undefined);
      await watch.stop();

      // Ordering, from the samples: no copy on n2 in any read that completed before the node lease expired and
      // the grace period passed, and the instance was not Running elsewhere throughout.
      // The lease must have expired (safety); the grace counts from Ready's lastTransitionTime, a whole second.
      const expiredAt = lastHeartbeat + NODE_LEASE_MS;
      const lostAt = expiredAt + GRACE_MS - 1000;
      const beforeExpiry = watch.samples.filter((s) => s.endedAt < expiredAt);
      const firstOnLive = watch.samples.find((s) => s.value.onLive)!;
      expect(beforeExpiry.length).to.be.greaterThan(10);
      for (const s of beforeExpiry) expect(s.value.onLive, `no WorkItem on n2 at ${s.endedAt - expiredAt} ms before the node lease expired`).to.equal(false);
      expect(firstOnLive.endedAt, 'first seen on n2 after the node lease expired and the grace passed').to.be.greaterThan(Math.max(expiredAt, lostAt));

      // The new node could claim the instance only once the dead node's claim was deleted: it claimed it anew.
      const claimed = live.records.find((r) => r.what === 'claimed' && r.workItem === 'db.n2')!;
      expect(claimed.at).to.be.greaterThan(expiredAt);
      expect((await leaseOf('instance-db'))?.spec?.holderIdentity).to.equal('n2');
      expect(moved.status!.lastFailover?.fromNode).to.equal('n1');
      expect(getCondition(moved.status!.conditions, 'Ready')).to.include({ status: 'True' });
      const after = await workItemsOf('Instance', 'db');
      expect(after.map((w) => w.spec.nodeName), 'the dead node\'s WorkItem was released').to.deep.equal(['n2']);
      const events = await c.events(NS);
      expect(events.some((e) => e.involvedObject.name === 'db' && e.reason === 'FailingOver' && e.type === 'Warning')).to.equal(true);

      // The deleted instance went away only once the node was lost.
      await until('doomed gone', async () => ((await getInstance('doomed')) ? undefined : true));
      for (const s of watch.samples.filter((x) => x.endedAt < expiredAt)) expect(s.value.doomed, 'doomed kept until the node lease expired').to.equal(true);
      expect(await workItemsOf('Instance', 'doomed')).to.have.length(0);
    } finally {
      await watch.stop();
    }

    // Manual failover policy and a pinned node: they stay where they are, Unknown, their WorkItem untouched.
    for (const name of ['manual', 'pinned']) {
      const i = (await getInstance(name))!;
      expect(i.status, name).to.include({ phase: 'Unknown', nodeName: 'n1' });
      expect(getCondition(i.status!.conditions, 'Ready'), name).to.include({ status: 'Unknown', reason: 'NodeUnreachable' });
      const items = await workItemsOf('Instance', name);
      expect(items.map((w) => [w.spec.nodeName, w.metadata.deletionTimestamp]), name).to.deep.equal([['n1', undefined]]);
      expect((await c.events(NS)).filter((e) => e.involvedObject.name === name && e.reason === 'FailingOver'), name).to.deep.equal([]);
    }

    // The volume's one replica stays on the lost node: it is the only copy of the data, so it is not
    // recreated empty elsewhere (and then deleted by its own agent when the node returned).
    const vol = await until('vol says its replica is kept on n1', async () => {
      const v = await c.client.get('Volume', NS, 'vol');
      return v?.status?.replicas?.[0]?.state === 'Lost' ? v : undefined;
    });
    expect(vol.status!.replicas![0]).to.include({ nodeName: 'n1' });
    expect(vol.status!.replicas![0]!.message).to.match(/only good copy/);
    expect((await workItemsOf('Volume', 'vol')).map((w) => w.metadata.name)).to.deep.equal(['vol.r0.n1']);
    expect((await c.events(NS)).some((e) => e.involvedObject.name === 'vol' && e.reason === 'ReplicaLost')).to.equal(false);
  });

  it('marks the node Ready again when heartbeats resume, with a NodeReachable event; what stayed runs again', async () => {
    dead.heartbeat = true;
    dead.working = true;
    const node = await until('n1 Ready again', async () => {
      const n = await c.client.get('Node', NS, 'n1');
      return n?.status?.phase === 'Ready' ? n : undefined;
    });
    expect(getCondition(node.status!.conditions, 'Ready')).to.include({ status: 'True', reason: 'NodeLeaseRenewed' });
    await until('NodeReachable event', async () => (await c.events(NS)).find((e) => e.involvedObject.name === 'n1' && e.reason === 'NodeReachable'));
    const cl = await until('nodesUnreachable 0', async () => {
      const x = await c.client.get('Cluster', undefined, NS);
      return x?.status?.counts?.nodesUnreachable === 0 && x.status.counts.nodesReady === 2 ? x : undefined;
    });
    expect(cl.status!.phase).to.equal('Ready');
    for (const name of ['manual', 'pinned']) {
      await until(`${name} Running on n1 again`, async () => {
        const i = await getInstance(name);
        return i?.status?.phase === 'Running' && i.status.nodeName === 'n1' ? true : undefined;
      });
    }
    // In its new term n1 claimed again what it kept; the failed-over instance's claim stays n2's.
    await until('n1 claimed what it kept again', async () => (dead.heldClaims.sort().join() === 'instance-manual,instance-pinned' ? true : undefined));
    expect((await leaseOf('instance-db'))?.spec?.holderIdentity).to.equal('n2');
    // Nothing of the failed-over workloads comes back to n1.
    const onN1 = (await c.client.list('WorkItem', { namespace: NS, fieldSelector: 'spec.nodeName=n1' })).items.map((w) => w.metadata.name).sort();
    expect(onN1).to.deep.equal(['manual.n1', 'pinned.n1', 'vol.r0.n1']);
    expect((await getInstance('db'))!.status!.nodeName).to.equal('n2');
    await until('vol Ready on n1 again', async () => ((await c.client.get('Volume', NS, 'vol'))?.status?.phase === 'Ready' ? true : undefined));
  });
});

/**
 * Controller acceptance, cordon and drain, against a real etcd + apiserver
 * with fake agents: a cordoned node keeps what it runs but gets nothing new;
 * a drained node reports Draining while its instances stop there, they are
 * started elsewhere only after the old copy is gone, and the node ends
 * Drained.
 */
import { expect } from 'chai';
import { getCondition } from '../../../api/conditions.js';
import type { Instance } from '../../../api/instance.js';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL } from '../../../api/names.js';
import type { WorkItem } from '../../../api/workitem.js';
import { dumpLogs, startControllerEnv, until, type ControllerEnv } from '../../support/controller-env.js';
import type { FakeAgent } from '../../support/fake-agent.js';

const NS = 'maint';
const CAPACITY = { cpus: 8, memory: '4Gi', storage: '10Gi' };

function instanceSpec(name: string): Instance {
  return { metadata: { name, namespace: NS }, spec: { cpus: 1, memory: '128Mi', process: { command: ['/bin/sleep', '3600'] } } };
}

describe('controller: cordon and drain (real etcd + apiserver, fake agents)', function () {
  this.timeout(60_000);
  let c: ControllerEnv;
  const agents = new Map<string, FakeAgent>();

  const getInstance = (name: string) => c.client.get('Instance', NS, name);
  const instanceWorkItems = async (name: string): Promise<WorkItem[]> =>
    (await c.client.list('WorkItem', { namespace: NS, labelSelector: `${OWNER_KIND_LABEL}=Instance,${OWNER_NAME_LABEL}=${name}` })).items;
  const running = (name: string) =>
    until(`instance ${name} Running`, async () => {
      const i = await getInstance(name);
      return i?.status?.phase === 'Running' && getCondition(i.status.conditions, 'Ready')?.status === 'True' ? i : undefined;
    });

  before(async () => {
    c = await startControllerEnv();
    await c.createCluster(NS);
    for (const n of ['n1', 'n2', 'n3']) agents.set(n, await c.startAgent(NS, n, { capacity: CAPACITY }));
    await until('three nodes Ready', async () => {
      const nodes = (await c.client.list('Node', { namespace: NS })).items;
      return nodes.length === 3 && nodes.every((n) => n.status?.phase === 'Ready') ? true : undefined;
    });
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') dumpLogs(c);
  });
  after(async () => c?.stop());

  it('cordon: the node keeps its instance, new instances avoid it, uncordon makes it eligible again', async () => {
    await c.client.create('Instance', instanceSpec('old'));
    const old = await running('old');
    const cordoned = old.status!.nodeName!;
    await c.client.patch('Node', NS, cordoned, { spec: { unschedulable: true } });
    await until('nodesUnschedulable 1', async () => {
      const cl = await c.client.get('Cluster', undefined, NS);
      return cl?.status?.counts?.nodesUnschedulable === 1 ? true : undefined;
    });

    const names = ['c1', 'c2', 'c3', 'c4'];
    for (const n of names) await c.client.create('Instance', instanceSpec(n));
    const placed = await Promise.all(names.map((n) => running(n)));
    for (const p of placed) expect(p.status!.nodeName, `${p.metadata.name} avoids cordoned ${cordoned}`).to.not.equal(cordoned);
    expect(new Set(placed.map((p) => p.status!.nodeName)).size, 'spread over both other nodes').to.equal(2);

    const still = await getInstance('old');
    expect(still!.status!.nodeName, 'cordon does not evict').to.equal(cordoned);
    expect(still!.status!.phase).to.equal('Running');
    const node = await c.client.get('Node', NS, cordoned);
    expect(node!.status!.phase, 'cordon alone does not change the phase').to.equal('Ready');

    // Nothing else fits on the two other nodes: only the cordoned one would take a 4Gi instance, and it is out.
    await c.client.create('Instance', { ...instanceSpec('big'), spec: { ...instanceSpec('big').spec, memory: '3900Mi' } });
    const big = await until('big Unschedulable', async () => {
      const i = await getInstance('big');
      return getCondition(i?.status?.conditions, 'Scheduled')?.status === 'False' ? i : undefined;
    });
    expect(big.status!.message).to.equal('0/3 nodes are available: 2 insufficient memory, 1 unschedulable.');

    await c.client.patch('Node', NS, cordoned, { spec: { unschedulable: false } });
    const bigPlaced = await running('big');
    expect(bigPlaced.status!.nodeName, 'uncordoned node takes the instance nothing else fits').to.equal(cordoned);
    await c.client.delete('Instance', NS, 'big');
    await until('big gone', async () => ((await getInstance('big')) ? undefined : true));
  });

  it('drain: Draining while instances stop on the node, each restarted elsewhere only after its old WorkItem is gone, then Drained', async () => {
    // Drain the node holding the most instances; hold its agent's cleanup so Draining is observable.
    const instances = (await c.client.list('Instance', { namespace: NS })).items;
    const count = (n: string) => instances.filter((i) => i.status?.nodeName === n).length;
    const target = ['n1', 'n2', 'n3'].sort((a, b) => count(b) - count(a))[0]!;
    const moving = instances.filter((i) => i.status?.nodeName === target).map((i) => i.metadata.name!);
    expect(moving.length).to.be.greaterThan(0);
    const agent = agents.get(target)!;
    agent.finalize = false;

    await c.client.patch('Node', NS, target, { spec: { drain: true } });
    const draining = await until('node Draining', async () => {
      const n = await c.client.get('Node', NS, target);
      return n?.status?.phase === 'Draining' && n.status.drain?.instancesRemaining === moving.length ? n : undefined;
    });
    expect(draining.status!.drain!.startedAt).to.be.a('string');
    expect(draining.status!.drain!.finishedAt).to.equal(undefined);
    for (const name of moving) {
      const i = await until(`${name} Stopping`, async () => {
        const x = await getInstance(name);
        return x?.status?.phase === 'Stopping' ? x : undefined;
      });
      expect(i.status!.nodeName, 'still on the draining node until it stopped there').to.equal(target);
      const items = await instanceWorkItems(name);
      expect(items, 'only the old WorkItem, being deleted: never two copies').to.have.length(1);
      expect(items[0]!.spec.nodeName).to.equal(target);
      expect(items[0]!.metadata.deletionTimestamp).to.be.a('string');
    }

    // The node finishes stopping them: each instance starts elsewhere, the node ends Drained.
    agent.finalize = true;
    for (const name of moving) {
      const i = await running(name);
      expect(i.status!.nodeName).to.not.equal(target);
      const finalizedAt = agent.records.find((r) => r.what === 'finalized' && r.workItem === `${name}.${target}`)!.at;
      const startedAt = c.agents.find((a) => a.nodeName === i.status!.nodeName)!.records.find((r) => r.what === 'running' && r.workItem === `${name}.${i.status!.nodeName}`)!.at;
      expect(startedAt, `${name} started on its new node after the old node let go`).to.be.greaterThan(finalizedAt);
    }
    const drained = await until('node Drained', async () => {
      const n = await c.client.get('Node', NS, target);
      return n?.status?.phase === 'Drained' ? n : undefined;
    });
    expect(drained.status!.drain).to.include({ instancesRemaining: 0, message: 'no instances left on the node' });
    expect(drained.status!.drain!.finishedAt).to.be.a('string');
    expect(drained.status!.allocated).to.include({ cpus: 0, instances: 0 });
    expect((await c.client.list('WorkItem', { namespace: NS, fieldSelector: `spec.nodeName=${target}` })).items).to.have.length(0);

    // A new instance does not land on the drained node.
    await c.client.create('Instance', instanceSpec('after'));
    expect((await running('after')).status!.nodeName).to.not.equal(target);

    // Ending the drain makes the node Ready again.
    await c.client.patch('Node', NS, target, { spec: { drain: false } });
    const ready = await until('node Ready again', async () => {
      const n = await c.client.get('Node', NS, target);
      return n?.status?.phase === 'Ready' ? n : undefined;
    });
    expect(ready.status!.drain).to.equal(undefined);
  });

  it('migrateTo moves an instance (stopped there first), records the migration as done, and does not pin it: a later drain moves it on', async () => {
    await c.client.create('Instance', instanceSpec('mover'));
    const from = (await running('mover')).status!.nodeName!;
    const to = ['n1', 'n2', 'n3'].find((n) => n !== from)!;
    await c.client.patch('Instance', NS, 'mover', { spec: { migrateTo: to } });
    const moved = await until(`mover Running on ${to}`, async () => {
      const i = await getInstance('mover');
      return i?.status?.phase === 'Running' && i.status.nodeName === to ? i : undefined;
    });
    expect((await instanceWorkItems('mover')).map((w) => w.spec.nodeName)).to.deep.equal([to]);
    const finalizedAt = agents.get(from)!.records.find((r) => r.what === 'finalized' && r.workItem === `mover.${from}`)!.at;
    const startedAt = agents.get(to)!.records.find((r) => r.what === 'running' && r.workItem === `mover.${to}`)!.at;
    expect(startedAt, 'started on the target after the source let go').to.be.greaterThan(finalizedAt);
    expect(moved.status!.migration, 'status.migration records the carried-out request').to.include({ targetNode: to, phase: 'Completed' });

    // migrateTo is a one-shot request, not a pin: draining its target moves the instance on.
    await c.client.patch('Node', NS, to, { spec: { drain: true } });
    const after = await until('mover moved off the drained target', async () => {
      const i = await getInstance('mover');
      return i?.status?.phase === 'Running' && i.status.nodeName !== to ? i : undefined;
    });
    expect(after.status!.nodeName).to.not.equal(to);
    await until('target Drained', async () => ((await c.client.get('Node', NS, to))?.status?.phase === 'Drained' ? true : undefined));
    await c.client.patch('Node', NS, to, { spec: { drain: false } });
  });
});

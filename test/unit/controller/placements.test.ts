/** Placements: assumed WorkItems overlaid on the cache, the running usage tally, and the snapshot the scheduler sees. */
import { expect } from 'chai';
import type { Instance } from '../../../api/instance.js';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL } from '../../../api/names.js';
import type { Volume } from '../../../api/volume.js';
import type { WorkItem } from '../../../api/workitem.js';
import type { ControllerCache } from '../../../controller/cache.js';
import type { InformerHandlers } from '../../../runtime/informer.js';
import { ASSUMED_TTL_MS, Placements } from '../../../controller/placements.js';
import { NS, instance, instanceWorkItem, replicaDone, replicaWorkItem, volume } from './reconcilers/builders.js';

const key = (o: { metadata: { namespace?: string; name?: string } }) => `${o.metadata.namespace}/${o.metadata.name}`;

/** A stand-in for the informer-backed cache whose WorkItem events the test delivers by hand. */
function fakeCache(objs: { instances?: Instance[]; volumes?: Volume[] } = {}) {
  const workItems = new Map<string, WorkItem>();
  const handlers: InformerHandlers<WorkItem>[] = [];
  const list = <T extends { metadata: { namespace?: string } }>(l: T[] = []) => ({ list: () => l });
  const cache = {
    workItems: { get: (k: string) => workItems.get(k), list: () => [...workItems.values()], addHandlers: (h: InformerHandlers<WorkItem>) => handlers.push(h) },
    instances: list(objs.instances),
    volumes: list(objs.volumes),
    nodes: list([]),
    cluster: () => undefined,
    inNamespace: (informer: { list(): Array<{ metadata: { namespace?: string } }> }, ns: string) => informer.list().filter((o) => o.metadata.namespace === ns),
    groupedInstances: (ns: string) => (objs.instances ?? []).filter((i) => i.metadata.namespace === ns && i.spec.placement?.antiAffinityGroup),
    workItemsOf: (kind: string, ns: string, name: string) =>
      [...workItems.values()].filter((w) => w.metadata.namespace === ns && w.metadata.labels?.[OWNER_KIND_LABEL] === kind && w.metadata.labels?.[OWNER_NAME_LABEL] === name),
  };
  const events = {
    add(w: WorkItem) {
      workItems.set(key(w), w);
      for (const h of handlers) h.add?.(w);
    },
    update(w: WorkItem) {
      const old = workItems.get(key(w))!;
      workItems.set(key(w), w);
      for (const h of handlers) h.update?.(old, w);
    },
    delete(w: WorkItem) {
      workItems.delete(key(w));
      for (const h of handlers) h.delete?.(w);
    },
  };
  return { cache: cache as unknown as ControllerCache, events };
}

describe('Placements', () => {
  it('adds assumed WorkItems the cache does not have yet, without a duplicate once it does', () => {
    const { cache, events } = fakeCache();
    const p = new Placements(cache);
    const web = instance('web');
    const assumed = instanceWorkItem(web, 'n2');
    p.assume(assumed);
    expect(p.workItemsOf('Instance', NS, 'web').map((w) => w.metadata.name)).to.deep.equal(['web.n2']);
    expect(p.workItemsOf('Instance', NS, 'db')).to.deep.equal([]);
    events.add({ ...assumed, metadata: { ...assumed.metadata, resourceVersion: '9' } });
    expect(p.workItemsOf('Instance', NS, 'web').map((w) => w.metadata.resourceVersion)).to.deep.equal(['9']);
    events.delete(assumed);
    expect(p.workItemsOf('Instance', NS, 'web')).to.deep.equal([]);
  });

  it('tallies what WorkItems place on each node, counting an assumed one once when it arrives, and forgetting failed ones', () => {
    const { cache, events } = fakeCache();
    const p = new Placements(cache);
    const a = instanceWorkItem(instance('a', { cpus: 2, memory: '1Gi' }), 'n1');
    const b = instanceWorkItem(instance('b', { cpus: 1, memory: '512Mi' }), 'n1');
    p.assume(a);
    events.add(a);
    p.assume(b);
    expect(p.usage(NS).get('n1')).to.include({ cpus: 3, memoryBytes: 1.5 * 2 ** 30, instances: 2 });
    p.forget(b);
    expect(p.usage(NS).get('n1')).to.include({ cpus: 2, instances: 1 });
    events.delete(a);
    expect(p.usage(NS).get('n1')).to.include({ cpus: 0, memoryBytes: 0, instances: 0 });
    const r = replicaWorkItem(volume('data', { size: '10Gi' }), 0, 'n2');
    events.add(r);
    expect(p.usage(NS).get('n2')).to.include({ storageBytes: 10 * 2 ** 30, volumeReplicas: 1 });
    expect(p.snapshot(NS).placedInstances).to.equal(0);
  });

  it('counts an assumed resize at once and shows it in place of the version it was read from, until the next version or its refusal', () => {
    const { cache, events } = fakeCache();
    const p = new Placements(cache);
    const web = instanceWorkItem(instance('web', { cpus: 1, memory: '1Gi' }), 'n1');
    const cached = { ...web, metadata: { ...web.metadata, resourceVersion: '5' } };
    events.add(cached);
    const resized = (cpus: number, resourceVersion = '5'): WorkItem => ({ ...cached, metadata: { ...cached.metadata, resourceVersion }, spec: { ...cached.spec, instance: { ...cached.spec.instance!, cpus } } });
    const cpusSeen = () => p.workItemsOf('Instance', NS, 'web').map((w) => w.spec.instance!.cpus);
    // A second worker planning on this node sees 3 cpus taken, not 1; a plan for web sees it resized (and does not resize it again).
    p.assume(resized(3));
    expect(p.usage(NS).get('n1')).to.include({ cpus: 3, instances: 1 });
    expect(cpusSeen()).to.deep.equal([3]);
    expect(p.workItemsIn(NS).map((w) => w.spec.instance!.cpus)).to.deep.equal([3]);
    // A generation on, as the apiserver will store it: its status (the old generation's) does not read as carried out.
    expect(p.workItemsOf('Instance', NS, 'web')[0]!.metadata.generation).to.equal(cached.metadata.generation! + 1);
    // The next version ends the assumption: this write, or another before it (then this one fails with a conflict).
    events.update(resized(3, '6'));
    expect(p.usage(NS).get('n1')).to.include({ cpus: 3, instances: 1 });
    expect(p.workItemsOf('Instance', NS, 'web').map((w) => w.metadata.resourceVersion)).to.deep.equal(['6']);
    // A refused resize is forgotten: the cached spec counts again.
    p.assume(resized(8, '6'));
    expect(p.usage(NS).get('n1')).to.include({ cpus: 8 });
    p.forget(resized(8, '6'));
    expect(p.usage(NS).get('n1')).to.include({ cpus: 3, instances: 1 });
    expect(cpusSeen()).to.deep.equal([3]);
  });

  it('expires an assumption its WorkItem never came back for (created and deleted while the watch was down)', () => {
    const { cache } = fakeCache();
    let now = 1_000;
    const p = new Placements(cache, () => now);
    p.assume(instanceWorkItem(instance('ghost', { cpus: 2 }), 'n1'));
    now += ASSUMED_TTL_MS - 1;
    expect(p.workItemsOf('Instance', NS, 'ghost')).to.have.length(1);
    expect(p.usage(NS).get('n1')).to.include({ cpus: 2, instances: 1 });
    now += 1;
    expect(p.workItemsOf('Instance', NS, 'ghost')).to.deep.equal([]);
    expect(p.usage(NS).get('n1')).to.include({ cpus: 0, instances: 0 });
    expect(p.workItemsIn(NS)).to.deep.equal([]);
  });

  it('says when an owner\'s assumed create the cache has not shown expires, so its owner is looked at again then (none once it is seen)', () => {
    const { cache, events } = fakeCache();
    let now = 1_000;
    const p = new Placements(cache, () => now);
    const w = instanceWorkItem(instance('lost-answer'), 'n1');
    expect(p.unseenCreatesExpireInMs(p.workItemsOf('Instance', NS, 'lost-answer'))).to.equal(undefined);
    p.assume(w);
    now += 10_000;
    expect(p.unseenCreatesExpireInMs(p.workItemsOf('Instance', NS, 'lost-answer'))).to.equal(ASSUMED_TTL_MS - 10_000);
    expect(p.unseenCreatesExpireInMs(p.workItemsOf('Instance', NS, 'other'))).to.equal(undefined);
    events.add({ ...w, metadata: { ...w.metadata, resourceVersion: '5' } });
    expect(p.unseenCreatesExpireInMs(p.workItemsOf('Instance', NS, 'lost-answer'))).to.equal(undefined);
  });

  it('gives the scheduler the tally, and only the instances it still reads (anti-affinity groups) placed where their WorkItems are', () => {
    const grouped = instance('g', { placement: { antiAffinityGroup: 'db' } });
    const plain = instance('p');
    const { cache, events } = fakeCache({ instances: [grouped, plain] });
    const p = new Placements(cache);
    events.add(instanceWorkItem(plain, 'n1'));
    p.assume(instanceWorkItem(grouped, 'n3'));
    const snap = p.snapshot(NS);
    expect(snap.instances.map((i) => [i.metadata.name, i.status?.nodeName])).to.deep.equal([['g', 'n3']]);
    expect(snap.placedInstances).to.equal(2);
    expect(snap.usage?.get('n1')?.instances).to.equal(1);
    expect(grouped.status).to.equal(undefined);
  });

  it('derives replica placements and states from the volume’s WorkItems', () => {
    const v = volume('data', { replicas: 3 });
    const { cache, events } = fakeCache({ volumes: [v] });
    events.add(replicaWorkItem(v, 0, 'n1', { status: replicaDone('10Gi', '/p0') }));
    events.add(replicaWorkItem(v, 1, 'n2', { deleting: true }));
    const snap = new Placements(cache).snapshot(NS);
    expect(snap.volumes[0]!.status!.replicas).to.deep.equal([
      { index: 0, nodeName: 'n1', size: '10Gi', state: 'Ready', path: '/p0' },
      { index: 1, nodeName: 'n2', size: '10Gi', state: 'Deleting', path: undefined },
    ]);
  });
});

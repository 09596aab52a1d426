/** Placements: assumed WorkItems overlaid on the cache, and the snapshot the scheduler sees. */
import { expect } from 'chai';
import type { Cluster } from '../../../api/cluster.js';
import type { Instance } from '../../../api/instance.js';
import type { Node } from '../../../api/node.js';
import type { Volume } from '../../../api/volume.js';
import type { WorkItem } from '../../../api/workitem.js';
import type { ControllerCache } from '../../../controller/cache.js';
import { Placements } from '../../../controller/placements.js';
import { NS, instance, instanceWorkItem, replicaDone, replicaWorkItem, volume } from './reconcilers/builders.js';

/** A stand-in for the informer-backed cache: plain maps keyed namespace/name. */
function fakeCache(objs: { workItems?: WorkItem[]; instances?: Instance[]; volumes?: Volume[]; nodes?: Node[]; cluster?: Cluster }) {
  const store = <T extends { metadata: { namespace?: string; name?: string } }>(list: T[] = []) => {
    const map = new Map(list.map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o]));
    return { map, get: (key: string) => map.get(key), list: () => [...map.values()] };
  };
  const c = { workItems: store(objs.workItems), instances: store(objs.instances), volumes: store(objs.volumes), nodes: store(objs.nodes) };
  const cache = {
    ...c,
    cluster: (ns: string) => (objs.cluster?.metadata.name === ns ? objs.cluster : undefined),
    inNamespace: (informer: { list(): Array<{ metadata: { namespace?: string } }> }, ns: string) => informer.list().filter((o) => o.metadata.namespace === ns),
  };
  return { cache: cache as unknown as ControllerCache, stores: c };
}

describe('Placements', () => {
  it('adds assumed WorkItems the cache does not have yet, and drops them once it does', () => {
    const inst = instance('web');
    const cached = instanceWorkItem(instance('db'), 'n1');
    const { cache, stores } = fakeCache({ workItems: [cached] });
    const p = new Placements(cache);
    const assumed = instanceWorkItem(inst, 'n2');
    p.assume(assumed);
    expect(p.workItems(NS).map((w) => w.metadata.name)).to.deep.equal(['db.n1', 'web.n2']);
    expect(p.workItems('other')).to.deep.equal([]);
    const arrived = { ...assumed, metadata: { ...assumed.metadata, resourceVersion: '9' } };
    stores.workItems.map.set(`${NS}/web.n2`, arrived);
    expect(p.workItems(NS).map((w) => w.metadata.resourceVersion)).to.deep.equal(['5', '9']);
    // The assumption is gone: deleting the cached one does not bring it back.
    stores.workItems.map.delete(`${NS}/web.n2`);
    expect(p.workItems(NS).map((w) => w.metadata.name)).to.deep.equal(['db.n1']);
  });

  it('forgets an assumption whose write failed', () => {
    const { cache } = fakeCache({});
    const p = new Placements(cache);
    const w = instanceWorkItem(instance('web'), 'n1');
    p.assume(w);
    p.forget(w);
    expect(p.workItems(NS)).to.deep.equal([]);
  });

  it('gives the scheduler instances placed where their WorkItems are, including assumed ones', () => {
    const a = instance('a');
    const b = instance('b', {}, { nodeName: 'stale' });
    const c = instance('c');
    const { cache } = fakeCache({ instances: [a, b, c], workItems: [instanceWorkItem(a, 'n1')] });
    const p = new Placements(cache);
    p.assume(instanceWorkItem(c, 'n3'));
    const snap = p.snapshot(NS);
    expect(snap.instances.map((i) => [i.metadata.name, i.status?.nodeName])).to.deep.equal([
      ['a', 'n1'],
      ['b', undefined],
      ['c', 'n3'],
    ]);
    expect(a.status).to.equal(undefined);
  });

  it('derives replica placements and states from the volume’s WorkItems, ignoring fully deleted ones', () => {
    const v = volume('data', { replicas: 3 });
    const gone = { ...replicaWorkItem(v, 2, 'n3', { deleting: true }), metadata: { ...replicaWorkItem(v, 2, 'n3', { deleting: true }).metadata, finalizers: [] } };
    const { cache } = fakeCache({
      volumes: [v],
      workItems: [replicaWorkItem(v, 0, 'n1', { status: replicaDone('10Gi', '/p0') }), replicaWorkItem(v, 1, 'n2', { deleting: true }), gone],
    });
    const snap = new Placements(cache).snapshot(NS);
    expect(snap.volumes[0]!.status!.replicas).to.deep.equal([
      { index: 0, nodeName: 'n1', size: '10Gi', state: 'Ready', path: '/p0' },
      { index: 1, nodeName: 'n2', size: '10Gi', state: 'Deleting', path: undefined },
    ]);
  });
});

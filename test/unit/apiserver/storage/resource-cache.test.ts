import { expect } from 'chai';
import fc from 'fast-check';
import type { KubeObject } from '../../../../apiserver/storage/codec.js';
import { deletedState, type Predicate } from '../../../../apiserver/storage/events.js';
import { ResourceCache, type Subscriber } from '../../../../apiserver/storage/resource-cache.js';
import { testDef } from '../helpers.js';

const def = testDef({ kind: 'WorkItem', plural: 'workitems', selectableFields: ['spec.nodeName'] });
const PREFIX = '/registry/cairn.dev/workitems/';
const keyOf = (name: string) => `${PREFIX}default/${name}`;
const item = (name: string, node: string, rev: number): KubeObject => ({
  metadata: { name, namespace: 'default', resourceVersion: String(rev) },
  spec: { nodeName: node },
});
const onNode = (node: string): Predicate => (o) => o.spec?.nodeName === node;
const everything: Predicate = () => true;

/** Drives a cache the way the watch cache does: prev comes from the cache itself. */
class Driver {
  rev = 0;
  constructor(readonly cache: ResourceCache) {}

  put(name: string, node: string): this {
    const key = keyOf(name);
    this.rev++;
    this.cache.apply({ type: 'put', key, rev: this.rev, obj: item(name, node, this.rev), prev: this.cache.objects.get(key) ?? null });
    return this;
  }

  delete(name: string): this {
    const key = keyOf(name);
    const prev = this.cache.objects.get(key)!;
    this.rev++;
    this.cache.apply({ type: 'delete', key, rev: this.rev, obj: deletedState(prev, this.rev), prev });
    return this;
  }
}

/** A subscriber that records what it hears as "TYPE name@rev". */
function recorder(matches: Predicate, indexedBy?: Subscriber['indexedBy']): Subscriber & { events: string[]; closed: number } {
  const sub = {
    matches,
    indexedBy,
    events: [] as string[],
    closed: 0,
    onEvent: (ev: Parameters<Subscriber['onEvent']>[0]) => void sub.events.push(`${ev.type} ${ev.object.metadata.name}@${ev.rev}`),
    onClose: () => void sub.closed++,
  };
  return sub;
}

const names = (objs: KubeObject[]) => objs.map((o) => o.metadata.name);

describe('ResourceCache', () => {
  let cache: ResourceCache;
  let d: Driver;
  beforeEach(() => {
    cache = new ResourceCache(def, PREFIX, 100);
    d = new Driver(cache);
  });

  describe('list', () => {
    beforeEach(() => d.put('c', 'n1').put('a', 'n2').put('b', 'n1').put('d', ''));

    it('returns the objects matching a predicate, sorted by key', () => {
      expect(names(cache.list(everything))).to.deep.equal(['a', 'b', 'c', 'd']);
      expect(names(cache.list(onNode('n1')))).to.deep.equal(['b', 'c']);
    });

    it('uses the index of a selectable field to narrow the candidates', () => {
      const seen: string[] = [];
      const spy: Predicate = (o) => (seen.push(o.metadata.name!), onNode('n1')(o));
      expect(names(cache.list(spy, { field: 'spec.nodeName', value: 'n1' }))).to.deep.equal(['b', 'c']);
      expect(seen).to.have.members(['b', 'c']);
      expect(names(cache.list(everything, { field: 'spec.nodeName', value: '' }))).to.deep.equal(['d']);
      expect(cache.list(everything, { field: 'spec.nodeName', value: 'nowhere' })).to.deep.equal([]);
    });

    it('keeps the index current as objects move and go', () => {
      d.put('c', 'n2').delete('b').put('e', 'n1');
      const on = (node: string) => names(cache.list(everything, { field: 'spec.nodeName', value: node }));
      expect(on('n1')).to.deep.equal(['e']);
      expect(on('n2')).to.deep.equal(['a', 'c']);
    });

    it('scans everything when the exact field is not indexed', () => {
      expect(names(cache.list(onNode('n1'), { field: 'metadata.name', value: 'b' }))).to.deep.equal(['b', 'c']);
    });

    it('is replaced wholesale by reset, index included', () => {
      cache.reset(new Map([[keyOf('z'), item('z', 'n1', 50)]]), 50);
      expect(names(cache.list(everything))).to.deep.equal(['z']);
      expect(names(cache.list(everything, { field: 'spec.nodeName', value: 'n1' }))).to.deep.equal(['z']);
      expect(cache.oldestRev).to.equal(50);
    });
  });

  describe('subscribe', () => {
    it('replays the buffered events after fromRev, then delivers live ones, each exactly once', () => {
      d.put('a', 'n1').put('b', 'n1').put('a', 'n2').delete('b');
      const sub = recorder(everything);
      expect(cache.subscribe(sub, 2)).to.equal(true);
      d.put('c', 'n1').delete('a');
      expect(sub.events).to.deep.equal(['MODIFIED a@3', 'DELETED b@4', 'ADDED c@5', 'DELETED a@6']);
    });

    it('replays through the subscriber\'s predicate', () => {
      d.put('a', 'n1').put('b', 'n2').put('a', 'n2');
      const sub = recorder(onNode('n1'));
      cache.subscribe(sub, 0);
      expect(sub.events).to.deep.equal(['ADDED a@1', 'DELETED a@3']);
    });

    it('refuses (attaching nothing) when fromRev is older than the ring', () => {
      const small = new Driver(new ResourceCache(def, PREFIX, 3));
      small.put('a', 'n1').put('b', 'n1').put('c', 'n1').put('d', 'n1').put('e', 'n1'); // revs 1 and 2 dropped
      expect(small.cache.oldestRev).to.equal(2);
      const [late, onTime] = [recorder(everything), recorder(everything)];
      expect(small.cache.subscribe(late, 1)).to.equal(false);
      expect(small.cache.subscribe(onTime, 2)).to.equal(true);
      small.put('f', 'n1');
      expect(late.events).to.deep.equal([]);
      expect(onTime.events).to.deep.equal(['ADDED c@3', 'ADDED d@4', 'ADDED e@5', 'ADDED f@6']);
    });

    it('refuses a revision older than the listing after reset', () => {
      cache.reset(new Map(), 40);
      expect(cache.subscribe(recorder(everything), 39)).to.equal(false);
      expect(cache.subscribe(recorder(everything), 40)).to.equal(true);
    });

    it('stops delivering after unsubscribe', () => {
      const subs = [recorder(everything), recorder(onNode('n1'), { field: 'spec.nodeName', value: 'n1' })];
      for (const s of subs) cache.subscribe(s, 0);
      d.put('a', 'n1');
      for (const s of subs) cache.unsubscribe(s);
      d.put('a', 'n1').put('b', 'n1');
      for (const s of subs) expect(s.events).to.deep.equal(['ADDED a@1']);
    });
  });

  describe('indexed subscribers', () => {
    const byN1 = () => recorder(onNode('n1'), { field: 'spec.nodeName', value: 'n1' });

    it('hear about objects moving onto and off their node, and nothing about other nodes', () => {
      const sub = byN1();
      cache.subscribe(sub, 0);
      d.put('a', 'n1') // 1 ADDED
        .put('b', 'n2') // 2 other node
        .put('a', 'n1') // 3 MODIFIED
        .put('a', 'n2') // 4 moved away: DELETED
        .put('b', 'n1') // 5 moved onto n1: ADDED
        .put('c', 'n3') // 6 other node
        .put('c', 'n2') // 7 between other nodes
        .delete('a') //    8 deleted elsewhere
        .delete('b'); //   9 DELETED
      expect(sub.events).to.deep.equal(['ADDED a@1', 'MODIFIED a@3', 'DELETED a@4', 'ADDED b@5', 'DELETED b@9']);
    });

    it('hear exactly what an unindexed subscriber with the same predicate hears (property)', () => {
      const op = fc.record({ name: fc.constantFrom('a', 'b', 'c'), node: fc.constantFrom('n1', 'n2', ''), remove: fc.boolean() });
      fc.assert(
        fc.property(fc.array(op, { maxLength: 30 }), fc.nat({ max: 30 }), (ops, subscribeAt) => {
          const c = new ResourceCache(def, PREFIX, 8);
          const drv = new Driver(c);
          const [indexed, plain] = [byN1(), recorder(onNode('n1'))];
          ops.forEach(({ name, node, remove }, i) => {
            if (i === subscribeAt) {
              const from = Math.max(c.oldestRev, drv.rev - 2);
              expect(c.subscribe(indexed, from)).to.equal(c.subscribe(plain, from));
            }
            if (remove && c.objects.has(keyOf(name))) drv.delete(name);
            else drv.put(name, node);
          });
          expect(indexed.events).to.deep.equal(plain.events);
        }),
      );
    });
  });

  describe('closeAll', () => {
    it('closes and detaches every subscriber, indexed or not, exactly once', () => {
      const subs = [recorder(everything), recorder(onNode('n1'), { field: 'spec.nodeName', value: 'n1' }), recorder(onNode('n2'), { field: 'spec.nodeName', value: 'n2' })];
      for (const s of subs) cache.subscribe(s, 0);
      cache.closeAll();
      cache.closeAll();
      d.put('a', 'n1').put('b', 'n2');
      for (const s of subs) {
        expect(s.closed).to.equal(1);
        expect(s.events).to.deep.equal([]);
      }
    });
  });

  describe('unsubscribe after closeAll', () => {
    it('leaves no empty subscriber set behind (a watcher unsubscribes when closed)', () => {
      const subs = ['n1', 'n2', 'n3'].map((n) => recorder(onNode(n), { field: 'spec.nodeName', value: n }));
      for (const s of subs) cache.subscribe(s, 0);
      cache.closeAll();
      for (const s of subs) cache.unsubscribe(s);
      const indexed = (cache as unknown as { indexedSubs: Map<string, Map<string, Set<Subscriber>>> }).indexedSubs;
      expect([...indexed.values()].map((byValue) => [...byValue.keys()])).to.deep.equal([[]]);
    });
  });

  describe('reset', () => {
    it('closes watchers attached before it: they saw the old contents and must re-watch', () => {
      const early = recorder(everything);
      cache.subscribe(early, 0);
      cache.reset(new Map([[keyOf('fresh'), item('fresh', 'n1', 60)]]), 60);
      d.put('later', 'n1');
      expect(early.closed).to.equal(1);
      expect(early.events).to.deep.equal([]);
    });
  });
});

import { expect } from 'chai';
import { deletedState, toWatchEvent, type StoreEvent } from '../../../../apiserver/storage/events.js';
import type { KubeObject } from '../../../../apiserver/storage/codec.js';

const obj = (node: string, rv: string): KubeObject => ({ metadata: { name: 'w', namespace: 'default', resourceVersion: rv }, spec: { nodeName: node } });
const onN1 = (o: KubeObject) => o.spec?.nodeName === 'n1';

describe('toWatchEvent', () => {
  // [store event type, prev (null = none), new state, expected watch event type]
  const cases: [type: StoreEvent['type'], prev: string | null, next: string, expected: string | null][] = [
    ['put', null, 'n1', 'ADDED'],
    ['put', null, 'n2', null],
    ['put', 'n1', 'n1', 'MODIFIED'],
    ['put', 'n2', 'n1', 'ADDED'],
    ['put', 'n1', 'n2', 'DELETED'],
    ['put', 'n2', 'n3', null],
    ['delete', 'n1', 'n1', 'DELETED'],
    ['delete', 'n2', 'n2', null],
    ['delete', null, 'n1', null],
  ];
  for (const [type, prev, next, expected] of cases) {
    it(`${type} ${prev ?? '∅'} → ${next} through spec.nodeName=n1 is ${expected ?? 'not seen'}`, () => {
      const ev: StoreEvent = { type, key: '/registry/k', rev: 8, obj: obj(next, '8'), prev: prev === null ? null : obj(prev, '7') };
      const out = toWatchEvent(ev, onN1);
      if (expected === null) expect(out).to.equal(null);
      // An object that stops matching is reported in the state the watcher last saw, at the new revision.
      const object = type === 'put' && expected === 'DELETED' ? deletedState(ev.prev!, 8) : ev.obj;
      if (expected === null) expect(out).to.equal(null);
      else expect(out).to.deep.equal({ type: expected, object, rev: 8 });
    });
  }

  it('sees everything as ADDED / MODIFIED / DELETED through a match-all predicate', () => {
    const all = () => true;
    expect(toWatchEvent({ type: 'put', key: 'k', rev: 2, obj: obj('a', '2'), prev: null }, all)?.type).to.equal('ADDED');
    expect(toWatchEvent({ type: 'put', key: 'k', rev: 3, obj: obj('a', '3'), prev: obj('a', '2') }, all)?.type).to.equal('MODIFIED');
    expect(toWatchEvent({ type: 'delete', key: 'k', rev: 4, obj: deletedState(obj('a', '3'), 4), prev: obj('a', '3') }, all)?.type).to.equal('DELETED');
  });

  // Regression (was a bug): apiserver/storage/events.ts toWatchEvent, for a put whose new state stops matching, returns
  // DELETED carrying ev.obj (the new state, e.g. spec.nodeName "n2" for a watcher of n1). kube's
  // cacher (cacheWatcher.convertToWatchEvent) sends the previous object, the one the watcher knew,
  // stamped with the event's resourceVersion — i.e. deletedState(prev, rev).
  it('a put that stops matching is DELETED with the previous state at the new revision, as kube does', () => {
    const ev: StoreEvent = { type: 'put', key: 'k', rev: 8, obj: obj('n2', '8'), prev: obj('n1', '7') };
    expect(toWatchEvent(ev, onN1)).to.deep.equal({ type: 'DELETED', object: obj('n1', '8'), rev: 8 });
  });
});

describe('deletedState', () => {
  it('is the last state stamped with the deletion revision, leaving the original alone', () => {
    const prev = obj('n1', '7');
    const out = deletedState(prev, 12);
    expect(out).to.deep.equal(obj('n1', '12'));
    expect(prev.metadata.resourceVersion).to.equal('7');
  });
});

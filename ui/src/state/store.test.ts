import { describe, expect, it } from 'vitest';
import type { KubeObject } from '../api/paths';
import { applyEvents, compareResourceVersions, emptyCollection, relist, sortedItems, type WatchEvent } from './store';

const obj = (name: string, rv: string, extra: Record<string, unknown> = {}): KubeObject & Record<string, unknown> => ({ metadata: { name, namespace: 'demo', resourceVersion: rv }, ...extra });
const names = (c: { items: ReadonlyMap<string, KubeObject> }) => [...c.items.values()].map((o) => `${o.metadata.name}@${o.metadata.resourceVersion}`).sort();

describe('compareResourceVersions', () => {
  it('compares decimal revisions numerically, beyond 2^53', () => {
    expect(compareResourceVersions('9', '10')).toBeLessThan(0);
    expect(compareResourceVersions('100', '99')).toBeGreaterThan(0);
    expect(compareResourceVersions('42', '42')).toBe(0);
    expect(compareResourceVersions('18446744073709551616', '18446744073709551615')).toBeGreaterThan(0);
  });

  it('treats an opaque version as newer so it is never dropped', () => {
    expect(compareResourceVersions('abc', '10')).toBeGreaterThan(0);
  });
});

describe('relist', () => {
  it('replaces everything known before', () => {
    const before = applyEvents(relist([obj('a', '5')], '5'), [{ type: 'ADDED', object: obj('b', '6') }]);
    const after = relist([obj('c', '9')], '9');
    expect(names(before)).toEqual(['a@5', 'b@6']);
    expect(names(after)).toEqual(['c@9']);
    expect(after.resourceVersion).toBe('9');
    expect(after.synced).toBe(true);
  });

  it('starts from an unsynced empty collection', () => {
    const empty = emptyCollection();
    expect(empty.synced).toBe(false);
    expect(empty.items.size).toBe(0);
  });
});

describe('applyEvents', () => {
  const listed = relist([obj('a', '10'), obj('b', '11')], '12');

  it('adds, modifies and deletes', () => {
    const events: WatchEvent<KubeObject>[] = [
      { type: 'ADDED', object: obj('c', '13') },
      { type: 'MODIFIED', object: obj('a', '14', { spec: { x: 1 } }) },
      { type: 'DELETED', object: obj('b', '15') },
    ];
    const next = applyEvents(listed, events);
    expect(names(next)).toEqual(['a@14', 'c@13']);
    expect(next.resourceVersion).toBe('15');
    expect(next.items.get('demo/a')).toMatchObject({ spec: { x: 1 } });
  });

  it('moves the resume point on a bookmark without touching objects', () => {
    const next = applyEvents(listed, [{ type: 'BOOKMARK', object: { metadata: { resourceVersion: '40' } } }]);
    expect(next.resourceVersion).toBe('40');
    expect(next.items).toBe(listed.items);
  });

  it('ignores events before the collection resourceVersion (already reflected)', () => {
    const next = applyEvents(listed, [
      { type: 'MODIFIED', object: obj('a', '11') },
      { type: 'DELETED', object: obj('b', '9') },
    ]);
    expect(next).toBe(listed);
  });

  it('applies every event of a revision that changed several objects, also when they come in two batches', () => {
    const deletedAt = (name: string) => ({ type: 'DELETED' as const, object: obj(name, '20') });
    const first = applyEvents(listed, [deletedAt('a')]);
    const second = applyEvents(first, [deletedAt('b')]);
    expect(names(second)).toEqual([]);
    expect(applyEvents(listed, [deletedAt('a'), deletedAt('b')]).items.size).toBe(0);
    expect(applyEvents(second, [deletedAt('b')]), 'a repeat changes nothing').toBe(second);
  });

  it('ignores an event older than the object it would replace', () => {
    const moved = applyEvents(listed, [{ type: 'MODIFIED', object: obj('a', '20', { v: 'new' }) }]);
    // A stale event from a replaced watch, newer than the list but older than the object.
    const stale = applyEvents({ ...moved, resourceVersion: '12' }, [{ type: 'MODIFIED', object: obj('a', '18', { v: 'old' }) }]);
    expect(stale.items.get('demo/a')).toMatchObject({ v: 'new' });
    expect(stale.resourceVersion).toBe('18');
  });

  it('keeps the identity of untouched objects so rows can skip re-rendering', () => {
    const next = applyEvents(listed, [{ type: 'MODIFIED', object: obj('a', '13') }]);
    expect(next.items.get('demo/b')).toBe(listed.items.get('demo/b'));
    expect(next.items.get('demo/a')).not.toBe(listed.items.get('demo/a'));
    expect(listed.items.get('demo/a')?.metadata.resourceVersion).toBe('10'); // the old collection is unchanged
  });

  it('skips ERROR events', () => {
    expect(applyEvents(listed, [{ type: 'ERROR', object: { code: 410 } }])).toBe(listed);
  });

  it('keeps objects of the same name in different namespaces apart', () => {
    const other = { metadata: { name: 'a', namespace: 'prod', resourceVersion: '13' } };
    const next = applyEvents(listed, [{ type: 'ADDED', object: other }]);
    expect(next.items.size).toBe(3);
    expect(sortedItems(next).map((o) => `${o.metadata.namespace}/${o.metadata.name}`)).toEqual(['demo/a', 'demo/b', 'prod/a']);
  });

  it('sorts numbers in names by value', () => {
    const c = relist([obj('web-10', '1'), obj('web-2', '1'), obj('web-1', '1')], '1');
    expect(sortedItems(c).map((o) => o.metadata.name)).toEqual(['web-1', 'web-2', 'web-10']);
  });
});

import { expect } from 'chai';
import fc from 'fast-check';
import { RevisionRing } from '../../../../apiserver/storage/ring.js';

interface Item {
  rev: number;
  id: number;
}

/** Pushes items with the given revisions (ids number the pushes). */
function filled(capacity: number, revs: number[]): RevisionRing<Item> {
  const ring = new RevisionRing<Item>(capacity);
  revs.forEach((rev, id) => ring.push({ rev, id }));
  return ring;
}

describe('RevisionRing', () => {
  it('returns every item after a revision, oldest first', () => {
    const ring = filled(5, [1, 2, 3]);
    expect(ring.after(0).map((i) => i.rev)).to.deep.equal([1, 2, 3]);
    expect(ring.after(1).map((i) => i.rev)).to.deep.equal([2, 3]);
    expect(ring.after(3)).to.deep.equal([]);
    expect(ring.after(99)).to.deep.equal([]);
  });

  it('keeps items that share a revision together', () => {
    const ring = filled(5, [1, 2, 2, 2, 3]);
    expect(ring.after(1).map((i) => i.id)).to.deep.equal([1, 2, 3, 4]);
    expect(ring.after(2).map((i) => i.id)).to.deep.equal([4]);
  });

  it('returns the dropped oldest item when full', () => {
    const ring = new RevisionRing<Item>(2);
    expect(ring.push({ rev: 1, id: 0 })).to.equal(undefined);
    expect(ring.push({ rev: 2, id: 1 })).to.equal(undefined);
    expect(ring.push({ rev: 3, id: 2 })).to.deep.equal({ rev: 1, id: 0 });
    expect(ring.push({ rev: 4, id: 3 })).to.deep.equal({ rev: 2, id: 1 });
    expect(ring.length).to.equal(2);
    expect(ring.after(0).map((i) => i.rev)).to.deep.equal([3, 4]);
  });

  it('is empty after clear and fills again from scratch', () => {
    const ring = filled(3, [1, 2, 3, 4]);
    ring.clear();
    expect(ring.length).to.equal(0);
    expect(ring.after(0)).to.deep.equal([]);
    expect(ring.push({ rev: 10, id: 0 })).to.equal(undefined);
    expect(ring.after(0).map((i) => i.rev)).to.deep.equal([10]);
  });

  it('behaves like a bounded array under random pushes and queries (model test)', () => {
    const command = fc.oneof(
      fc.record({ kind: fc.constant('push' as const), step: fc.nat({ max: 3 }) }),
      fc.record({ kind: fc.constant('after' as const), back: fc.integer({ min: -2, max: 40 }) }),
      fc.record({ kind: fc.constant('clear' as const) }),
    );
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 8 }), fc.array(command, { maxLength: 80 }), (capacity, commands) => {
        const ring = new RevisionRing<Item>(capacity);
        let model: Item[] = [];
        let rev = 0;
        let id = 0;
        for (const c of commands) {
          if (c.kind === 'push') {
            rev += c.step; // non-decreasing revisions, repeats allowed
            const item = { rev, id: id++ };
            const expectedDrop = model.length === capacity ? model.shift() : undefined;
            model.push(item);
            expect(ring.push(item)).to.equal(expectedDrop);
          } else if (c.kind === 'after') {
            const from = rev - c.back;
            expect(ring.after(from)).to.deep.equal(model.filter((i) => i.rev > from));
          } else {
            ring.clear();
            model = [];
          }
          expect(ring.length).to.equal(model.length);
        }
      }),
    );
  });
});

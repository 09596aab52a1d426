/** The helpers plans share: earliest, mergeWorkItem, stableJson, sameJson, StaleGuard. */
import { expect } from 'chai';
import fc from 'fast-check';
import { earliest, mergeWorkItem } from '../../../../controller/reconcilers/actions.js';
import { sameJson, stableJson } from '../../../../controller/reconcilers/stable-json.js';
import { StaleGuard } from '../../../../controller/reconcilers/stale-guard.js';
import { instance, instanceWorkItem, running } from './builders.js';

describe('reconciler helpers', () => {
  describe('earliest', () => {
    it('is the smaller delay, ignoring undefined', () => {
      expect(earliest(undefined, undefined)).to.equal(undefined);
      expect(earliest(5, undefined)).to.equal(5);
      expect(earliest(undefined, 7)).to.equal(7);
      expect(earliest(9, 3)).to.equal(3);
      expect(earliest(0, 3)).to.equal(0);
    });
  });

  describe('mergeWorkItem', () => {
    it('takes spec, labels and annotations from desired, everything else from the stored object', () => {
      const current = instanceWorkItem(instance('web'), 'n1', { status: running(), resourceVersion: '42' });
      current.metadata.labels = { ...current.metadata.labels, extra: 'kept' };
      current.metadata.finalizers = ['cairn.dev/agent', 'other/finalizer'];
      const desired = instanceWorkItem(instance('web', { cpus: 4 }), 'n1');
      desired.metadata.annotations = { 'cairn.dev/spec-hash': 'new' };
      const merged = mergeWorkItem(current, desired);
      expect(merged.spec).to.equal(desired.spec);
      expect(merged.status).to.equal(current.status);
      expect(merged.metadata.resourceVersion).to.equal('42');
      expect(merged.metadata.uid).to.equal(current.metadata.uid);
      expect(merged.metadata.finalizers).to.deep.equal(['cairn.dev/agent', 'other/finalizer']);
      expect(merged.metadata.labels).to.include({ extra: 'kept' });
      expect(merged.metadata.annotations).to.deep.equal({ 'cairn.dev/spec-hash': 'new' });
      expect(current.spec.instance!.cpus).to.equal(1);
    });
  });

  describe('stableJson', () => {
    it('sorts keys, drops undefined fields, keeps arrays in order', () => {
      expect(stableJson({ b: 1, a: { d: [3, 1], c: undefined } })).to.equal('{"a":{"d":[3,1]},"b":1}');
      expect(stableJson(undefined)).to.equal('null');
      expect(stableJson(null)).to.equal('null');
      expect(stableJson([undefined])).to.equal('[null]');
      expect(stableJson('x')).to.equal('"x"');
    });

    it('is the same for objects equal up to key order, and parses back to the same JSON value', () => {
      fc.assert(
        fc.property(fc.jsonValue(), (v) => {
          const reordered = JSON.parse(JSON.stringify(v), (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).reverse()) : x));
          expect(stableJson(reordered)).to.equal(stableJson(v));
          expect(JSON.parse(stableJson(v))).to.deep.equal(JSON.parse(JSON.stringify(v)));
        }),
        { numRuns: 200 },
      );
    });
  });

  describe('sameJson', () => {
    it('agrees with comparing stableJson, for JSON values alike or not', () => {
      const reorder = (v: unknown) => JSON.parse(JSON.stringify(v), (_k, x) => (x && typeof x === 'object' && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).reverse()) : x));
      fc.assert(
        fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => {
          expect(sameJson(a, reorder(a))).to.equal(true);
          expect(sameJson(a, b)).to.equal(stableJson(a) === stableJson(b));
        }),
        { numRuns: 300 },
      );
      expect(sameJson({ a: 1, b: undefined }, { a: 1 })).to.equal(true);
      expect(sameJson({ a: 1 }, { a: 1, b: 2 })).to.equal(false);
      expect(sameJson({ a: [1, { c: 2 }] }, { a: [1, { c: 3 }] })).to.equal(false);
    });
  });

  describe('StaleGuard', () => {
    it('marks versions we replaced as stale, per key', () => {
      const g = new StaleGuard();
      g.replaced('ns/a', '1');
      expect(g.isStale('ns/a', '1')).to.equal(true);
      expect(g.isStale('ns/a', '2')).to.equal(false);
      expect(g.isStale('ns/b', '1')).to.equal(false);
      expect(g.isStale('ns/a', undefined)).to.equal(false);
    });

    it('ignores an undefined version and remembers only the last four', () => {
      const g = new StaleGuard();
      g.replaced('k', undefined);
      expect(g.isStale('k', '')).to.equal(false);
      for (const rv of ['1', '2', '3', '4', '5']) g.replaced('k', rv);
      expect(g.isStale('k', '1')).to.equal(false);
      for (const rv of ['2', '3', '4', '5']) expect(g.isStale('k', rv)).to.equal(true);
    });

    it('forgets a key', () => {
      const g = new StaleGuard();
      g.replaced('k', '1');
      g.forget('k');
      expect(g.isStale('k', '1')).to.equal(false);
    });
  });
});

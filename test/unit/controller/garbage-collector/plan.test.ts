import { expect } from 'chai';
import fc from 'fast-check';
import type { OwnerReference } from '../../../../api/types.js';
import { isGcCandidate, planCollection, type GcAction, type GcObject } from '../../../../controller/garbage-collector/plan.js';

const KIND = { group: '', version: 'v1', kind: 'ConfigMap', plural: 'configmaps', namespaced: true };
const obj = (uid: string, o: Partial<GcObject> = {}): GcObject => ({ kind: KIND, namespace: 'a', name: uid, uid, resourceVersion: '1', ownerReferences: [], finalizers: [], ...o });
const ref = (uid: string, block = false): OwnerReference => ({ apiVersion: 'v1', kind: 'ConfigMap', name: uid, uid, ...(block ? { blockOwnerDeletion: true } : {}) });
const steps = (a: GcAction[]) => a.map((x) => `${x.type} ${x.target.uid}${x.type === 'dropFinalizer' ? ` ${x.finalizer}` : ''}`);
const deleting = { deletionTimestamp: '2026-11-26T00:00:00Z' };

describe('garbage collection plan (ownerReferences)', () => {
  it('background: deletes an object whose owners are all gone, and nothing while one owner remains', () => {
    expect(steps(planCollection([obj('d', { ownerReferences: [ref('gone')] })]))).to.deep.equal(['deleteOrphaned d']);
    expect(planCollection([obj('o'), obj('d', { ownerReferences: [ref('gone'), ref('o')] })])).to.deep.equal([]);
    expect(planCollection([obj('d', { ...deleting, ownerReferences: [ref('gone')] })]), 'already going').to.deep.equal([]);
  });

  it('matches owners by uid: an owner recreated under the same name does not own the old dependents', () => {
    const recreated = obj('new-uid', { name: 'o' });
    expect(steps(planCollection([recreated, obj('d', { ownerReferences: [{ ...ref('old-uid'), name: 'o' }] })]))).to.deep.equal(['deleteOrphaned d']);
  });

  it('foreground: deletes the dependents; the owner keeps its finalizer while a blocking dependent exists', () => {
    const owner = obj('o', { ...deleting, finalizers: ['foregroundDeletion'] });
    const view = [owner, obj('b', { ownerReferences: [ref('o', true)] }), obj('n', { ownerReferences: [ref('o')] })];
    expect(steps(planCollection(view))).to.deep.equal(['deleteDependent b', 'deleteDependent n']);
    const blockerGoing = [owner, obj('b', { ...deleting, finalizers: ['hold'], ownerReferences: [ref('o', true)] })];
    expect(planCollection(blockerGoing), 'waits for the blocking dependent to be gone').to.deep.equal([]);
    expect(steps(planCollection([owner, obj('n', { ...deleting, ownerReferences: [ref('o')] })])), 'a non-blocking dependent is not waited for').to.deep.equal(['dropFinalizer o foregroundDeletion']);
    expect(steps(planCollection([owner]))).to.deep.equal(['dropFinalizer o foregroundDeletion']);
  });

  it('orphan: removes the owner from its dependents, then its finalizer', () => {
    const owner = obj('o', { ...deleting, finalizers: ['orphan'] });
    const actions = planCollection([owner, obj('d', { ownerReferences: [ref('o'), ref('other')] })]);
    expect(actions).to.have.length(1);
    expect(actions[0]).to.include({ type: 'dropOwnerRefs' });
    expect(actions[0]!.type === 'dropOwnerRefs' && actions[0]!.uids).to.deep.equal(['o']);
    expect(steps(planCollection([owner]))).to.deep.equal(['dropFinalizer o orphan']);
  });

  it('property: deletes only objects whose owners are all gone, or dependents of an owner deleted in the foreground', () => {
    const uids = ['u0', 'u1', 'u2', 'u3', 'u4'];
    const object = fc.record({
      uid: fc.constantFrom(...uids),
      owners: fc.subarray(uids),
      deleting: fc.boolean(),
      fin: fc.subarray(['foregroundDeletion', 'orphan', 'hold']),
      block: fc.boolean(),
    });
    fc.assert(
      fc.property(fc.uniqueArray(object, { selector: (o) => o.uid }), (spec) => {
        const view = spec.map((s) => obj(s.uid, { ownerReferences: s.owners.filter((u) => u !== s.uid).map((u) => ref(u, s.block)), finalizers: s.fin, ...(s.deleting ? deleting : {}) }));
        const inView = new Set(view.map((o) => o.uid));
        for (const a of planCollection(view)) {
          if (a.type === 'deleteOrphaned') expect(a.target.ownerReferences.some((r) => inView.has(r.uid)), `orphan ${a.target.uid}`).to.equal(false);
          if (a.type === 'deleteDependent') {
            expect(a.owner.deletionTimestamp && a.owner.finalizers.includes('foregroundDeletion') && !a.owner.finalizers.includes('orphan'), `owner of ${a.target.uid}`).to.be.ok;
            expect(a.target.ownerReferences.some((r) => r.uid === a.owner.uid)).to.equal(true);
            expect(a.target.deletionTimestamp).to.equal(undefined);
          }
        }
      }),
    );
  });

  it('property: planning over the candidates alone, with every uid known to exist, plans what planning over everything does', () => {
    const uids = ['u0', 'u1', 'u2', 'u3', 'u4', 'u5'];
    const object = fc.record({ uid: fc.constantFrom(...uids), owners: fc.subarray(uids), deleting: fc.boolean(), fin: fc.subarray(['foregroundDeletion', 'orphan', 'hold']), block: fc.boolean() });
    fc.assert(
      fc.property(fc.uniqueArray(object, { selector: (o) => o.uid }), (spec) => {
        const view = spec.map((s) => obj(s.uid, { ownerReferences: s.owners.filter((u) => u !== s.uid).map((u) => ref(u, s.block)), finalizers: s.fin, ...(s.deleting ? deleting : {}) }));
        const uidsInView = new Set(view.map((o) => o.uid));
        expect(planCollection(view.filter(isGcCandidate), (uid) => uidsInView.has(uid))).to.deep.equal(planCollection(view));
      }),
    );
  });

  it('an object with no owners that is not being deleted is no candidate: it matters only as an owner', () => {
    expect(isGcCandidate(obj('plain'))).to.equal(false);
    expect(isGcCandidate(obj('d', { ownerReferences: [ref('o')] }))).to.equal(true);
    expect(isGcCandidate(obj('o', deleting))).to.equal(true);
    expect(planCollection([obj('d', { ownerReferences: [ref('o')] })], (uid) => uid === 'o'), 'its owner exists outside the candidates').to.deep.equal([]);
  });
});

/**
 * Which updates wake the garbage collector: only those that can change a
 * step (owners, deletion, finalizers). Lease renewals and status writes,
 * every second across a cluster, do not.
 */
import { expect } from 'chai';
import { changedForCollection } from '../../../../controller/garbage-collector/collector.js';
import type { ListedObject } from '../../../../runtime/informer.js';

const lease = (rv: string, extra: Record<string, unknown> = {}, spec: Record<string, unknown> = {}) =>
  ({ metadata: { name: 'node-n1', namespace: 'a', uid: 'u1', resourceVersion: rv, ...extra }, spec: { holderIdentity: 'n1', renewTime: `2026-11-26T00:00:0${rv}Z`, ...spec } }) as unknown as ListedObject;

describe('garbage collector wake-ups', () => {
  it('a renewal or any other change of spec or status is no reason to plan again', () => {
    expect(changedForCollection(lease('1'), lease('2'))).to.equal(false);
    expect(changedForCollection(lease('1'), lease('2', {}, { holderIdentity: 'n2' }))).to.equal(false);
  });

  it('a change of owners, of deletion or of finalizers is', () => {
    const owners = { ownerReferences: [{ apiVersion: 'cairn.dev/v1alpha1', kind: 'Node', name: 'n1', uid: 'n' }] };
    expect(changedForCollection(lease('1'), lease('2', owners))).to.equal(true);
    expect(changedForCollection(lease('1', owners), lease('2'))).to.equal(true);
    expect(changedForCollection(lease('1'), lease('2', { deletionTimestamp: '2026-11-26T00:00:09Z' }))).to.equal(true);
    expect(changedForCollection(lease('1'), lease('2', { finalizers: ['foregroundDeletion'] }))).to.equal(true);
  });
});

/** changedBeyondStatus: which Cluster updates the Cluster loop reconciles at once. */
import { expect } from 'chai';
import type { Cluster } from '../../../api/cluster.js';
import { changedBeyondStatus } from '../../../controller/cluster-changes.js';

const cluster = {
  apiVersion: 'cairn.dev/v1alpha1',
  kind: 'Cluster',
  metadata: { name: 'c', resourceVersion: '10', generation: 3, finalizers: ['cairn.dev/cluster'] },
  spec: { policy: { maxInstances: 10 } },
  status: { observedGeneration: 3, instances: { total: 4 } },
} as unknown as Cluster;
const withMeta = (m: Partial<Cluster['metadata']>): Cluster => ({ ...cluster, metadata: { ...cluster.metadata, resourceVersion: '11', ...m } });

describe('changedBeyondStatus', () => {
  it("ignores a write of the status alone (the loop's own counts coming back)", () => {
    expect(changedBeyondStatus(cluster, { ...withMeta({}), status: { observedGeneration: 3, instances: { total: 5 } } } as unknown as Cluster)).to.equal(false);
    expect(changedBeyondStatus(cluster, withMeta({}))).to.equal(false);
  });

  it('sees a spec change (generation), a deletion and a finalizer change', () => {
    expect(changedBeyondStatus(cluster, withMeta({ generation: 4 }))).to.equal(true);
    expect(changedBeyondStatus(cluster, withMeta({ deletionTimestamp: '2026-11-28T10:00:00Z' }))).to.equal(true);
    expect(changedBeyondStatus(cluster, withMeta({ finalizers: [] }))).to.equal(true);
    expect(changedBeyondStatus(cluster, withMeta({ finalizers: undefined }))).to.equal(true);
  });
});

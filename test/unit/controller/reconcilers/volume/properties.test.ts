/**
 * Properties of planVolume over random observations: at most one replica
 * per node, never more new replicas than are missing, never a new replica
 * on a node it is just releasing one from, deterministic.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import type { Cluster } from '../../../../../api/cluster.js';
import type { Volume, VolumeReplicaStatus } from '../../../../../api/volume.js';
import type { WorkItem, WorkItemStatus } from '../../../../../api/workitem.js';
import type { NodeView } from '../../../../../controller/node-health.js';
import { planVolume, type VolumeObserved } from '../../../../../controller/reconcilers/volume/plan.js';
import { GONE, LOST, NOW, READY, cluster, ofType, replicaDone, replicaWorkItem, unreachable, volume } from '../builders.js';

const NODES = ['a', 'b', 'c', 'd', 'e'] as const;
const RUNS = { numRuns: 300 };

const viewArb: fc.Arbitrary<NodeView> = fc.oneof(fc.constant(READY), fc.constant(READY), fc.constant(LOST), fc.constant(GONE), fc.integer({ min: 1, max: 60_000 }).map(unreachable));

const statusArb: fc.Arbitrary<WorkItemStatus | undefined> = fc.constantFrom(undefined, replicaDone(), replicaDone('5Gi'), { phase: 'Failed' as const, lastError: { reason: 'NoSpace' as const, message: 'full' } });

interface Case {
  volume: Volume;
  cluster: Cluster | undefined;
  workItems: WorkItem[];
  views: Record<string, NodeView>;
  nodeNames: string[];
  message: string | undefined;
}

const caseArb: fc.Arbitrary<Case> = fc
  .record({
    replicas: fc.integer({ min: 1, max: 4 }),
    size: fc.constantFrom('5Gi', '10Gi', '20Gi'),
    capacity: fc.constantFrom(undefined, '10Gi'),
    deleting: fc.boolean(),
    // Replica status as the controller last wrote it (indices 0..n-1, some never placed).
    statusNodes: fc.array(fc.option(fc.constantFrom(...NODES), { nil: undefined }), { maxLength: 4 }),
    items: fc.array(fc.record({ index: fc.integer({ min: 0, max: 4 }), node: fc.constantFrom(...NODES), deleting: fc.boolean(), status: statusArb }), { maxLength: 5 }),
    views: fc.record({ a: viewArb, b: viewArb, c: viewArb, d: viewArb, e: viewArb }),
    // The scheduler's answer: distinct nodes (its contract), in any order, possibly unknown ones or ones holding replicas.
    nodeNames: fc.uniqueArray(fc.constantFrom(...NODES, 'x'), { maxLength: 6 }),
    message: fc.constantFrom(undefined, 'not enough nodes'),
    cluster: fc.constantFrom(undefined, cluster({ failover: { recreateLostReplicas: false } })),
  })
  .map((r) => {
    const replicas: VolumeReplicaStatus[] = r.statusNodes.map((nodeName, index) => (nodeName ? { index, nodeName, state: 'Ready' } : { index, state: 'Pending' }));
    const status = r.statusNodes.length || r.capacity ? { ...(r.capacity ? { capacity: r.capacity } : {}), replicas } : undefined;
    const vol = volume('data', { replicas: r.replicas, size: r.size }, status, { deleting: r.deleting });
    // Distinct WorkItem names, as the apiserver guarantees.
    const seen = new Set<string>();
    const workItems = r.items
      .map((w) => replicaWorkItem(vol, w.index, w.node, { deleting: w.deleting, status: w.status }))
      .filter((w) => !seen.has(w.metadata.name!) && !!seen.add(w.metadata.name!));
    return { volume: vol, cluster: r.cluster, workItems, views: r.views, nodeNames: r.nodeNames, message: r.message };
  });

function observed(c: Case): VolumeObserved {
  return { volume: c.volume, cluster: c.cluster, workItems: c.workItems, node: (n) => c.views[n] ?? GONE, schedule: () => ({ nodeNames: c.nodeNames, ...(c.message ? { message: c.message } : {}) }), brickHome: () => undefined, nodeAddress: () => undefined, now: NOW, seenAt: (_slot, stamp) => Date.parse(stamp), unchangedSince: () => NOW, mounts: [] };
}

describe('planVolume: properties', () => {
  it('never creates two replicas on one node, nor one next to a replica that stays there', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const plan = planVolume(observed(c));
        const leaving = new Set(plan.actions.flatMap((a) => (a.type === 'deleteWorkItem' || a.type === 'releaseWorkItem' ? [a.name] : [])));
        const staying = c.workItems.filter((w) => !w.metadata.deletionTimestamp && !leaving.has(w.metadata.name!)).map((w) => w.spec.nodeName);
        const created = ofType(plan.actions, 'createWorkItem').map((a) => a.workItem.spec.nodeName);
        expect(new Set(created).size, `created on ${created}`).to.equal(created.length);
        for (const n of created) expect(staying, `created on ${n}, which keeps a replica`).not.to.include(n);
      }),
      RUNS,
    );
  });

  it('never creates more WorkItems than replicas are missing, each for a distinct missing index', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const plan = planVolume(observed(c));
        const wanted = Math.max(c.volume.spec.replicas ?? 1, c.volume.status?.replicas?.length ?? 0);
        const existing = new Set(c.workItems.filter((w) => !w.metadata.deletionTimestamp && w.spec.volumeReplica!.index < wanted).map((w) => w.spec.volumeReplica!.index));
        const created = ofType(plan.actions, 'createWorkItem').map((a) => a.workItem.spec.volumeReplica!.index);
        expect(created.length).to.be.at.most(Math.max(0, wanted - existing.size));
        expect(new Set(created).size).to.equal(created.length);
        for (const i of created) {
          expect(existing.has(i), `index ${i} already has a replica`).to.equal(false);
          expect(i).to.be.below(wanted);
        }
        if (c.volume.metadata.deletionTimestamp) expect(created).to.have.length(0);
      }),
      RUNS,
    );
  });

  it('never creates a replica on a node it releases one from, nor on a lost node the scheduler kept', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const plan = planVolume(observed(c));
        const releasedFrom = new Set(ofType(plan.actions, 'releaseWorkItem').map((a) => c.workItems.find((w) => w.metadata.name === a.name)!.spec.nodeName));
        for (const a of ofType(plan.actions, 'createWorkItem')) expect(releasedFrom.has(a.workItem.spec.nodeName), `created on ${a.workItem.spec.nodeName}`).to.equal(false);
      }),
      RUNS,
    );
  });

  it('only releases replicas on lost nodes, and only when allowed or deleting', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const plan = planVolume(observed(c));
        for (const a of ofType(plan.actions, 'releaseWorkItem')) {
          const w = c.workItems.find((x) => x.metadata.name === a.name)!;
          expect(c.views[w.spec.nodeName]!.lost).to.equal(true);
          if (!c.volume.metadata.deletionTimestamp) expect(c.cluster?.spec?.failover?.recreateLostReplicas).not.to.equal(false);
        }
      }),
      RUNS,
    );
  });

  it('never shrinks: capacity and every written size are at least the current capacity', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const plan = planVolume(observed(c));
        const gi = (q: string) => Number(q.replace('Gi', ''));
        const floor = c.volume.status?.capacity ? gi(c.volume.status.capacity) : 0;
        expect(gi(plan.status.capacity!)).to.be.at.least(floor);
        for (const a of [...ofType(plan.actions, 'createWorkItem'), ...ofType(plan.actions, 'updateWorkItem')]) {
          expect(gi(a.workItem.spec.volumeReplica!.size)).to.be.at.least(floor);
        }
      }),
      RUNS,
    );
  });

  it('is deterministic and leaves its input alone', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const before = JSON.stringify(c);
        const a = planVolume(observed(c));
        const b = planVolume(observed(structuredClone(c)));
        expect(b).to.deep.equal(a);
        expect(JSON.stringify(c)).to.equal(before);
      }),
      RUNS,
    );
  });
});

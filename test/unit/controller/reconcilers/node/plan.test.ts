/** planNode: Ready / Unreachable / NotReady from the heartbeat lease, drain progress, allocation. */
import { expect } from 'chai';
import type { Node, NodeStatus } from '../../../../../api/node.js';
import { LEASE_EXPIRED_REASON, nodeView, type LeaseView } from '../../../../../controller/node-health.js';
import { ALLOCATION_WRITE_INTERVAL_MS, planNode, type NodeObserved } from '../../../../../controller/reconcilers/node/plan.js';
import { EARLIER, NOW, NOW_TEXT, NS } from '../builders.js';

function node(status?: NodeStatus, spec: Node['spec'] = {}): Node {
  return { kind: 'Node', metadata: { name: 'n1', namespace: NS, generation: 3 }, spec, ...(status ? { status } : {}) };
}

/** A lease held by n1, last seen changing ageMs ago, 40 s long. */
const lease = (ageMs: number, holder = 'n1'): LeaseView => ({ holder, durationSeconds: 40, observedAtMs: NOW - ageMs });

const observed = (n: Node, l: LeaseView | undefined, p: Partial<NodeObserved> = {}): NodeObserved => ({ node: n, lease: l, instancesOnNode: 0, allocated: {}, leaseDurationSeconds: 40, now: NOW, ...p });

const ready = (status?: NodeStatus) => status?.conditions?.find((c) => c.type === 'Ready');

describe('planNode', () => {
  it('is Ready with Ready=True while the lease is fresh, and requeues just after it would expire', () => {
    const plan = planNode(observed(node(), lease(10_000)));
    expect(plan.status.phase).to.equal('Ready');
    expect(ready(plan.status)).to.include({ status: 'True', reason: 'NodeLeaseRenewed', lastTransitionTime: NOW_TEXT });
    expect(plan.events).to.deep.equal([]);
    expect(plan.requeueAfterMs).to.be.within(30_000, 31_000);
    expect(plan.status.observedGeneration).to.equal(3);
  });

  it('turns Unreachable on expiry: Ready=Unknown NodeLeaseExpired and exactly one NodeUnreachable Warning', () => {
    const wasReady = planNode(observed(node(), lease(10_000))).status;
    const expired = planNode({ ...observed(node(wasReady), lease(40_000)) });
    expect(expired.status.phase).to.equal('Unreachable');
    expect(ready(expired.status)).to.include({ status: 'Unknown', reason: LEASE_EXPIRED_REASON, lastTransitionTime: NOW_TEXT });
    expect(ready(expired.status)!.message).to.contain(`${NS}/node-n1`).and.contain('40s');
    expect(expired.events.map((e) => [e.eventType, e.reason])).to.deep.equal([['Warning', 'NodeUnreachable']]);
    expect(expired.requeueAfterMs).to.equal(undefined);

    const still = planNode(observed(node(expired.status), lease(100_000), { now: NOW + 60_000 }));
    expect(still.events).to.deep.equal([]);
    expect(ready(still.status)!.lastTransitionTime).to.equal(NOW_TEXT);
    expect(still.status.phase).to.equal('Unreachable');
  });

  it('revokes the lease before it marks the node Unreachable, once: not while it is fresh, not when already holderless', () => {
    expect(planNode(observed(node(), lease(10_000))).revokeLease).to.equal(undefined);
    const expired = planNode(observed(node(), lease(40_000)));
    expect(expired.revokeLease).to.equal(true);
    expect(expired.status.phase).to.equal('Unreachable');
    const revoked = planNode(observed(node(expired.status), { ...lease(0), holder: undefined }));
    expect(revoked.revokeLease, 'a holderless lease was revoked already').to.equal(undefined);
    expect(revoked.status.phase, 'and stays Unreachable though the record just changed').to.equal('Unreachable');
    const missing = planNode(observed(node(expired.status), undefined));
    expect(missing.revokeLease, 'a missing lease is revoked by creating it holderless').to.equal(true);
  });

  it('a new leader does not revoke the lease of a node found Unreachable that holds it again: not before it has watched it go unrenewed', () => {
    const unreachable = planNode(observed(node(), lease(40_000))).status;
    const firstSight = planNode(observed(node(unreachable), { ...lease(0), renewalObserved: false }));
    expect(firstSight.revokeLease, 'the node may have taken its lease back and renew it').to.equal(undefined);
    expect(firstSight.status.phase, 'no sign of life yet').to.equal('Unreachable');
    expect(firstSight.requeueAfterMs).to.be.within(40_000, 41_000);
    const renewed = planNode(observed(node(unreachable), { ...lease(0), renewalObserved: true }));
    expect(renewed.status.phase).to.equal('Ready');
    const neverRenewed = planNode(observed(node(unreachable), { ...lease(40_000), renewalObserved: false }));
    expect(neverRenewed.revokeLease, 'watched a whole duration without a renewal').to.equal(true);
  });

  it('a node that takes its revoked lease again (a new term) is Ready again', () => {
    const expired = planNode(observed(node(), lease(40_000))).status;
    const back = planNode(observed(node(expired), lease(0)));
    expect(back.status.phase).to.equal('Ready');
    expect(back.revokeLease).to.equal(undefined);
  });

  it('is seen by nodeView as unreachable, then lost after the grace period', () => {
    const expired = planNode(observed(node({ phase: 'Ready', conditions: [{ type: 'Ready', status: 'True', reason: 'NodeLeaseRenewed', message: '', lastTransitionTime: EARLIER }] }), lease(50_000)));
    const n = node(expired.status);
    const grace = { metadata: { name: 'c1' }, spec: { failureDetection: { failoverGracePeriodSeconds: 60 } } };
    expect(nodeView(n, grace, NOW)).to.deep.include({ unreachable: true, lost: false, lostInMs: 60_000 });
    expect(nodeView(n, grace, NOW + 60_000)).to.deep.include({ unreachable: true, lost: true, lostInMs: 0 });
    expect(nodeView(n, undefined, NOW), 'at once by default').to.deep.include({ unreachable: true, lost: true, lostInMs: 0 });
  });

  it('comes back Ready with a NodeReachable event when heartbeats resume', () => {
    const expired = planNode(observed(node(), lease(45_000))).status;
    const back = planNode(observed(node(expired), lease(1000), { now: NOW + 5000 }));
    expect(back.status.phase).to.equal('Ready');
    expect(ready(back.status)).to.include({ status: 'True', reason: 'NodeLeaseRenewed' });
    expect(back.events.map((e) => [e.eventType, e.reason])).to.deep.equal([['Normal', 'NodeReachable']]);
    const again = planNode(observed(node(back.status), lease(1000), { now: NOW + 6000 }));
    expect(again.events).to.deep.equal([]);
  });

  it('does not announce NodeReachable on first registration', () => {
    expect(planNode(observed(node(), lease(0))).events).to.deep.equal([]);
  });

  it('is NotReady without a lease, and writes no lease condition', () => {
    const plan = planNode(observed(node(), undefined));
    expect(plan.status.phase).to.equal('NotReady');
    expect(plan.events).to.deep.equal([]);
    expect(plan.requeueAfterMs).to.equal(undefined);
  });

  it('treats a node its agent reported Ready, with no lease for a whole lease duration since, as Unreachable (a deleted lease)', () => {
    const readySince = (ms: number) => node({ phase: 'Ready', conditions: [{ type: 'Ready', status: 'True', reason: 'AgentReady', message: '', lastTransitionTime: new Date(NOW - ms).toISOString() }] });
    const young = planNode(observed(readySince(10_000), undefined));
    expect(young.status.phase).to.equal('NotReady');
    expect(young.requeueAfterMs).to.equal(30_100);
    const old = planNode(observed(readySince(41_000), undefined));
    expect(old.status.phase).to.equal('Unreachable');
    expect(ready(old.status)).to.include({ status: 'Unknown', reason: 'NodeLeaseExpired' });
    expect(ready(old.status)!.message).to.contain('no heartbeat lease');
    expect(old.events.map((e) => e.reason)).to.deep.equal(['NodeUnreachable']);
    // Once marked, it stays Unreachable while the lease is still missing.
    expect(planNode(observed(node(old.status), undefined)).status.phase).to.equal('Unreachable');
  });

  it('gives a lease deleted under a node Ready for long a whole lease duration from when it was seen missing (no instant failover)', () => {
    const readyLongAgo = node({ phase: 'Ready', conditions: [{ type: 'Ready', status: 'True', reason: 'NodeLeaseRenewed', message: '', lastTransitionTime: new Date(NOW - 3_600_000).toISOString() }] });
    const justDeleted = planNode(observed(readyLongAgo, undefined, { leaseMissingSince: NOW - 1000 }));
    expect(justDeleted.revokeLease, 'the agent gets the time to create it again').to.equal(undefined);
    expect(justDeleted.status.phase).to.not.equal('Unreachable');
    expect(justDeleted.requeueAfterMs).to.equal(39_100);
    const gone = planNode(observed(readyLongAgo, undefined, { leaseMissingSince: NOW - 40_000 }));
    expect(gone.revokeLease).to.equal(true);
    expect(gone.status.phase).to.equal('Unreachable');
  });

  it('counts a lease held by someone else as expired', () => {
    expect(planNode(observed(node(), lease(0, 'other'))).status.phase).to.equal('Unreachable');
  });

  describe('drain', () => {
    it('is Draining with instancesRemaining and startedAt, then Drained with finishedAt once empty', () => {
      const draining = planNode(observed(node(undefined, { drain: true }), lease(0), { instancesOnNode: 2 }));
      expect(draining.status.phase).to.equal('Draining');
      expect(draining.status.drain).to.deep.equal({ startedAt: NOW_TEXT, instancesRemaining: 2, message: 'moving 2 instance(s) to other nodes' });

      const drained = planNode(observed(node(draining.status, { drain: true }), lease(0), { instancesOnNode: 0, now: NOW + 30_000 }));
      expect(drained.status.phase).to.equal('Drained');
      expect(drained.status.drain).to.deep.equal({ startedAt: NOW_TEXT, finishedAt: '2024-05-01T12:00:30Z', instancesRemaining: 0, message: 'no instances left on the node' });

      const later = planNode(observed(node(drained.status, { drain: true }), lease(0), { now: NOW + 90_000 }));
      expect(later.status.drain!.finishedAt).to.equal('2024-05-01T12:00:30Z');
    });

    it('forgets the drain when spec.drain is cleared', () => {
      const drained = planNode(observed(node(undefined, { drain: true }), lease(0))).status;
      const plan = planNode(observed(node(drained, {}), lease(0)));
      expect(plan.status.phase).to.equal('Ready');
      expect(plan.status.drain).to.equal(undefined);
    });

    it('reports an unreachable draining node as Unreachable (its instances fail over)', () => {
      const plan = planNode(observed(node(undefined, { drain: true }), lease(41_000), { instancesOnNode: 1 }));
      expect(plan.status.phase).to.equal('Unreachable');
      expect(plan.status.drain!.message).to.equal('node is unreachable; its instances fail over');
    });
  });

  it('writes what is allocated and keeps the agent’s own status fields', () => {
    const agent: NodeStatus = { capacity: { cpus: 8, memory: '16Gi', storage: '1Ti' }, agentVersion: '0.1.0', addresses: [{ type: 'InternalIP', address: '10.0.0.1' }] };
    const plan = planNode(observed(node(agent), lease(0), { allocated: { cpus: 2, memory: '1Gi', storage: '10Gi', instances: 2, volumeReplicas: 1 } }));
    expect(plan.status.allocated).to.deep.equal({ cpus: 2, memory: '1Gi', storage: '10Gi', instances: 2, volumeReplicas: 1 });
    expect(plan.status).to.deep.include({ agentVersion: '0.1.0', capacity: agent.capacity, addresses: agent.addresses });
  });

  describe('allocation writes, at most one per interval', () => {
    const two = { cpus: 2, instances: 2 };
    const three = { cpus: 3, instances: 3 };
    // A Ready node whose status already says all else the plan would write.
    const settled = planNode(observed(node(), lease(0), { allocated: two })).status;
    const placed = (allocatedWrittenAt: number | undefined, allocated = three, status = settled) => planNode(observed(node(status), lease(0), { allocated, allocatedWrittenAt }));

    it('writes a change at once when none was written since the controller started, or the interval has passed', () => {
      expect(placed(undefined).status.allocated).to.deep.equal(three);
      expect(placed(NOW - ALLOCATION_WRITE_INTERVAL_MS).status.allocated).to.deep.equal(three);
      expect(placed(NOW, three, { ...settled, allocated: undefined }).status.allocated, 'none written yet').to.deep.equal(three);
    });

    it('keeps the written allocation within the interval when nothing else changed, and comes back when it ends', () => {
      const plan = placed(NOW - 1000);
      expect(plan.status).to.deep.equal(settled);
      expect(plan.requeueAfterMs).to.equal(ALLOCATION_WRITE_INTERVAL_MS - 1000);
    });

    it('carries a changed allocation along with a write that happens anyway', () => {
      const plan = planNode(observed(node(settled, { drain: true }), lease(0), { allocated: three, allocatedWrittenAt: NOW - 1000, instancesOnNode: 3 }));
      expect(plan.status.phase).to.equal('Draining');
      expect(plan.status.allocated).to.deep.equal(three);
    });

    it('has nothing to wait for when the allocation is unchanged', () => {
      const plan = placed(NOW - 1000, two);
      expect(plan.status).to.deep.equal(settled);
      expect(plan.requeueAfterMs).to.be.above(ALLOCATION_WRITE_INTERVAL_MS);
    });
  });

  it('is stable: its own status fed back with the same lease changes nothing', () => {
    const first = planNode(observed(node(), lease(1000)));
    const second = planNode(observed(node(first.status), lease(2000), { now: NOW + 1000 }));
    expect(second.status).to.deep.equal(first.status);
    expect(second.events).to.deep.equal([]);
  });
});

/** leaseFreshness, failoverGraceMs and nodeView: how the controller judges nodes, from its own clock. */
import { expect } from 'chai';
import fc from 'fast-check';
import type { Cluster } from '../../../api/cluster.js';
import type { Node } from '../../../api/node.js';
import { FAILURE_DEFAULTS, LEASE_EXPIRED_REASON, failoverGraceMs, leaseFreshness, nodeView } from '../../../controller/node-health.js';

const NOW = Date.parse('2024-05-01T12:00:00Z');

const withGrace = (seconds: number): Cluster => ({ metadata: { name: 'c1' }, spec: { failureDetection: { failoverGracePeriodSeconds: seconds } } });

function node(o: { phase?: 'Ready' | 'Unreachable' | 'NotReady'; ready?: 'True' | 'False' | 'Unknown'; reason?: string; since?: number; drain?: boolean } = {}): Node {
  return {
    metadata: { name: 'n1', namespace: 'c1' },
    spec: { drain: o.drain },
    status: {
      phase: o.phase ?? 'Ready',
      conditions: o.ready ? [{ type: 'Ready', status: o.ready, reason: o.reason ?? 'NodeLeaseRenewed', message: '', lastTransitionTime: new Date(o.since ?? NOW).toISOString() }] : [],
    },
  };
}

describe('node health', () => {
  describe('leaseFreshness', () => {
    const lease = { holder: 'n1', durationSeconds: 40, observedAtMs: NOW - 10_000 };

    it('is fresh until observedAt + duration, with the ms left', () => {
      expect(leaseFreshness(lease, 'n1', NOW)).to.deep.equal({ fresh: true, remainingMs: 30_000 });
      expect(leaseFreshness(lease, 'n1', NOW + 29_999)).to.deep.equal({ fresh: true, remainingMs: 1 });
      expect(leaseFreshness(lease, 'n1', NOW + 30_000)).to.deep.equal({ fresh: false, remainingMs: 0 });
      expect(leaseFreshness(lease, 'n1', NOW + 99_000)).to.deep.equal({ fresh: false, remainingMs: 0 });
    });

    it('accepts any holder without an identity, and only that holder with one', () => {
      expect(leaseFreshness(lease, undefined, NOW).fresh).to.equal(true);
      expect(leaseFreshness(lease, 'n2', NOW)).to.deep.equal({ fresh: false, remainingMs: 0 });
    });

    it('is not fresh without a lease or a holder', () => {
      expect(leaseFreshness(undefined, undefined, NOW)).to.deep.equal({ fresh: false, remainingMs: 0 });
      expect(leaseFreshness({ ...lease, holder: undefined }, undefined, NOW)).to.deep.equal({ fresh: false, remainingMs: 0 });
      expect(leaseFreshness({ ...lease, holder: '' }, undefined, NOW)).to.deep.equal({ fresh: false, remainingMs: 0 });
    });

    it('never reports negative time left, and fresh exactly when time is left', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 3600 }), fc.integer({ min: -1e7, max: 1e7 }), (duration, offset) => {
          const r = leaseFreshness({ holder: 'x', durationSeconds: duration, observedAtMs: NOW }, 'x', NOW + offset);
          expect(r.remainingMs).to.be.at.least(0);
          expect(r.fresh).to.equal(r.remainingMs > 0);
        }),
        { numRuns: 200 },
      );
    });
  });

  describe('failoverGraceMs', () => {
    it('is the Cluster’s grace period, 0 by default (instances stopped themselves before their node became Unreachable)', () => {
      expect(failoverGraceMs(undefined)).to.equal(FAILURE_DEFAULTS.failoverGracePeriodSeconds * 1000);
      expect(failoverGraceMs({ metadata: {} })).to.equal(0);
      expect(failoverGraceMs(withGrace(5))).to.equal(5000);
      expect(failoverGraceMs(withGrace(0))).to.equal(0);
    });
  });

  describe('nodeView', () => {
    it('treats a missing Node as lost', () => {
      expect(nodeView(undefined, undefined, NOW)).to.deep.equal({ exists: false, unreachable: true, lost: true, lostInMs: 0, draining: false });
    });

    it('treats a Ready node as reachable, never to be lost', () => {
      expect(nodeView(node({ ready: 'True' }), undefined, NOW)).to.deep.equal({ exists: true, unreachable: false, lost: false, lostInMs: Infinity, draining: false });
    });

    it('reports draining from spec.drain', () => {
      expect(nodeView(node({ ready: 'True', drain: true }), undefined, NOW).draining).to.equal(true);
    });

    it('counts the grace period from when Ready flipped on lease expiry', () => {
      const n = node({ phase: 'Unreachable', ready: 'Unknown', reason: LEASE_EXPIRED_REASON, since: NOW - 20_000 });
      expect(nodeView(n, withGrace(30), NOW)).to.deep.include({ unreachable: true, lost: false, lostInMs: 10_000 });
      expect(nodeView(n, withGrace(30), NOW + 10_000)).to.deep.include({ unreachable: true, lost: true, lostInMs: 0 });
      expect(nodeView(n, undefined, NOW), 'no grace by default').to.deep.include({ lost: true, lostInMs: 0 });
    });

    it('sees the lease-expired condition as unreachable even before the phase is written', () => {
      const n = node({ phase: 'Ready', ready: 'Unknown', reason: LEASE_EXPIRED_REASON, since: NOW });
      expect(nodeView(n, withGrace(10), NOW)).to.deep.include({ unreachable: true, lost: false, lostInMs: 10_000 });
    });

    it('does not call a NotReady node (no lease yet, other reasons) unreachable', () => {
      expect(nodeView(node({ phase: 'NotReady', ready: 'False', reason: 'KubeletNotReady' }), undefined, NOW).unreachable).to.equal(false);
      expect(nodeView(node({ phase: 'NotReady' }), undefined, NOW).unreachable).to.equal(false);
    });

    it('counts an Unreachable phase without a Ready condition as unreachable from now', () => {
      expect(nodeView(node({ phase: 'Unreachable' }), withGrace(15), NOW)).to.deep.include({ unreachable: true, lost: false, lostInMs: 15_000 });
    });

    it('is lost exactly when unreachable with no time left, whatever the grace and age', () => {
      fc.assert(
        fc.property(fc.integer({ min: 0, max: 600 }), fc.integer({ min: 0, max: 1_000_000 }), (grace, age) => {
          const v = nodeView(node({ phase: 'Unreachable', ready: 'Unknown', reason: LEASE_EXPIRED_REASON, since: NOW - age }), withGrace(grace), NOW);
          expect(v.lost).to.equal(v.lostInMs === 0);
          expect(v.lostInMs).to.equal(Math.max(0, grace * 1000 - age));
        }),
        { numRuns: 200 },
      );
    });
  });
});

import { expect } from 'chai';
import { isSchedulable, matchesNodeSelector, nodeEligibility, REASON } from '../../../../controller/scheduler/index.js';
import { node, type NodeOptions } from './builders.js';

describe('scheduler: node eligibility', () => {
  it('accepts a Ready node whose Ready condition is True', () => {
    expect(nodeEligibility(node('a'))).to.deep.equal({ eligible: true });
    expect(isSchedulable(node('a'))).to.equal(true);
  });

  const cases: [string, NodeOptions, string][] = [
    ['Ready condition False', { ready: 'False' }, REASON.notReady],
    ['Ready condition Unknown', { ready: 'Unknown' }, REASON.notReady],
    ['no Ready condition', { ready: 'absent' }, REASON.notReady],
    ['phase NotReady', { phase: 'NotReady' }, REASON.notReady],
    ['phase Unreachable', { phase: 'Unreachable' }, REASON.unreachable],
    ['phase Draining', { phase: 'Draining' }, REASON.unschedulable],
    ['phase Drained', { phase: 'Drained' }, REASON.unschedulable],
    ['cordoned (spec.unschedulable)', { unschedulable: true }, REASON.unschedulable],
    ['draining (spec.drain)', { drain: true }, REASON.unschedulable],
    ['being deleted', { deleting: true }, REASON.beingDeleted],
    ['cordoned and unreachable: the cordon is named', { unschedulable: true, phase: 'Unreachable' }, REASON.unschedulable],
    ['deleted and cordoned: the deletion is named', { deleting: true, unschedulable: true }, REASON.beingDeleted],
  ];
  for (const [title, options, reason] of cases) {
    it(`rejects a node: ${title}`, () => {
      expect(nodeEligibility(node('a', options))).to.deep.equal({ eligible: false, reason });
      expect(isSchedulable(node('a', options))).to.equal(false);
    });
  }

  it('rejects a node without status (just registered, never reported)', () => {
    expect(nodeEligibility({ metadata: { name: 'a' } })).to.deep.equal({ eligible: false, reason: REASON.notReady });
  });
});

describe('scheduler: matchesNodeSelector', () => {
  const labelled = node('a', { labels: { zone: 'z1', disk: 'ssd' } });

  it('matches every node with an absent or empty selector', () => {
    expect(matchesNodeSelector(labelled, undefined)).to.equal(true);
    expect(matchesNodeSelector(labelled, {})).to.equal(true);
    expect(matchesNodeSelector(node('b'), {})).to.equal(true);
  });

  it('needs every key with the same value', () => {
    expect(matchesNodeSelector(labelled, { zone: 'z1' })).to.equal(true);
    expect(matchesNodeSelector(labelled, { zone: 'z1', disk: 'ssd' })).to.equal(true);
    expect(matchesNodeSelector(labelled, { zone: 'z2' })).to.equal(false);
    expect(matchesNodeSelector(labelled, { zone: 'z1', gpu: 'yes' })).to.equal(false);
    expect(matchesNodeSelector(node('b'), { zone: 'z1' })).to.equal(false);
  });

  it('does not mistake inherited object properties for labels', () => {
    expect(matchesNodeSelector(node('b'), { constructor: 'function Object() { [native code] }' })).to.equal(false);
  });
});

import { expect } from 'chai';
import { noNodesMessage, tallyReasons, unschedulableMessage } from '../../../../controller/scheduler/unschedulable-message.js';

describe('scheduler: unschedulable messages', () => {
  it('reads like Kubernetes: available/total, then counts with reasons', () => {
    expect(unschedulableMessage(0, 3, { 'insufficient memory': 2, unschedulable: 1 })).to.equal(
      '0/3 nodes are available: 2 insufficient memory, 1 unschedulable.',
    );
  });

  it('lists reasons by count, most frequent first, then by text', () => {
    const message = unschedulableMessage(1, 7, { 'not ready': 1, 'insufficient cpu': 1, unschedulable: 3, excluded: 1 });
    expect(message).to.equal('1/7 nodes are available: 3 unschedulable, 1 excluded, 1 insufficient cpu, 1 not ready.');
  });

  it('appends hints as sentences', () => {
    expect(unschedulableMessage(0, 1, { 'not the pinned node': 1 }, ['Pin is wrong.', 'Fix it.'])).to.equal(
      '0/1 nodes are available: 1 not the pinned node. Pin is wrong. Fix it.',
    );
  });

  it('drops the colon when no node was rejected', () => {
    expect(unschedulableMessage(2, 2, {}, ['1 of 3 replicas is still missing.'])).to.equal('2/2 nodes are available. 1 of 3 replicas is still missing.');
  });

  it('says when a cluster has no nodes', () => {
    expect(noNodesMessage('prod')).to.equal('0/0 nodes are available: no nodes registered in cluster prod.');
    expect(noNodesMessage('prod', ['Hint.'])).to.equal('0/0 nodes are available: no nodes registered in cluster prod. Hint.');
  });

  it('tallies reasons in message order', () => {
    const tally = tallyReasons(['b', 'a', 'c', 'b', 'c', 'c', 'd']);
    expect(tally).to.deep.equal({ c: 3, b: 2, a: 1, d: 1 });
    expect(Object.keys(tally)).to.deep.equal(['c', 'b', 'a', 'd']);
    expect(tallyReasons([])).to.deep.equal({});
  });
});

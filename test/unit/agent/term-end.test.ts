/** The end of the node's term cancels the operations planned in it that may start or resume a guest, and only those. */
import { expect } from 'chai';
import { cancelGuestOperations, type RunningOperation } from '../../../agent/reconciler.js';

describe("the end of the node's term", () => {
  it('cancels in-flight ensures of instances (a start waiting on a mount would launch in a later term), not fence stops nor volume work', () => {
    const op = (o: Partial<RunningOperation>): RunningOperation => ({ abort: new AbortController(), ...o });
    const operations = new Map<string, RunningOperation>([
      ['c1/web.n1', op({ mayRunGuest: true })],
      ['c1/db.n1', op({ fence: true })],
      ['c1/data-0.n1', op({})],
    ]);
    cancelGuestOperations(operations);
    expect([...operations].map(([k, o]) => [k, o.abort.signal.aborted])).to.deep.equal([
      ['c1/web.n1', true],
      ['c1/db.n1', false],
      ['c1/data-0.n1', false],
    ]);
    expect(String(operations.get('c1/web.n1')!.abort.signal.reason)).to.contain("term ended");
  });
});

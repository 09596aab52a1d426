/** The node lease's renewal cadence: counted from each send, twice as often while renewals fail. */
import { expect } from 'chai';
import { nextRenewalDelayMs } from '../../../../agent/fencing/node-fence.js';

describe('node lease renewal cadence', () => {
  const interval = 2_000;

  it('renews one interval after the last renewal was sent, however long its answer took', () => {
    expect(nextRenewalDelayMs(true, 0, 50, interval)).to.equal(1_950);
    expect(nextRenewalDelayMs(true, 0, 1_900, interval)).to.equal(100);
  });

  it('retries half an interval after a failed attempt was sent, at once after one that timed out', () => {
    expect(nextRenewalDelayMs(false, 0, 10, interval)).to.equal(990);
    expect(nextRenewalDelayMs(false, 0, interval, interval)).to.equal(0);
  });
});

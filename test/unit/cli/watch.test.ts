import { expect } from 'chai';
import { QUICK_END_MS, REWATCH_DELAY_MS, rewatchDelay } from '../../../cli/client/watch.js';

describe('rewatchDelay (waitFor after a watch round ended)', () => {
  it('pauses a second after a watch that ended at once (a 403, a server going down), so waitFor does not spin', () => {
    expect(rewatchDelay(0, 60_000)).to.equal(REWATCH_DELAY_MS);
    expect(rewatchDelay(QUICK_END_MS - 1, 60_000)).to.equal(REWATCH_DELAY_MS);
  });

  it('lists again at once after a watch that lasted', () => expect(rewatchDelay(QUICK_END_MS, 60_000)).to.equal(0));

  it('never pauses past the deadline', () => {
    expect(rewatchDelay(0, 300)).to.equal(300);
    expect(rewatchDelay(0, -5)).to.equal(0);
  });
});

/** EventSpamFilter: a token bucket per object, as client-go's spam filter — pure. */
import { expect } from 'chai';
import { EventSpamFilter, SPAM_BURST, SPAM_REFILL_MS } from '../../../runtime/event-spam-filter.js';

describe('EventSpamFilter', () => {
  it('allows a burst of 25 Events about one object, then one per 5 minutes', () => {
    const f = new EventSpamFilter();
    const allowed = Array.from({ length: 30 }, () => f.allow('pod-a', 0)).filter(Boolean).length;
    expect(allowed).to.equal(SPAM_BURST);
    expect(f.allow('pod-a', SPAM_REFILL_MS - 1), 'not quite a token yet').to.equal(false);
    expect(f.allow('pod-a', SPAM_REFILL_MS)).to.equal(true);
    expect(f.allow('pod-a', SPAM_REFILL_MS)).to.equal(false);
  });

  it('keeps a bucket per object: one object\'s storm does not silence another', () => {
    const f = new EventSpamFilter();
    for (let i = 0; i < 40; i++) f.allow('noisy', 0);
    expect(f.allow('quiet', 0)).to.equal(true);
  });

  it('refills to the burst, no further, after a long quiet spell', () => {
    const f = new EventSpamFilter();
    f.allow('a', 0);
    const later = 100 * SPAM_REFILL_MS;
    expect(Array.from({ length: 30 }, () => f.allow('a', later)).filter(Boolean).length).to.equal(SPAM_BURST);
  });
});

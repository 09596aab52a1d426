/** LeaseObservations: when a lease was seen changing, and since when one was seen missing. */
import { expect } from 'chai';
import { LeaseObservations } from '../../../controller/lease-observations.js';
import type { LeaseObject } from '../../../controller/cache.js';

const lease = (renewTime: string): LeaseObject => ({ metadata: { namespace: 'c', name: 'node-n1' }, spec: { holderIdentity: 'n1', renewTime, leaseDurationSeconds: 10 } }) as LeaseObject;

describe('LeaseObservations', () => {
  it('counts a missing lease from its deletion, then from the first look, and forgets it once it is back', () => {
    const o = new LeaseObservations();
    o.view(lease('t1'), 1_000);
    o.deleted('c', 'node-n1', 5_000);
    expect(o.missingSince('c', 'node-n1', 9_000), 'from the deletion').to.equal(5_000);
    expect(o.view(lease('t2'), 9_500)).to.include({ observedAtMs: 9_500, renewalObserved: false });
    expect(o.missingSince('c', 'node-n1', 12_000), 'back, then missing again: from this look').to.equal(12_000);
    expect(o.missingSince('c', 'node-n1', 13_000)).to.equal(12_000);
    o.forget('c', 'node-n1');
    expect(o.missingSince('c', 'node-n1', 20_000)).to.equal(20_000);
  });
});

/** FirstSeen: when the controller first saw a value in a slot, on its own clock. */
import { expect } from 'chai';
import { FirstSeen } from '../../../controller/first-seen.js';

describe('FirstSeen', () => {
  it('keeps the time a value was first seen in its slot, and starts again when the value changes', () => {
    const s = new FirstSeen();
    expect(s.at('v/join/0', '2026-11-26T13:00:00Z', 1000)).to.equal(1000);
    expect(s.at('v/join/0', '2026-11-26T13:00:00Z', 9000)).to.equal(1000);
    expect(s.at('v/join/1', '2026-11-26T13:00:00Z', 9000), 'slots are separate').to.equal(9000);
    expect(s.at('v/join/0', '2026-11-26T13:05:00Z', 12000), 'a new value').to.equal(12000);
    expect(s.at('v/join/0', '2026-11-26T13:05:00Z', 20000)).to.equal(12000);
  });
});

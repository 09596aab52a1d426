/** FirstSeen: when the controller first saw a value in a slot, on its own clock. */
import { expect } from 'chai';
import { FirstSeen } from '../../../controller/first-seen.js';

const NOW = Date.parse('2026-11-26T12:00:00Z');
const at = (iso: string) => Date.parse(iso);

describe('FirstSeen', () => {
  it('a value there at the first look counts from what it claims, never from the future', () => {
    const s = new FirstSeen();
    expect(s.at('v/join/0', 'a', NOW, at('2026-11-26T11:59:50Z')), 'a settled join stays settled after a restart').to.equal(at('2026-11-26T11:59:50Z'));
    expect(s.at('v/join/1', 'b', NOW, at('2026-11-26T13:00:00Z')), 'a clock an hour ahead').to.equal(NOW);
    expect(s.at('v/join/2', 'c', NOW, NaN), 'no readable time').to.equal(NOW);
  });

  it('a value that changes while watched counts from then; an unchanged one keeps its time', () => {
    const s = new FirstSeen();
    s.at('v/join/0', 'a', NOW, at('2026-11-26T11:59:50Z'));
    expect(s.at('v/join/0', 'a', NOW + 9000, NaN)).to.equal(at('2026-11-26T11:59:50Z'));
    expect(s.at('v/join/0', 'b', NOW + 12000, at('2026-11-26T10:00:00Z')), 'a new value, whatever it claims').to.equal(NOW + 12000);
    expect(s.at('v/join/0', 'b', NOW + 20000, NaN)).to.equal(NOW + 12000);
    expect(s.at('v/join/1', 'b', NOW + 20000, NOW + 20000), 'slots are separate').to.equal(NOW + 20000);
  });

  it('forgets the slots of an object that is gone, and only those', () => {
    const s = new FirstSeen();
    s.at('ns/v/uid1/join/0', 'a', NOW, NOW - 5000);
    s.at('ns/v2/uid2/join/0', 'a', NOW, NOW - 5000);
    s.forget('ns/v/');
    expect(s.at('ns/v/uid1/join/0', 'a', NOW + 1000, NOW + 1000), 'seen anew').to.equal(NOW + 1000);
    expect(s.at('ns/v2/uid2/join/0', 'a', NOW + 1000, NOW + 1000), 'another Volume whose name starts alike').to.equal(NOW - 5000);
  });
});

/** Operation ids: time, parent pid, child pid and a random part, readable back. */
import { expect } from 'chai';
import fc from 'fast-check';
import { newOperationId, parseOperationId } from '../../../agent/operations/operation-id.js';

describe('operation ids', () => {
  it('reads as time-parent-child-random', () => {
    const id = newOperationId(812, 4411, new Date('2024-11-22T04:45:01.123Z'), '9f3ac2e1');
    expect(id).to.equal('20241122T044501.123Z-812-4411-9f3ac2e1');
    expect(parseOperationId(id)).to.deep.equal({ time: new Date('2024-11-22T04:45:01.123Z'), parentPid: 812, childPid: 4411, random: '9f3ac2e1' });
  });

  it('round-trips any time and pids, and differs between two ids of the same moment', () => {
    fc.assert(
      fc.property(fc.date({ min: new Date('2000-01-01'), max: new Date('2999-12-31'), noInvalidDate: true }), fc.nat(), fc.nat(), (time, parent, child) => {
        const parsed = parseOperationId(newOperationId(parent, child, time));
        expect(parsed?.time.getTime()).to.equal(time.getTime());
        expect([parsed?.parentPid, parsed?.childPid]).to.deep.equal([parent, child]);
      }),
    );
    const now = new Date();
    expect(newOperationId(1, 2, now)).to.not.equal(newOperationId(1, 2, now));
  });

  it('rejects what is not an operation id', () => {
    for (const bad of ['', 'op-1', '20241122T044501.123Z-1-2-XYZ', '20241399T999999.000Z-1-2-9f3ac2e1']) expect(parseOperationId(bad), bad).to.equal(undefined);
  });
});

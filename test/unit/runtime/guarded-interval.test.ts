/** guardedInterval: a tick that throws is reported and the interval goes on; the process is not ended. */
import { expect } from 'chai';
import { guardedInterval } from '../../../runtime/guarded-interval.js';

describe('guardedInterval', () => {
  it('hands a thrown error to onError and keeps ticking', async () => {
    const errors: string[] = [];
    let ticks = 0;
    const timer = guardedInterval(() => {
      ticks++;
      throw new Error(`tick ${ticks}`);
    }, 5, (err) => errors.push((err as Error).message));
    await new Promise((r) => setTimeout(r, 60));
    clearInterval(timer);
    expect(ticks).to.be.at.least(3);
    expect(errors.slice(0, 3)).to.deep.equal(['tick 1', 'tick 2', 'tick 3']);
    expect(timer.hasRef(), 'never keeps the process alive by itself').to.equal(false);
  });
});

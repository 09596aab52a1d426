/** The dead-mount watch reports a mount once until it is seen alive again: retries go through the work queue's backoff. */
import { expect } from 'chai';
import { newlyDead } from '../../../../agent/gluster/mount-watch.js';

describe('gluster mount watch', () => {
  it('reports a dead mount at the first look only, and again once it died anew after being alive', () => {
    const reported = new Set<string>();
    const a = { namespace: 'c', volumeName: 'a' };
    const b = { namespace: 'c', volumeName: 'b' };
    expect(newlyDead(reported, [a])).to.deep.equal([a]);
    expect(newlyDead(reported, [a]), 'still dead: its users retry with backoff, not every look').to.deep.equal([]);
    expect(newlyDead(reported, [a, b])).to.deep.equal([b]);
    expect(newlyDead(reported, [b]), 'a came back').to.deep.equal([]);
    expect(newlyDead(reported, [a, b]), 'a died again').to.deep.equal([a]);
  });
});

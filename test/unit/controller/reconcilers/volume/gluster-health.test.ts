/** glusterDegradation, hasQuorum and splitBrainCounts: AFR's quorum rules, split-brain, and the worst finding first — pure. */
import { expect } from 'chai';
import fc from 'fast-check';
import { glusterDegradation, hasQuorum, splitBrainCounts, type BrickHealth } from '../../../../../controller/reconcilers/volume/gluster-health.js';

const brick = (index: number, up: boolean, pendingHeals = 0): BrickHealth => ({ index, nodeName: `n${index}`, up, pendingHeals });

describe('gluster volume health', () => {
  it('has quorum with more than half of the bricks up, or exactly half including the first', () => {
    expect(hasQuorum([brick(0, true), brick(1, true), brick(2, false)])).to.equal(true);
    expect(hasQuorum([brick(0, true), brick(1, false), brick(2, false)])).to.equal(false);
    expect(hasQuorum([brick(0, true), brick(1, false)])).to.equal(true);
    expect(hasQuorum([brick(0, false), brick(1, true)])).to.equal(false);
    expect(hasQuorum([brick(0, true)])).to.equal(true);
    expect(hasQuorum([brick(0, false)])).to.equal(false);
  });

  it('follows cluster.quorum-type fixed (quorum-count bricks) and none (any brick)', () => {
    const one = [brick(0, false), brick(1, true), brick(2, false)];
    expect(hasQuorum(one, { type: 'fixed', count: 1 })).to.equal(true);
    expect(hasQuorum(one, { type: 'fixed', count: 2 })).to.equal(false);
    expect(hasQuorum(one, { type: 'none' })).to.equal(true);
    expect(hasQuorum([brick(0, false)], { type: 'none' })).to.equal(false);
  });

  it('finds split-brain where two bricks blame each other for one file, not where blame goes one way', () => {
    const owed = new Map([
      [0, [{ gfid: 'a', bricks: [1] }, { gfid: 'b', bricks: [2] }]],
      [1, [{ gfid: 'a', bricks: [0, 2] }]],
      [2, [{ gfid: 'c', bricks: [0] }]],
    ]);
    expect([...splitBrainCounts(owed)]).to.deep.equal([[0, 1], [1, 1]]);
    expect(splitBrainCounts(new Map([[0, [{ gfid: 'a', bricks: [1] }]], [1, []]])).size).to.equal(0);
  });

  it('says SplitBrain after quorum and before offline bricks, with how to resolve it', () => {
    const d = glusterDegradation([{ ...brick(0, true), splitBrain: 2 }, { ...brick(1, true), splitBrain: 2 }, brick(2, false)]);
    expect(d?.reason).to.equal('SplitBrain');
    expect(d?.message).to.include('2 files are in split-brain between brick 0 on node n0 and brick 1 on node n1').and.include('cluster.favorite-child-policy');
  });

  it('says QuorumLost with the bricks to bring back, before anything else', () => {
    const d = glusterDegradation([brick(0, true, 5), brick(1, false), brick(2, false)]);
    expect(d?.reason).to.equal('QuorumLost');
    expect(d?.message).to.include('only 1 of 3 bricks run').and.include('brick 1 on node n1, brick 2 on node n2').and.include('restart the node or its agent');
  });

  it('says BrickOffline with quorum kept, naming the brick and why', () => {
    const d = glusterDegradation([brick(0, true, 3), { ...brick(1, false), message: 'node n1 is unreachable' }, brick(2, true)]);
    expect(d?.reason).to.equal('BrickOffline');
    expect(d?.message).to.include('brick 1 on node n1 is offline (node n1 is unreachable)').and.include('healed onto it when it returns');
  });

  it('says HealPending with the count per brick while every brick runs, and nothing once the count is 0', () => {
    const d = glusterDegradation([brick(0, true, 3), brick(1, true, 0), brick(2, true, 2)]);
    expect(d).to.deep.equal({ reason: 'HealPending', message: '5 entries wait to be healed (3 on brick 0, 2 on brick 2); the self-heal daemons copy them, and the count falls to 0 when done' });
    expect(glusterDegradation([brick(0, true), brick(1, true), brick(2, true)])).to.equal(undefined);
  });

  it('property: healthy exactly when every brick is up with nothing to heal; QuorumLost exactly without quorum', () => {
    fc.assert(fc.property(fc.array(fc.record({ up: fc.boolean(), heals: fc.nat(3) }), { minLength: 1, maxLength: 3 }), (xs) => {
      const bricks = xs.map((x, i) => brick(i, x.up, x.heals));
      const d = glusterDegradation(bricks);
      expect(d === undefined).to.equal(bricks.every((b) => b.up && b.pendingHeals === 0));
      expect(d?.reason === 'QuorumLost').to.equal(!hasQuorum(bricks));
    }));
  });
});

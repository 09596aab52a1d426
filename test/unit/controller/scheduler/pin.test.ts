import { expect } from 'chai';
import { pinnedNode } from '../../../../controller/scheduler/index.js';
import { instance } from './builders.js';

describe('scheduler: pinnedNode', () => {
  it('is unset without placement.nodeName or migrateTo', () => {
    expect(pinnedNode(instance('i'))).to.equal(undefined);
  });

  it('is spec.placement.nodeName', () => {
    expect(pinnedNode(instance('i', { placement: { nodeName: 'a' } }))).to.deep.equal({ nodeName: 'a', field: 'spec.placement.nodeName' });
  });

  it('is a pending spec.migrateTo, which wins over placement.nodeName', () => {
    const i = instance('i', { migrateTo: 'b', placement: { nodeName: 'a' } }, { migration: { targetNode: 'b', phase: 'Transferring' } });
    expect(pinnedNode(i)).to.deep.equal({ nodeName: 'b', field: 'spec.migrateTo' });
    expect(pinnedNode(instance('j', { migrateTo: 'b' }))).to.deep.equal({ nodeName: 'b', field: 'spec.migrateTo' });
  });

  it('ignores a migrateTo already carried out (Completed or Failed), as the CRD says', () => {
    for (const phase of ['Completed', 'Failed'] as const) {
      const done = { migration: { targetNode: 'b', phase } };
      expect(pinnedNode(instance('i', { migrateTo: 'b' }, done))).to.equal(undefined);
      expect(pinnedNode(instance('i', { migrateTo: 'b', placement: { nodeName: 'a' } }, done))).to.deep.equal({
        nodeName: 'a',
        field: 'spec.placement.nodeName',
      });
    }
  });

  it('still pins to a new migrateTo after a migration to another node finished', () => {
    const i = instance('i', { migrateTo: 'c' }, { migration: { targetNode: 'b', phase: 'Completed' } });
    expect(pinnedNode(i)).to.deep.equal({ nodeName: 'c', field: 'spec.migrateTo' });
  });
});

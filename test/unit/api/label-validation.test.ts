import { expect } from 'chai';
import { labelKeyErrors, labelValueErrors } from '../../../api/label-validation.js';

describe('label key and value validation', () => {
  it('accepts valid keys and values', () => {
    for (const k of ['a', 'A1', 'a.b_c-d', 'example.com/x', `${'a'.repeat(63)}`, `${'d'.repeat(253)}/k`]) {
      expect(labelKeyErrors(k), k).to.deep.equal([]);
    }
    for (const v of ['', 'a', 'A.b_c-1', 'v'.repeat(63)]) expect(labelValueErrors(v), v).to.deep.equal([]);
  });

  it('rejects invalid keys and values', () => {
    expect(labelKeyErrors('/k')).to.deep.equal(['prefix part must be non-empty']);
    expect(labelKeyErrors('a/')[0]).to.equal('name part must be non-empty');
    expect(labelKeyErrors('a'.repeat(64))[0]).to.equal('name part must be no more than 63 bytes');
    expect(labelKeyErrors(`${'d'.repeat(254)}/k`)[0]).to.equal('prefix part must be no more than 253 bytes');
    expect(labelKeyErrors('a/b/c')[0]).to.match(/^a valid label key must consist/);
    expect(labelValueErrors('v'.repeat(64))[0]).to.equal('must be no more than 63 bytes');
    expect(labelValueErrors('-v')).to.have.length(1);
  });
});

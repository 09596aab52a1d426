import { expect } from 'chai';
import type { ObjectMeta } from '../../../../apiserver/storage/codec.js';
import { validateMetadata, validateQualifiedName, type NameRule } from '../../../../apiserver/validation/metadata.js';

/** The fields with errors, for metadata `meta` under `rule`. */
const fields = (meta: ObjectMeta, rule: NameRule = 'dns1123-subdomain') => validateMetadata(meta, rule).map((c) => c.field);

describe('validateMetadata', () => {
  describe('names', () => {
    // [name, valid as a DNS-1123 subdomain, valid as a DNS-1123 label]
    const cases: [name: string, subdomain: boolean, label: boolean][] = [
      ['web', true, true],
      ['a', true, true],
      ['0', true, true],
      ['123-abc', true, true],
      ['my-name', true, true],
      ['web.example.com', true, false],
      ['a'.repeat(63), true, true],
      ['a'.repeat(64), true, false],
      [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(61)}`, true, false], // 253 chars
      [`${'a'.repeat(63)}.${'b'.repeat(63)}.${'c'.repeat(63)}.${'d'.repeat(62)}`, false, false], // 254 chars
      ['Web', false, false],
      ['-web', false, false],
      ['web-', false, false],
      ['.web', false, false],
      ['web.', false, false],
      ['we..b', false, false],
      ['we_b', false, false],
      ['we b', false, false],
      ['wéb', false, false],
    ];
    for (const [name, subdomain, label] of cases) {
      const shown = name.length > 20 ? `${name.slice(0, 8)}…(${name.length} chars)` : JSON.stringify(name);
      it(`${shown} is ${subdomain ? 'a' : 'not a'} subdomain and ${label ? 'a' : 'not a'} label`, () => {
        expect(fields({ name }, 'dns1123-subdomain')).to.deep.equal(subdomain ? [] : ['metadata.name']);
        expect(fields({ name }, 'dns1123-label').length > 0).to.equal(!label);
        expect(fields({ name }, 'dns1123-label').every((f) => f === 'metadata.name')).to.equal(true);
      });
    }

    it('says how long a name may be, and what it must look like', () => {
      const messages = validateMetadata({ name: 'A'.repeat(64) }, 'dns1123-label').map((c) => c.message);
      expect(messages).to.have.length(2);
      expect(messages[0]).to.match(/must be no more than 63 characters$/);
      expect(messages[1]).to.match(/a lowercase RFC 1123 label must consist of/);
      expect(validateMetadata({ name: 'Web' }, 'dns1123-subdomain')[0]).to.deep.include({ reason: 'FieldValueInvalid', field: 'metadata.name' });
    });

    it('requires a name unless generateName is set', () => {
      expect(validateMetadata({}, 'dns1123-subdomain')).to.deep.equal([
        { reason: 'FieldValueRequired', message: 'Required value: name or generateName is required', field: 'metadata.name' },
      ]);
      expect(fields({ name: '' })).to.deep.equal(['metadata.name']);
      expect(fields({ generateName: 'web-' })).to.deep.equal([]);
    });
  });

  describe('labels', () => {
    const cases: [labels: unknown, errorFields: string[]][] = [
      [{ app: 'web' }, []],
      [{ 'cairn.dev/role': 'db', 'a.b-c_d': 'A.b-C_1' }, []],
      [{ app: '' }, []],
      [{ app: 'v'.repeat(63) }, []],
      [{ app: 'v'.repeat(64) }, ['metadata.labels']],
      [{ app: '-web' }, ['metadata.labels']],
      [{ app: 'web!' }, ['metadata.labels']],
      [{ app: 'a b' }, ['metadata.labels']],
      [{ app: 3 }, ['metadata.labels.app']],
      [{ 'bad key': 'v' }, ['metadata.labels']],
      [{ ['k'.repeat(64)]: 'v' }, ['metadata.labels']],
      [{ 'Cairn.dev/role': 'v' }, ['metadata.labels']],
      [{ '/role': 'v' }, ['metadata.labels']],
      [{ 'cairn.dev/': 'v' }, ['metadata.labels']],
      [{ 'a/b/c': 'v' }, ['metadata.labels']],
      [{ [`${'p'.repeat(254)}/x`]: 'v' }, ['metadata.labels']],
      [['app=web'], ['metadata.labels']],
      ['app=web', ['metadata.labels']],
      [null, []],
    ];
    for (const [labels, errorFields] of cases) {
      const shown = JSON.stringify(labels).length > 60 ? `${JSON.stringify(labels).slice(0, 30)}…` : JSON.stringify(labels);
      it(`${shown} → ${errorFields.length ? errorFields.join(', ') : 'valid'}`, () => {
        expect(fields({ name: 'x', labels: labels as Record<string, string> })).to.deep.equal(errorFields);
      });
    }
  });

  describe('annotations', () => {
    const cases: [annotations: unknown, errorFields: string[]][] = [
      [{ 'kubectl.kubernetes.io/last-applied-configuration': '{"a": "any text at all!"}' }, []],
      [{ note: 'x'.repeat(10_000) }, []],
      [{ note: '' }, []],
      [{ 'bad key': 'v' }, ['metadata.annotations']],
      [{ note: 1 }, ['metadata.annotations.note']],
      [{ note: 'x'.repeat(256 * 1024) }, ['metadata.annotations']],
      [[], ['metadata.annotations']],
    ];
    for (const [annotations, errorFields] of cases) {
      const shown = JSON.stringify(annotations).length > 60 ? `${JSON.stringify(annotations).slice(0, 30)}…` : JSON.stringify(annotations);
      it(`${shown} → ${errorFields.length ? errorFields.join(', ') : 'valid'}`, () => {
        expect(fields({ name: 'x', annotations: annotations as Record<string, string> })).to.deep.equal(errorFields);
      });
    }

    // Regression (was a bug): apiserver/validation/metadata.ts validateStringMap limits annotations by
    // JSON.stringify(map).length (UTF-16 code units of the JSON text, braces and quotes included),
    // while kube (TotalAnnotationSizeLimitB) sums len(key)+len(value) in bytes, as the message
    // "must have at most 262144 bytes" says. Key "a" + 262143 ASCII bytes (262144 total) is valid in
    // kube but rejected here; 90000 "€" (270000 UTF-8 bytes) is invalid in kube but accepted here.
    it('limits the total size of keys and values to 256 KiB of bytes, like kube', () => {
      expect(fields({ name: 'x', annotations: { a: 'x'.repeat(256 * 1024 - 1) } })).to.deep.equal([]);
      expect(fields({ name: 'x', annotations: { a: '€'.repeat(90_000) } })).to.deep.equal(['metadata.annotations']);
    });
  });

  describe('finalizers', () => {
    const cases: [finalizers: unknown, errorFields: string[]][] = [
      [['cairn.dev/cleanup', 'foregroundDeletion'], []],
      [[], []],
      [['bad finalizer'], ['metadata.finalizers[0]']],
      [['ok', 'cairn.dev/x', '/x'], ['metadata.finalizers[2]']],
      [[7], ['metadata.finalizers[0]']],
      ['cairn.dev/cleanup', ['metadata.finalizers']],
    ];
    for (const [finalizers, errorFields] of cases) {
      it(`${JSON.stringify(finalizers)} → ${errorFields.length ? errorFields.join(', ') : 'valid'}`, () => {
        expect(fields({ name: 'x', finalizers: finalizers as string[] })).to.deep.equal(errorFields);
      });
    }
  });

  it('collects errors from every part', () => {
    expect(fields({ name: 'Bad', labels: { app: '-' }, annotations: { 'x y': '' }, finalizers: ['a b'] })).to.deep.equal([
      'metadata.name',
      'metadata.labels',
      'metadata.annotations',
      'metadata.finalizers[0]',
    ]);
  });
});

describe('validateQualifiedName', () => {
  it('reports the key under the given path with kube\'s wording', () => {
    expect(validateQualifiedName('ok.name', 'p')).to.deep.equal([]);
    const [cause] = validateQualifiedName('no good', 'metadata.labels');
    expect(cause).to.deep.include({ reason: 'FieldValueInvalid', field: 'metadata.labels' });
    expect(cause!.message).to.match(/^Invalid value: "no good": name part must consist of alphanumeric characters/);
  });
});

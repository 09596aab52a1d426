import { expect } from 'chai';
import fc from 'fast-check';
import { escapeFieldValue, parseFieldSelector } from '../../../../apiserver/selectors/fields.js';
import { SelectorError } from '../../../../api/selector-error.js';

function parseError(s: string): SelectorError {
  try {
    parseFieldSelector(s);
  } catch (err) {
    expect(err).to.be.instanceOf(SelectorError);
    return err as SelectorError;
  }
  throw new Error(`expected ${JSON.stringify(s)} not to parse`);
}

function getter(fields: Record<string, string>): (f: string) => string | undefined {
  return (f) => (Object.hasOwn(fields, f) ? fields[f] : undefined);
}

describe('parseFieldSelector', () => {
  describe('canonical form (cases from apimachinery selector_test.go)', () => {
    const cases: [string, string][] = [
      ['', ''],
      ['x=a,y=b,z=c', 'x=a,y=b,z=c'],
      ['x!=a,y=b', 'x!=a,y=b'],
      ['x=a||y\\=b', 'x=a||y\\=b'],
      ['x=a\\=\\=b', 'x=a\\=\\=b'],
      ['x==a', 'x=a'],
      ['z=1,a=2', 'a=2,z=1'],
      ['x=', 'x='],
      ['x=a,,y=b,', 'x=a,y=b'],
      ['=', ''],
      ['!=', ''],
      ['=v', '=v'],
      ['x=a\\,b', 'x=a\\,b'],
      ['x=a\\!b', 'x=a!b'],
      ['x=a!b', 'x=a!b'],
      ['a!b=c', 'a!b=c'],
    ];
    for (const [input, printed] of cases) {
      it(`${JSON.stringify(input)} prints as ${JSON.stringify(printed)}`, () => {
        expect(parseFieldSelector(input).toString()).to.equal(printed);
      });
    }
  });

  it('parses requirements with unescaped values and normalised operators', () => {
    const sel = parseFieldSelector('metadata.name==a\\,b,spec.nodeName!=n\\\\1');
    expect(sel.requirements).to.deep.equal([
      { field: 'metadata.name', op: '=', value: 'a,b' },
      { field: 'spec.nodeName', op: '!=', value: 'n\\1' },
    ]);
  });

  describe('rejects what apimachinery rejects', () => {
    const cases: [string, string][] = [
      ['x=a||y=b', 'invalid field selector: unescaped character in value: 61'],
      ['x==a==b', 'invalid field selector: unescaped character in value: 61'],
      ['x=a,b', "invalid selector: 'x=a,b'; can't understand 'b'"],
      ['x in (a)', "invalid selector: 'x in (a)'; can't understand 'x in (a)'"],
      ['x', "invalid selector: 'x'; can't understand 'x'"],
      ['x=a\\', 'invalid field selector: invalid escape sequence: \\'],
      ['x=\\a', 'invalid field selector: invalid escape sequence: \\a'],
      ['x=\\\\\\', 'invalid field selector: invalid escape sequence: \\'],
    ];
    for (const [input, message] of cases) {
      it(`rejects ${JSON.stringify(input)}`, () => {
        expect(parseError(input).message).to.equal(message);
      });
    }
  });

  describe('matches', () => {
    const obj = getter({ 'metadata.name': 'web', 'metadata.namespace': 'default', 'spec.nodeName': '' });
    const cases: [string, boolean][] = [
      ['', true],
      ['metadata.name=web', true],
      ['metadata.name==web', true],
      ['metadata.name=db', false],
      ['metadata.name!=db', true],
      ['metadata.name!=web', false],
      ['metadata.name=web,metadata.namespace=default', true],
      ['metadata.name=web,metadata.namespace=kube-system', false],
      ['spec.nodeName=', true],
      ['status.phase=', true],
      ['status.phase!=', false],
      ['status.phase=Running', false],
      ['status.phase!=Running', true],
    ];
    for (const [selector, expected] of cases) {
      it(`${JSON.stringify(selector)} ${expected ? 'matches' : 'does not match'}`, () => {
        expect(parseFieldSelector(selector).matches(obj)).to.equal(expected);
      });
    }
  });

  it('reports emptiness, fields and exact values', () => {
    expect(parseFieldSelector('').empty).to.equal(true);
    expect(parseFieldSelector(',,').empty).to.equal(true);
    const sel = parseFieldSelector('spec.nodeName=n1,metadata.name!=x,metadata.name!=y');
    expect(sel.empty).to.equal(false);
    expect(sel.fields()).to.deep.equal(['metadata.name', 'spec.nodeName']);
    expect(sel.exactValue('spec.nodeName')).to.equal('n1');
    expect(sel.exactValue('metadata.name')).to.equal(undefined);
    expect(sel.exactValue('metadata.namespace')).to.equal(undefined);
    expect(parseFieldSelector('spec.nodeName==').exactValue('spec.nodeName')).to.equal('');
  });

  it('escapes values so they survive a round trip', () => {
    expect(escapeFieldValue('\\=,')).to.equal('\\\\\\=\\,');
    fc.assert(
      fc.property(fc.string(), (v) => parseFieldSelector(`f=${escapeFieldValue(v)}`).exactValue('f') === v),
      { numRuns: 1000 },
    );
  });

  describe('properties', () => {
    const alphabet = [...'ab.=!,\\ x', '==', '!=', 'é', '\0'];
    const selectorish = fc.array(fc.constantFrom(...alphabet), { maxLength: 30 }).map((parts) => parts.join(''));

    function parsesOrThrowsSelectorError(s: string): boolean {
      try {
        parseFieldSelector(s);
      } catch (err) {
        return err instanceof SelectorError;
      }
      return true;
    }

    it('arbitrary strings either parse or throw SelectorError', () => {
      fc.assert(fc.property(fc.string({ unit: 'binary', maxLength: 80 }), parsesOrThrowsSelectorError), { numRuns: 2000 });
    });

    it('selector-shaped strings either parse or throw SelectorError', () => {
      fc.assert(fc.property(selectorish, parsesOrThrowsSelectorError), { numRuns: 5000 });
    });

    // Order may change ("==" prints as "="), the requirements may not.
    it('the canonical form parses back to the same requirements', () => {
      const key = (s: string): string[] =>
        parseFieldSelector(s).requirements.map((r) => JSON.stringify(r)).sort();
      fc.assert(
        fc.property(selectorish, (s) => {
          let printed: string;
          try {
            printed = parseFieldSelector(s).toString();
          } catch {
            return true;
          }
          expect(key(printed)).to.deep.equal(key(s));
        }),
        { numRuns: 5000 },
      );
    });
  });
});

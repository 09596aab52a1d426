import { expect } from 'chai';
import fc from 'fast-check';
import { parseLabelSelector } from '../../../api/label-selector.js';
import { SelectorError } from '../../../api/selector-error.js';

function parseError(s: string): SelectorError {
  try {
    parseLabelSelector(s);
  } catch (err) {
    expect(err).to.be.instanceOf(SelectorError);
    return err as SelectorError;
  }
  throw new Error(`expected ${JSON.stringify(s)} not to parse`);
}

describe('parseLabelSelector', () => {
  describe('canonical form (cases from apimachinery selector_test.go)', () => {
    const cases: [string, string][] = [
      ['', ''],
      ['x=a,y=b,z=c', 'x=a,y=b,z=c'],
      ['x!=a,y=b', 'x!=a,y=b'],
      ['x=', 'x='],
      ['x= ', 'x='],
      ['x=,z= ', 'x=,z='],
      ['!x', '!x'],
      ['x>1', 'x>1'],
      ['x>1,z<5', 'x>1,z<5'],
      ['x==a', 'x==a'],
      ['x=a,a=x', 'a=x,x=a'],
      ['\rx', 'x'],
      ['foo  in\t (abc)', 'foo in (abc)'],
      ['x notin\n (abc)', 'x notin (abc)'],
      ['x in (def,abc,abc)', 'x in (abc,def)'],
      ['x in (abc,)', 'x in (,abc)'],
      ['x in ()', 'x in ()'],
      ['x in (a,,a,,a,,a,,)', 'x in (,a)'],
      ['x notin (abc,,def),bar,z in (),w', 'bar,w,x notin (,abc,def),z in ()'],
      ['x notin (, a)', 'x notin (,a)'],
      ['a in (x,y,notin, z,in)', 'a in (in,notin,x,y,z)'],
      ['notin=in', 'notin=in'],
      ['in in (in)', 'in in (in)'],
      ['0.1.2.domain/99 notin (10.10.100.1, tick.tack.clock)', '0.1.2.domain/99 notin (10.10.100.1,tick.tack.clock)'],
      ['example.com/app=web, tier', 'example.com/app=web,tier'],
    ];
    for (const [input, printed] of cases) {
      it(`${JSON.stringify(input)} prints as ${JSON.stringify(printed)}`, () => {
        expect(parseLabelSelector(input).toString()).to.equal(printed);
      });
    }
  });

  describe('rejects what apimachinery rejects', () => {
    const bad = [
      'x=a||y=b', 'x==a==b', '!x=a', 'x<a', 'x>-1', 'x>99999999999999999999', 'x,,y', ',x,y', 'x nott in (y)',
      'a in (xyz),', 'a in (xyz)b notin ()', 'a in (xyz abc)', 'a notin(', 'a (', '(', 'x in (a', 'x in a',
      'x=a b', 'k=v=', '-k', 'k-=v', 'a/b/c', '/k', 'Example.com/k', 'k=-v', `k=${'v'.repeat(64)}`,
      `${'k'.repeat(64)}`, 'k in (a,-b)', '!', '!!k', 'k!', 'x=(', 'x in (a)(',
    ];
    for (const s of bad) {
      it(`rejects ${JSON.stringify(s)}`, () => {
        parseError(s);
      });
    }
  });

  describe('error messages in apimachinery wording', () => {
    const cases: [string, string][] = [
      ['x y', "unable to parse requirement: found 'y', expected: in, notin, =, ==, !=, gt, lt"],
      ['!x=a', "found '=', expected: ',' or 'end of string'"],
      ['!', "unable to parse requirement: found '', expected: identifier"],
      ['x==a==b', "found '==', expected: ',' or 'end of string'"],
      [',x', "found ',', expected: !, identifier, or 'end of string'"],
      ['x,,y', "found ',', expected: identifier after ','"],
      ['a in (xyz abc)', "unable to parse requirement: found 'abc', expected: ',' or ')'"],
      ['a in xyz', "unable to parse requirement: found 'xyz' expected: '('"],
      ['x<a', 'unable to parse requirement: values[0]: Invalid value: "a": for \'Gt\', \'Lt\' operators, the value must be an integer'],
      [
        'k=-v',
        'unable to parse requirement: values[0][k]: Invalid value: "-v": a valid label must be an empty string or consist of ' +
          "alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character " +
          "(e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
      ],
      [
        'K_',
        'unable to parse requirement: <nil>: Invalid value: "K_": name part must consist of alphanumeric characters, ' +
          "'-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or " +
          "'123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      ],
    ];
    for (const [input, message] of cases) {
      it(`explains ${JSON.stringify(input)}`, () => {
        expect(parseError(input).message).to.equal(message);
      });
    }

    it('aggregates several value errors in brackets', () => {
      expect(parseError('k in (-a,-b)').message).to.match(/^unable to parse requirement: \[values\[0\]\[k\].*, values\[1\]\[k\]/);
    });

    it('is a SelectorError named as such', () => {
      const err = parseError('(');
      expect(err.name).to.equal('SelectorError');
      expect(err).to.be.instanceOf(Error);
    });
  });

  describe('matches', () => {
    const labels = { foo: 'bar', baz: 'blah', n: '5' };
    const cases: [string, Record<string, string> | undefined, boolean][] = [
      ['', { x: 'y' }, true],
      ['', undefined, true],
      ['x=y', { x: 'y' }, true],
      ['x==y', { x: 'y' }, true],
      ['x=y', {}, false],
      ['x=y', undefined, false],
      ['x=', { x: '' }, true],
      ['x=', {}, false],
      ['x!=y,z!=w', { x: 'z', z: 'a' }, true],
      ['x!=y,z!=w', { x: 'z', z: 'w' }, false],
      ['x!=y', {}, true],
      ['x', { x: 'z' }, true],
      ['x', { y: 'z' }, false],
      ['!x', { y: 'z' }, true],
      ['!x', { x: 'z' }, false],
      ['x>1', { x: '2' }, true],
      ['x>1', { x: '0' }, false],
      ['x<1', { x: '0' }, true],
      ['x<1', { x: '-3' }, true],
      ['x>1', { x: 'abc' }, false],
      ['x>1', {}, false],
      ['x<1', {}, false],
      ['foo=bar,baz=blah', labels, true],
      ['foo=bar,foobar=bar,baz=blah', labels, false],
      ['foo in (bar,qux)', labels, true],
      ['foo in (qux)', labels, false],
      ['foo notin (qux)', labels, true],
      ['foo notin (bar)', labels, false],
      ['missing notin (bar)', labels, true],
      ['missing in (bar)', labels, false],
      ['n>4,n<6', labels, true],
      ['constructor', {}, false],
      ['!toString', {}, true],
      ['hasOwnProperty=x', {}, false],
    ];
    for (const [selector, set, expected] of cases) {
      it(`${JSON.stringify(selector)} ${expected ? 'matches' : 'does not match'} ${JSON.stringify(set)}`, () => {
        expect(parseLabelSelector(selector).matches(set)).to.equal(expected);
      });
    }
  });

  it('reports emptiness and requirements sorted by key', () => {
    expect(parseLabelSelector('').empty).to.equal(true);
    expect(parseLabelSelector('  ').empty).to.equal(true);
    const sel = parseLabelSelector('z in (b,a),a');
    expect(sel.empty).to.equal(false);
    expect(sel.requirements).to.deep.equal([
      { key: 'a', operator: 'exists', values: [] },
      { key: 'z', operator: 'in', values: ['a', 'b'] },
    ]);
  });

  it('stops at a NUL character, as the upstream lexer does', () => {
    expect(parseLabelSelector('a=b\0').toString()).to.equal('a=b');
    expect(parseLabelSelector('\0garbage((').empty).to.equal(true);
  });

  describe('properties', () => {
    const alphabet = [...'abkv019-_./=!<>(),  \t', 'in', 'notin', '\0', 'é', 'A'];
    const selectorish = fc.array(fc.constantFrom(...alphabet), { maxLength: 30 }).map((parts) => parts.join(''));

    function parsesOrThrowsSelectorError(s: string): boolean {
      try {
        parseLabelSelector(s);
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

    it('the canonical form parses back to itself', () => {
      fc.assert(
        fc.property(selectorish, (s) => {
          let printed: string;
          try {
            printed = parseLabelSelector(s).toString();
          } catch {
            return true;
          }
          return parseLabelSelector(printed).toString() === printed;
        }),
        { numRuns: 5000 },
      );
    });
  });
});

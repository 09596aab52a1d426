import { expect } from 'chai';
import fc from 'fast-check';
import { asObject, decodeBody, tooLarge } from '../../../../apiserver/http/body.js';
import { ApiError } from '../../../../apiserver/errors.js';
import { catchApiError } from '../helpers.js';

const buf = (s: string) => Buffer.from(s, 'utf8');
const CONTENT_TYPES = [
  undefined,
  'application/json',
  'application/json; charset=utf-8',
  'application/merge-patch+json',
  'application/json-patch+json',
  'application/yaml',
  'application/apply-patch+yaml',
  'Application/YAML; charset=utf-8',
];

/** `a: &a [x, ...]`, `b: &b [*a, *a, ...]`, ...: each level multiplies the expanded size by 9. */
function aliasBomb(): string {
  const levels = 'abcdefgh'.split('');
  return levels
    .map((name, i) => `${name}: &${name} [${Array(9).fill(i === 0 ? 'x' : `*${levels[i - 1]}`).join(', ')}]`)
    .join('\n');
}

describe('decodeBody', () => {
  const ok: [name: string, raw: string, type: string | undefined, value: unknown][] = [
    ['JSON (the default type)', '{"a":1,"b":[true,null]}', undefined, { a: 1, b: [true, null] }],
    ['JSON with parameters on the type', '{"a":1}', 'application/json; charset=utf-8', { a: 1 }],
    ['a JSON patch array', '[{"op":"remove","path":"/a"}]', 'application/json-patch+json', [{ op: 'remove', path: '/a' }]],
    ['a JSON scalar', '"x"', 'application/merge-patch+json', 'x'],
    ['YAML for application/yaml', 'a: 1\nb:\n  - x\n', 'application/yaml', { a: 1, b: ['x'] }],
    ['JSON as YAML for an apply patch (kubectl sends JSON)', '{"apiVersion":"v1","kind":"X"}', 'application/apply-patch+yaml', { apiVersion: 'v1', kind: 'X' }],
    ['a YAML flow mapping that is not JSON, as YAML', '{a: 1, b: [x]}', 'application/apply-patch+yaml', { a: 1, b: ['x'] }],
    ['a YAML flow mapping followed by a comment', '{"a": 1} # note', 'application/yaml', { a: 1 }],
    ['YAML with an explicit document start', '---\na: 1\n', 'application/apply-patch+yaml', { a: 1 }],
    ['YAML whatever the case of the type', 'a: 1', 'Application/YAML', { a: 1 }],
  ];
  for (const [name, raw, type, value] of ok) {
    it(`decodes ${name}`, () => expect(decodeBody(buf(raw), type)).to.deep.equal(value));
  }

  const bad: [name: string, raw: unknown, type: string | undefined, message: RegExp][] = [
    ['an empty body', buf(''), 'application/json', /empty/],
    ['a whitespace-only body', buf(' \n\t'), 'application/yaml', /empty/],
    ['no body at all (not a Buffer)', undefined, 'application/json', /empty/],
    ['a parsed object instead of raw bytes', { a: 1 }, 'application/json', /empty/],
    ['malformed JSON', buf('{"a":'), 'application/json', /not valid JSON/],
    ['YAML sent as JSON', buf('a: 1'), 'application/json', /not valid JSON/],
    ['malformed YAML', buf('a: [1, 2'), 'application/yaml', /not valid YAML/],
    ['a YAML mapping with a duplicate key', buf('a: 1\na: 2\n'), 'application/yaml', /not valid YAML/],
    ['several YAML documents', buf('a: 1\n---\nb: 2\n'), 'application/apply-patch+yaml', /not valid YAML: expected exactly one YAML document/],
    ['a YAML alias bomb ("billion laughs")', buf(aliasBomb()), 'application/yaml', /not valid YAML/],
  ];
  for (const [name, raw, type, message] of bad) {
    it(`rejects ${name} with 400`, () => {
      const err = catchApiError(() => decodeBody(raw, type));
      expect(err.code).to.equal(400);
      expect(err.reason).to.equal('BadRequest');
      expect(err.message).to.match(message);
    });
  }

  it('never throws anything but a 400 ApiError for arbitrary text (property)', () => {
    const text = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.string({ unit: fc.constantFrom('{', '}', '[', ']', ':', ',', '"', '-', '&', '*', '!', '|', '>', '#', '\n', ' ', 'a', '1', '---', '%YAML', '!!binary', '? ', '<<') }),
      fc.jsonValue().map((v) => JSON.stringify(v)),
    );
    fc.assert(
      fc.property(text, fc.constantFrom(...CONTENT_TYPES), (t, type) => {
        try {
          decodeBody(buf(t), type);
        } catch (err) {
          expect(err).to.be.instanceOf(ApiError);
          expect((err as ApiError).code).to.equal(400);
        }
      }),
      { numRuns: 500 },
    );
  });
});

describe('asObject', () => {
  it('returns an object unchanged', () => {
    const o = { kind: 'X' };
    expect(asObject(o)).to.equal(o);
  });

  for (const value of [null, [], 'x', 1, true, undefined]) {
    it(`rejects ${JSON.stringify(value)} with 400`, () => expect(catchApiError(() => asObject(value)).code).to.equal(400));
  }
});

describe('tooLarge', () => {
  it('is a 413 RequestEntityTooLarge naming the limit', () => {
    const err = tooLarge(1024);
    expect(err).to.include({ code: 413, reason: 'RequestEntityTooLarge' });
    expect(err.message).to.contain('1024 bytes');
  });
});

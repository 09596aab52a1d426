import { expect } from 'chai';
import fc from 'fast-check';
import { ApiError } from '../../../../apiserver/errors.js';
import { jsonPatch, mergePatch, PATCH_TYPES } from '../../../../apiserver/rest/patch.js';
import { catchApiError, jsonValue } from '../helpers.js';

/** JSON values over a tiny key space, so patches and targets overlap often. */
const json = jsonValue(fc.constantFrom('a', 'b', 'c', 'd'), fc.string({ maxLength: 3 }), 4);

describe('PATCH_TYPES', () => {
  it('names the four content types kube accepts for PATCH', () => {
    expect(Object.values(PATCH_TYPES)).to.have.members([
      'application/merge-patch+json',
      'application/json-patch+json',
      'application/strategic-merge-patch+json',
      'application/apply-patch+yaml',
    ]);
  });
});

describe('mergePatch', () => {
  describe('RFC 7386 appendix A test vectors', () => {
    const vectors: [original: unknown, patch: unknown, result: unknown][] = [
      [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
      [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
      [{ a: 'b' }, { a: null }, {}],
      [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
      [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
      [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
      [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
      [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
      [['a', 'b'], ['c', 'd'], ['c', 'd']],
      [{ a: 'b' }, ['c'], ['c']],
      [{ a: 'foo' }, null, null],
      [{ a: 'foo' }, 'bar', 'bar'],
      [{ e: null }, { a: 1 }, { e: null, a: 1 }],
      [[1, 2], { a: 'b', c: null }, { a: 'b' }],
      [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
    ];
    for (const [original, patch, result] of vectors) {
      it(`${JSON.stringify(original)} + ${JSON.stringify(patch)} = ${JSON.stringify(result)}`, () => {
        expect(mergePatch(original, patch)).to.deep.equal(result);
      });
    }
  });

  it('does not mutate the target or the patch', () => {
    const target = { metadata: { name: 'a', labels: { x: '1', y: '2' } }, spec: { list: [1, 2] } };
    const patch = { metadata: { labels: { x: null, z: '3' } }, spec: { list: [3] } };
    const [targetBefore, patchBefore] = [structuredClone(target), structuredClone(patch)];
    const out = mergePatch(target, patch);
    expect(out).to.deep.equal({ metadata: { name: 'a', labels: { y: '2', z: '3' } }, spec: { list: [3] } });
    expect(target).to.deep.equal(targetBefore);
    expect(patch).to.deep.equal(patchBefore);
  });

  it('is idempotent: applying the same patch twice changes nothing more (property)', () => {
    fc.assert(
      fc.property(json, json, (target, patch) => {
        const once = mergePatch(target, patch);
        expect(mergePatch(once, patch)).to.deep.equal(once);
      }),
    );
  });

  it('keeps every non-null leaf of an object patch in the result (property)', () => {
    fc.assert(
      fc.property(json, json, (target, patch) => {
        const out = mergePatch(target, patch) as Record<string, unknown>;
        if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return;
        for (const [k, v] of Object.entries(patch)) {
          if (v === null) expect(out).to.not.have.own.property(k);
          else if (typeof v !== 'object' || Array.isArray(v)) expect(out[k]).to.deep.equal(v);
        }
      }),
    );
  });

  // Regression (was a bug): apiserver/rest/patch.ts mergePatch assigns `out[k] = ...` on a plain object, so a patch key
  // "__proto__" (which JSON.parse creates as an own property) sets the result's prototype instead of a
  // field: the key vanishes from the stored object (e.g. in a preserve-unknown-fields map or a
  // nodeSelector) and its contents become readable through inheritance (result.x === 1 below).
  it('treats a "__proto__" key as an ordinary field (RFC 7386)', () => {
    const out = mergePatch({}, JSON.parse('{"__proto__":{"x":1}}')) as Record<string, unknown>;
    expect(Object.getPrototypeOf(out)).to.equal(Object.prototype);
    expect(JSON.parse(JSON.stringify(out))).to.deep.equal(JSON.parse('{"__proto__":{"x":1}}'));
  });
});

describe('jsonPatch', () => {
  const doc = { metadata: { name: 'a', labels: { x: '1' } }, spec: { cpus: 1, list: ['a', 'b'] } };

  describe('applies RFC 6902 operations', () => {
    const cases: [name: string, ops: unknown[], expected: unknown][] = [
      ['add a field', [{ op: 'add', path: '/spec/memory', value: '1Gi' }], { ...doc, spec: { ...doc.spec, memory: '1Gi' } }],
      ['append to a list', [{ op: 'add', path: '/spec/list/-', value: 'c' }], { ...doc, spec: { ...doc.spec, list: ['a', 'b', 'c'] } }],
      ['remove a field', [{ op: 'remove', path: '/metadata/labels/x' }], { ...doc, metadata: { name: 'a', labels: {} } }],
      ['replace a field', [{ op: 'replace', path: '/spec/cpus', value: 4 }], { ...doc, spec: { ...doc.spec, cpus: 4 } }],
      ['pass a test, then replace', [{ op: 'test', path: '/spec/cpus', value: 1 }, { op: 'replace', path: '/spec/cpus', value: 2 }], { ...doc, spec: { ...doc.spec, cpus: 2 } }],
      ['escape "/" as ~1 in keys', [{ op: 'add', path: '/metadata/labels/cairn.dev~1role', value: 'db' }], { ...doc, metadata: { name: 'a', labels: { x: '1', 'cairn.dev/role': 'db' } } }],
      ['do nothing for an empty list', [], doc],
    ];
    for (const [name, ops, expected] of cases) {
      it(name, () => {
        expect(jsonPatch(doc, ops)).to.deep.equal(expected);
      });
    }
  });

  describe('rejects a failing or malformed operation with 422 Invalid', () => {
    const cases: [name: string, ops: unknown[], mentions: RegExp][] = [
      ['a failing test', [{ op: 'test', path: '/spec/cpus', value: 2 }], /test operation .*"\/spec\/cpus".* failed/],
      ['a test after a successful op', [{ op: 'replace', path: '/spec/cpus', value: 3 }, { op: 'test', path: '/spec/cpus', value: 1 }], /test operation/],
      ['remove of a missing path', [{ op: 'remove', path: '/spec/missing' }], /operation 0/],
      ['replace of a missing path', [{ op: 'replace', path: '/spec/missing', value: 1 }], /operation 0/],
      ['add under a missing parent', [{ op: 'add', path: '/nope/deeper', value: 1 }], /operation 0/],
      ['an unknown op', [{ op: 'frobnicate', path: '/spec' }], /operation 0/],
      ['an op that is not an object', [1], /operation 0/],
      ['move without from', [{ op: 'move', path: '/spec/x' }], /operation 0/],
      ['a prototype modification', [{ op: 'add', path: '/__proto__/polluted', value: 1 }], /__proto__/],
    ];
    for (const [name, ops, mentions] of cases) {
      it(name, () => {
        const err = catchApiError(() => jsonPatch(doc, ops));
        expect(err.code).to.equal(422);
        expect(err.reason).to.equal('Invalid');
        expect(err.message).to.match(mentions);
      });
    }
  });

  // Regression (was a bug): apiserver/rest/patch.ts jsonPatch says "in operation ${e.index}", but fast-json-patch's
  // applyPatch validates every operation with a hard-coded index 0 (applyOperation calls
  // validator(operation, 0)), so a failure in the second operation is reported as
  // "... in operation 0 ({"op":"remove","path":"/spec/missing"})". Expected: operation 1 (or no index).
  it('names the failing operation by its index', () => {
    const err = catchApiError(() => jsonPatch(doc, [{ op: 'add', path: '/spec/a', value: 1 }, { op: 'remove', path: '/spec/missing' }]));
    expect(err.message).to.match(/operation 1\b/);
  });

  it('applies a move onto itself as the no-op it is, and refuses one from nowhere (422)', () => {
    expect(jsonPatch(doc, [{ op: 'move', from: '/spec', path: '/spec' }])).to.deep.equal(doc);
    const err = catchApiError(() => jsonPatch(doc, [{ op: 'move', from: '/spec/missing', path: '/spec/missing' }]));
    expect(err.code).to.equal(422);
    expect(err.message).to.match(/operation 0\b/);
  });

  describe('rejects a patch that is not an array with 400 BadRequest', () => {
    for (const ops of [{ op: 'add', path: '/a', value: 1 }, 'add', null, 3]) {
      it(JSON.stringify(ops), () => {
        const err = catchApiError(() => jsonPatch(doc, ops));
        expect(err.code).to.equal(400);
        expect(err.reason).to.equal('BadRequest');
      });
    }
  });

  it('does not mutate its input, whether it succeeds or fails', () => {
    const target = structuredClone(doc);
    jsonPatch(target, [{ op: 'remove', path: '/spec/list/0' }, { op: 'add', path: '/spec/x', value: 1 }]);
    expect(() => jsonPatch(target, [{ op: 'add', path: '/spec/y', value: 1 }, { op: 'test', path: '/spec/cpus', value: 9 }])).to.throw(ApiError);
    expect(target).to.deep.equal(doc);
  });

  it('never throws anything but an ApiError for arbitrary operation lists (property)', () => {
    const op = fc.record(
      {
        op: fc.constantFrom('add', 'remove', 'replace', 'move', 'copy', 'test', '_get', 'x'),
        path: fc.oneof(fc.constantFrom('', '/', '/spec', '/spec/cpus', '/spec/list/0', '/spec/list/-', '/a/b', '/spec/list/9'), fc.string()),
        from: fc.constantFrom('/spec', '/spec/cpus', '/nope', 'bad'),
        value: json,
      },
      { requiredKeys: ['op'] },
    );
    fc.assert(
      fc.property(fc.array(fc.oneof(op, json), { maxLength: 4 }), (ops) => {
        try {
          jsonPatch(doc, ops);
        } catch (err) {
          expect(err).to.be.instanceOf(ApiError);
          expect((err as ApiError).code).to.equal(422);
        }
      }),
    );
  });
});

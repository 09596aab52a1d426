import { expect } from 'chai';
import fc from 'fast-check';
import { ApiError } from '../../../../apiserver/errors.js';
import { decodeContinue, encodeContinue } from '../../../../apiserver/rest/lister.js';
import { catchApiError } from '../helpers.js';

const b64 = (s: string) => Buffer.from(s).toString('base64');

describe('continue tokens', () => {
  it('encode as kube does: base64 of {"v","rv","start"}', () => {
    const token = encodeContinue(42, 'default/web\0');
    expect(JSON.parse(Buffer.from(token, 'base64').toString())).to.deep.equal({ v: 'meta.k8s.io/v1', rv: 42, start: 'default/web\0' });
  });

  it('round-trip for any positive revision and start key without ".." (property)', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER }),
        fc.string({ unit: 'binary' }).filter((s) => !s.includes('..')),
        (rv, start) => {
          expect(decodeContinue(encodeContinue(rv, start))).to.deep.equal({ rv, start });
        },
      ),
    );
  });

  describe('reject malformed tokens with 400 BadRequest', () => {
    const cases: [name: string, token: string][] = [
      ['empty', ''],
      ['not base64 at all', '!!!not-a-token!!!'],
      ['base64 of non-JSON', b64('hello')],
      ['base64 of JSON null', b64('null')],
      ['base64 of a JSON number', b64('7')],
      ['base64 of a JSON array', b64('[1,2]')],
      ['wrong v', b64(JSON.stringify({ v: 'meta.k8s.io/v1beta1', rv: 5, start: 'a' }))],
      ['missing v', b64(JSON.stringify({ rv: 5, start: 'a' }))],
      ['negative rv', b64(JSON.stringify({ v: 'meta.k8s.io/v1', rv: -5, start: 'a' }))],
      ['zero rv', b64(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 0, start: 'a' }))],
      ['fractional rv', b64(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 1.5, start: 'a' }))],
      ['rv as a string', b64(JSON.stringify({ v: 'meta.k8s.io/v1', rv: '5', start: 'a' }))],
      ['start not a string', b64(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 5, start: 3 }))],
      ['missing start', b64(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 5 }))],
      ['".." in start', b64(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 5, start: '../other/ns' }))],
      ['".." inside start', b64(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 5, start: 'default/a..b' }))],
    ];
    for (const [name, token] of cases) {
      it(name, () => {
        const err = catchApiError(() => decodeContinue(token));
        expect(err.code).to.equal(400);
        expect(err.reason).to.equal('BadRequest');
        expect(err.message).to.match(/^continue key is not valid/);
      });
    }
  });

  it('never throw anything but a 400 ApiError for arbitrary strings or base64 of arbitrary JSON (property)', () => {
    const token = fc.oneof(
      fc.string({ unit: 'binary' }),
      fc.base64String(),
      fc.jsonValue().map((v) => b64(JSON.stringify(v) ?? '')),
      fc.record({ v: fc.constantFrom('meta.k8s.io/v1', 'x'), rv: fc.oneof(fc.integer(), fc.double(), fc.string()), start: fc.oneof(fc.string(), fc.integer()) }).map((t) => b64(JSON.stringify(t))),
    );
    fc.assert(
      fc.property(token, (t) => {
        try {
          const out = decodeContinue(t);
          expect(out.rv).to.be.a('number').above(0);
          expect(out.start).to.be.a('string').and.not.contain('..');
        } catch (err) {
          expect(err).to.be.instanceOf(ApiError);
          expect((err as ApiError).code).to.equal(400);
        }
      }),
    );
  });
});

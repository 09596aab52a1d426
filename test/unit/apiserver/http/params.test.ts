import { expect } from 'chai';
import { bool, dryRun, int, str, type Query } from '../../../../apiserver/http/params.js';
import { catchApiError } from '../helpers.js';

const rejects = (fn: () => unknown) => expect(catchApiError(fn).code).to.equal(400);

describe('query parameters', () => {
  describe('str', () => {
    it('returns a single value, or undefined when absent', () => {
      expect(str({ a: 'x' }, 'a')).to.equal('x');
      expect(str({ a: '' }, 'a')).to.equal('');
      expect(str({}, 'a')).to.equal(undefined);
    });

    for (const value of [['x', 'y'], { nested: 'x' }]) {
      it(`rejects ${JSON.stringify(value)} with 400`, () => rejects(() => str({ a: value }, 'a')));
    }
  });

  describe('int', () => {
    const ok: [value: string | undefined, n: number | undefined][] = [
      [undefined, undefined],
      ['', undefined],
      ['0', 0],
      ['500', 500],
      ['007', 7],
      ['999999999999999', 999_999_999_999_999],
    ];
    for (const [value, n] of ok) {
      it(`${JSON.stringify(value)} → ${n}`, () => expect(int(value === undefined ? {} : { limit: value }, 'limit')).to.equal(n));
    }

    for (const value of ['-1', '1.5', '1e3', ' 1', 'ten', '0x10', '1234567890123456', ['1', '2']]) {
      it(`rejects ${JSON.stringify(value)} with 400 naming the parameter`, () => {
        const err = catchApiError(() => int({ limit: value }, 'limit'));
        expect(err.code).to.equal(400);
        expect(err.message).to.match(/^limit: /);
      });
    }
  });

  describe('bool (as apimachinery converts query booleans)', () => {
    const cases: [query: Query, value: boolean][] = [
      [{ watch: 'true' }, true],
      [{ watch: 'True' }, true],
      [{ watch: 'TRUE' }, true],
      [{ watch: '1' }, true],
      [{ watch: '' }, true],
      [{ watch: 'yes' }, true],
      [{ watch: 'false' }, false],
      [{ watch: 'False' }, false],
      [{ watch: 'FALSE' }, false],
      [{ watch: '0' }, false],
      [{}, false],
      [{ watch: ['false', 'true'] }, false],
      [{ watch: ['True', 'false'] }, true],
    ];
    for (const [query, value] of cases) {
      it(`${JSON.stringify(query)} → ${value}`, () => expect(bool(query, 'watch')).to.equal(value));
    }
  });

  describe('dryRun', () => {
    const cases: [name: string, query: Query, body: unknown, value: boolean][] = [
      ['absent', {}, undefined, false],
      ['empty', { dryRun: '' }, undefined, false],
      ['All in the query (create, patch)', { dryRun: 'All' }, undefined, true],
      ['All repeated in the query', { dryRun: ['All', 'All'] }, undefined, true],
      ['All in a DELETE body', {}, ['All'], true],
      ['an empty list in a DELETE body', {}, [], false],
    ];
    for (const [name, query, body, value] of cases) {
      it(`${name} → ${value}`, () => expect(dryRun(query, body)).to.equal(value));
    }

    const bad: [name: string, query: Query, body: unknown][] = [
      ['an unknown value in the query', { dryRun: 'None' }, undefined],
      ['a lower-case value', { dryRun: 'all' }, undefined],
      ['an unknown value among good ones', { dryRun: ['All', 'x'] }, undefined],
      ['an unknown value in the body', {}, ['Server']],
    ];
    for (const [name, query, body] of bad) {
      it(`rejects ${name} with 400 listing the supported values`, () => {
        const err = catchApiError(() => dryRun(query, body));
        expect(err.code).to.equal(400);
        expect(err.message).to.contain('supported values: "All"');
      });
    }
  });
});

import { expect } from 'chai';
import fc from 'fast-check';
import { humanDuration } from '../../../api/human-duration.js';

const S = 1000;
const M = 60 * S;
const H = 60 * M;
const D = 24 * H;

describe('humanDuration', () => {
  // Cases from the brief and from apimachinery's duration_test.go (TestHumanDuration).
  const cases: [ms: number, printed: string][] = [
    [0, '0s'],
    [999, '0s'],
    [-500, '0s'],
    [-S, '0s'],
    [-2 * S, '<invalid>'],
    [-5 * S, '<invalid>'],
    [S, '1s'],
    [70 * S, '70s'],
    [119 * S, '119s'],
    [119 * S + 999, '119s'],
    [2 * M, '2m'],
    [190 * S, '3m10s'],
    [2 * M + 30 * S, '2m30s'],
    [9 * M + 59 * S, '9m59s'],
    [10 * M, '10m'],
    [10 * M + 30 * S, '10m'],
    [70 * M, '70m'],
    [179 * M, '179m'],
    [3 * H, '3h'],
    [3 * H + 30 * M, '3h30m'],
    [7 * H + 59 * M, '7h59m'],
    [8 * H, '8h'],
    [8 * H + 30 * M, '8h'],
    [47 * H, '47h'],
    [48 * H, '2d'],
    [49 * H, '2d1h'],
    [2 * D + 5 * H, '2d5h'],
    [7 * D + 23 * H, '7d23h'],
    [8 * D, '8d'],
    [8 * D + 2 * H, '8d'],
    [367 * D, '367d'],
    [729 * D, '729d'],
    [730 * D, '2y'],
    [365 * 2 * D + 25 * H, '2y1d'],
    [365 * 8 * D - D, '7y364d'],
    [365 * 8 * D + 2 * H, '8y'],
    [365 * 20 * D, '20y'],
  ];
  for (const [ms, printed] of cases) {
    it(`${ms} ms → ${printed}`, () => {
      expect(humanDuration(ms)).to.equal(printed);
    });
  }

  it('prints only digits followed by s, m, h, d or y, at most two units (property)', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100 * 365 * D }), (ms) => {
        expect(humanDuration(ms)).to.match(/^\d+[smhdy](\d+[smhd])?$/);
      }),
    );
  });

  // Regression (was a bug): api/human-duration.ts humanDuration uses Math.floor(ms / 1000) where Go's
  // HumanDuration truncates toward zero (int(d.Seconds())): for -2000 < ms < -1000 kube prints "0s"
  // (its documented 2 s tolerance for clock skew) but humanDuration(-1500) returns "<invalid>".
  it('tolerates up to (but excluding) two seconds in the future like kube', () => {
    for (const ms of [-1001, -1500, -1999]) expect(humanDuration(ms), String(ms)).to.equal('0s');
  });
});

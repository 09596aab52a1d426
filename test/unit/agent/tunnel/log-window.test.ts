import { expect } from 'chai';
import fc from 'fast-check';
import { addMark, logRange, tailIndex, type LogMark } from '../../../../agent/tunnel/log-window.js';

const facts = (over: Partial<{ size: number; runStart: number; marks: LogMark[]; rotatedAt: number; now: number }> = {}) => ({ size: 1000, runStart: 0, marks: [], now: 100_000, ...over });

describe('log window', () => {
  describe('logRange', () => {
    it('reads the current run by default', () => {
      expect(logRange({}, facts({ runStart: 400 }))).to.deep.equal({ start: 400, end: 1000 });
    });
    it('ends where the log ended when asked, unless following: lines written meanwhile would make a --tail 3 print four', () => {
      expect(logRange({ tailLines: 3 }, facts({ runStart: 400 }))).to.deep.equal({ start: 400, end: 1000 });
      expect(logRange({ tailLines: 3, follow: true }, facts({ runStart: 400 }))).to.deep.equal({ start: 400 });
    });
    it('reads the runs before the current one with previous', () => {
      expect(logRange({ previous: true }, facts({ runStart: 400 }))).to.deep.equal({ start: 0, end: 400 });
    });
    it('says why there is no earlier run', () => {
      expect(logRange({ previous: true }, facts())).to.have.property('problem').that.matches(/first run, or the log was rotated/);
    });
    it('treats a run start beyond the file (rotated since) as the file start: all it holds is the current run', () => {
      expect(logRange({}, facts({ size: 50, runStart: 400 }))).to.deep.equal({ start: 0, end: 50 });
      expect(logRange({ previous: true }, facts({ size: 50, runStart: 400 }))).to.have.property('problem');
    });
    it('ignores sizes sampled before the last rotation, though the file grew past them again (they are of the old file)', () => {
      const marks = [{ at: 50_000, size: 300 }, { at: 80_000, size: 50 }];
      expect(logRange({ sinceSeconds: 30 }, facts({ marks, rotatedAt: 60_000 }))).to.deep.equal({ start: 0, end: 1000 });
      expect(logRange({ sinceSeconds: 10 }, facts({ marks, rotatedAt: 60_000 }))).to.deep.equal({ start: 50, end: 1000 });
    });
    it('reads nothing of the earlier runs for a sinceSeconds after they ended (once start > end: a 500)', () => {
      const marks = [{ at: 95_000, size: 900 }];
      expect(logRange({ previous: true, sinceSeconds: 1 }, facts({ runStart: 400, marks }))).to.deep.equal({ start: 400, end: 400 });
    });
    it('starts sinceSeconds ago at the newest mark before then', () => {
      const marks = [{ at: 10_000, size: 100 }, { at: 50_000, size: 300 }, { at: 95_000, size: 900 }];
      expect(logRange({ sinceSeconds: 30 }, facts({ marks }))).to.deep.equal({ start: 300, end: 1000 });
      expect(logRange({ sinceSeconds: 1000, follow: true }, facts({ marks }))).to.deep.equal({ start: 0 });
    });
    it('never starts before the current run for sinceSeconds, and ignores marks from before a rotation', () => {
      expect(logRange({ sinceSeconds: 30 }, facts({ runStart: 500, marks: [{ at: 50_000, size: 300 }] }))).to.deep.equal({ start: 500, end: 1000 });
      expect(logRange({ sinceSeconds: 30 }, facts({ size: 200, marks: [{ at: 50_000, size: 300 }] }))).to.deep.equal({ start: 0, end: 200 });
    });
    it('resumes at fromOffset, or from the start when the file was truncated below it', () => {
      expect(logRange({ fromOffset: 700, tailLines: 1, follow: true }, facts())).to.deep.equal({ start: 700 });
      expect(logRange({ fromOffset: 2000, follow: true }, facts())).to.deep.equal({ start: 0 });
    });
  });

  describe('tailIndex', () => {
    const text = Buffer.from('a\nbb\nccc\n');
    it('finds where the last N lines begin', () => {
      expect(tailIndex(text, 1)).to.deep.equal({ index: 5, complete: true });
      expect(tailIndex(text, 2)).to.deep.equal({ index: 2, complete: true });
    });
    it('reports an incomplete search when the text holds fewer lines', () => {
      expect(tailIndex(text, 3)).to.deep.equal({ index: 0, complete: false });
      expect(tailIndex(text, 9)).to.deep.equal({ index: 0, complete: false });
    });
    it('counts an unterminated last line as a line', () => {
      expect(tailIndex(Buffer.from('a\nbb'), 1)).to.deep.equal({ index: 2, complete: true });
    });
    it('returns the end for zero lines', () => {
      expect(tailIndex(text, 0)).to.deep.equal({ index: text.length, complete: true });
    });
    it('always yields exactly the last N lines (property)', () => {
      fc.assert(
        fc.property(fc.array(fc.string({ unit: fc.constantFrom('x', 'y') }), { minLength: 1, maxLength: 20 }), fc.integer({ min: 1, max: 25 }), (lines, n) => {
          const buf = Buffer.from(`${lines.join('\n')}\n`);
          const t = tailIndex(buf, n);
          const got = buf.subarray(t.index).toString().split('\n').slice(0, -1);
          expect(got).to.deep.equal(lines.slice(-n));
        }),
      );
    });
  });

  describe('addMark', () => {
    it('records size changes only, keeping the newest', () => {
      const marks: LogMark[] = [];
      for (const [at, size] of [[1, 10], [2, 10], [3, 20], [4, 30], [5, 40]] as const) addMark(marks, { at, size }, 3);
      expect(marks).to.deep.equal([{ at: 3, size: 20 }, { at: 4, size: 30 }, { at: 5, size: 40 }]);
    });
  });
});

import { describe, expect, it } from 'vitest';
import { age, formatBytes, plural } from './format';
import { appendLog } from './log-buffer';
import { toneOf } from './tones';

describe('formatting', () => {
  it('writes bytes in binary units', () => {
    expect(formatBytes(0)).toBe('0 B');
    expect(formatBytes(1536)).toBe('1.5 KiB');
    expect(formatBytes(8 * 2 ** 30)).toBe('8 GiB');
  });

  it('writes ages in their largest unit', () => {
    const now = Date.parse('2024-05-01T12:00:00Z');
    expect(age('2024-05-01T11:59:15Z', now)).toBe('45s');
    expect(age('2024-05-01T09:30:00Z', now)).toBe('2h');
    expect(age('2024-04-26T12:00:00Z', now)).toBe('5d');
    expect(age(undefined, now)).toBe('');
  });

  it('pluralizes', () => {
    expect(plural(1, 'node')).toBe('1 node');
    expect(plural(2, 'entry', 'entries')).toBe('2 entries');
  });

  it('gives each phase a tone', () => {
    expect([toneOf('Running'), toneOf('Migrating'), toneOf('Failed'), toneOf('Stopped'), toneOf('Unknown'), toneOf(undefined)]).toEqual(['good', 'busy', 'bad', 'idle', 'unknown', 'unknown']);
  });
});

describe('appendLog', () => {
  it('appends while under the limit', () => {
    expect(appendLog('a\n', 'b\n', 100)).toBe('a\nb\n');
  });

  it('drops the oldest whole lines past the limit', () => {
    expect(appendLog('line1\nline2\n', 'line3\n', 12)).toBe('line2\nline3\n');
    expect(appendLog('line1\nline2\n', 'line3\n', 11)).toBe('line3\n');
    expect(appendLog('one\ntwo\n', 'three\n', 11)).toBe('two\nthree\n');
  });

  it('cuts mid-line when a single line is longer than the limit', () => {
    expect(appendLog('', 'abcdefghij', 4)).toBe('ghij');
  });
});

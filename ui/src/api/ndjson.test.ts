import { describe, expect, it } from 'vitest';
import { LineSplitter, NdjsonDecoder } from './ndjson';

describe('LineSplitter', () => {
  it('keeps a line split across chunks until it is complete', () => {
    const s = new LineSplitter();
    expect(s.push('{"a":')).toEqual([]);
    expect(s.push('1}\n{"b"')).toEqual(['{"a":1}']);
    expect(s.push(':2}\n\n{"c":3}\n')).toEqual(['{"b":2}', '', '{"c":3}']);
    expect(s.flush()).toEqual([]);
  });

  it('returns an unterminated last line on flush', () => {
    const s = new LineSplitter();
    s.push('{"x":1}');
    expect(s.flush()).toEqual(['{"x":1}']);
    expect(s.flush()).toEqual([]);
  });
});

describe('NdjsonDecoder', () => {
  const bytes = (s: string) => new TextEncoder().encode(s);

  it('parses events split mid-line and mid-character, skipping keepalive blank lines', () => {
    const d = new NdjsonDecoder<{ type: string; object: { name: string } }>();
    const all = bytes('{"type":"ADDED","object":{"name":"café"}}\n\n{"type":"DELETED","object":{"name":"b"}}\n');
    const cut = all.indexOf(0xc3) + 1; // inside the two bytes of é
    expect(d.push(all.slice(0, cut))).toEqual([]);
    const rest = d.push(all.slice(cut, cut + 10));
    expect(rest).toEqual([{ type: 'ADDED', object: { name: 'café' } }]);
    expect(d.push(all.slice(cut + 10))).toEqual([{ type: 'DELETED', object: { name: 'b' } }]);
    expect(d.end()).toEqual([]);
  });

  it('parses a final line without a newline at the end', () => {
    const d = new NdjsonDecoder<{ n: number }>();
    expect(d.push(bytes('{"n":1}\n{"n":'))).toEqual([{ n: 1 }]);
    expect(d.push(bytes('2}'))).toEqual([]);
    expect(d.end()).toEqual([{ n: 2 }]);
  });

  it('throws on a line that is not JSON', () => {
    expect(() => new NdjsonDecoder().push(bytes('nope\n'))).toThrow();
  });
});

import { describe, expect, it } from 'vitest';
import { base64UrlEncode, closeExplanation, consoleProtocols } from './console-protocol';

describe('console subprotocols', () => {
  it('carries the token base64url-encoded without padding, next to the console protocol', () => {
    // "a?b>" is "YT9iPg==" in standard base64: both + / and padding must go.
    expect(base64UrlEncode('a?b>')).toBe('YT9iPg');
    expect(base64UrlEncode('\u00ff\u00fe')).toBe('w7_Dvg');
    expect(consoleProtocols('tok')).toEqual(['base64url.bearer.authorization.k8s.io.dG9r', 'console.cairn.dev']);
  });

  it('explains a close by its reason, else by its code', () => {
    expect(closeExplanation(1011, 'node node-b is down')).toBe('node node-b is down');
    expect(closeExplanation(1000, '')).toBe('the console session ended');
    expect(closeExplanation(4001, '')).toBe('closed with code 4001');
  });
});

/**
 * How the browser authenticates the console WebSocket: it cannot set an
 * Authorization header, so the token travels as a subprotocol
 * (`base64url.bearer.authorization.k8s.io.<token>`, as kube-apiserver
 * accepts), offered together with the console's own protocol, which the
 * server selects. Pure.
 */

/** The subprotocol the server selects. */
export const CONSOLE_PROTOCOL = 'console.cairn.dev';

const BEARER_PREFIX = 'base64url.bearer.authorization.k8s.io.';

/** Base64url of the UTF-8 bytes of `text`, without padding. */
export function base64UrlEncode(text: string): string {
  let binary = '';
  for (const byte of new TextEncoder().encode(text)) binary += String.fromCharCode(byte);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** The subprotocols to offer for a token. */
export function consoleProtocols(token: string): string[] {
  return [`${BEARER_PREFIX}${base64UrlEncode(token)}`, CONSOLE_PROTOCOL];
}

/** Why a console closed, in words, from a WebSocket close event. */
export function closeExplanation(code: number, reason: string): string {
  if (reason) return reason;
  if (code === 1000) return 'the console session ended';
  if (code === 1006) return 'the connection was lost (or refused: is the token allowed to open consoles, and is the VM running?)';
  return `closed with code ${code}`;
}

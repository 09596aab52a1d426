/**
 * The form of stored tokens: `<id>.<secret>`, where the id (10 characters,
 * a-z0-9) names the Token object and the secret (32 characters, base62) is
 * known only to its holder. Only the SHA-256 of the whole token is stored.
 */
import { createHash, randomInt } from 'node:crypto';

const ID_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';
const SECRET_ALPHABET = `${ID_ALPHABET}ABCDEFGHIJKLMNOPQRSTUVWXYZ`;
const TOKEN_FORM = /^([a-z0-9]{10})\.([A-Za-z0-9]{32})$/;

/** A freshly drawn token, its id, and the digest to store. */
export interface NewToken {
  id: string;
  token: string;
  secretHash: string;
}

/** The SHA-256 of a token as lowercase hex, the form tokens are stored and configured in. */
export function hashToken(token: string): string {
  return createHash('sha256').update(token, 'utf8').digest('hex');
}

function draw(alphabet: string, n: number): string {
  let out = '';
  for (let i = 0; i < n; i++) out += alphabet[randomInt(alphabet.length)];
  return out;
}

/** A new random token from the CSPRNG (about 190 bits of secret). */
export function newToken(): NewToken {
  const id = draw(ID_ALPHABET, 10);
  const token = `${id}.${draw(SECRET_ALPHABET, 32)}`;
  return { id, token, secretHash: hashToken(token) };
}

/** The id of a token of the stored form, or undefined for anything else. */
export function tokenId(token: string): string | undefined {
  return TOKEN_FORM.exec(token)?.[1];
}

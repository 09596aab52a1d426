/**
 * Bearer-token authentication. Only SHA-256 digests of tokens are held, so
 * a leaked configuration does not leak credentials, and a presented token
 * is compared against every known digest in constant time, so response
 * timing reveals neither which entry nor how much of a token matched.
 *
 * Concurrency: the authenticator is immutable after construction.
 * `ensureAdminCredentials` may race with itself across processes: the token
 * file is created with an exclusive link, so every caller ends up with the
 * one token that is on disk.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { createFileExclusive } from '../../api/atomic-write.js';
import { hashToken } from '../../api/token-format.js';
import type { Authenticator } from './authenticator.js';
import type { UserInfo } from './user.js';

/** One accepted token: its SHA-256 (hex) and the user it authenticates. */
export interface TokenEntry {
  sha256: string;
  user: UserInfo;
}

/** The admin token and its digest, as {@link ensureAdminCredentials} keeps them. */
export interface AdminCredentials {
  token: string;
  sha256: string;
}

const TOKEN_BYTES = 32;
const SHA256_HEX = /^[0-9a-f]{64}$/i;
// Printable ASCII without spaces: what survives an HTTP Authorization header intact.
const TOKEN_SYNTAX = /^[\x21-\x7e]+$/;

/** A new random token: 32 bytes from the CSPRNG, base64url-encoded (43 characters). */
export function generateToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

/** The token in an `Authorization: Bearer <token>` header, or undefined when there is none. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^(\S+)\s+(\S+)$/.exec(header?.trim() ?? '');
  if (!match || match[1].toLowerCase() !== 'bearer') return undefined;
  return match[2];
}

/** Recognises requests by bearer token against a fixed set of token digests. */
export class TokenAuthenticator implements Authenticator {
  private readonly entries: { digest: Buffer; user: UserInfo }[];

  /** Takes the accepted tokens' digests; throws when one is not 64 hex digits. */
  constructor(entries: TokenEntry[]) {
    this.entries = entries.map((e, i) => {
      if (!SHA256_HEX.test(e.sha256)) throw new Error(`token entry ${i} (${e.user.name}): sha256 must be 64 hex digits`);
      return { digest: Buffer.from(e.sha256, 'hex'), user: copyUser(e.user) };
    });
  }

  /** The user an `Authorization` header authenticates, or null for a missing, malformed or unknown token. */
  authenticate(authorizationHeader: string | undefined): { user: UserInfo } | null {
    const token = bearerToken(authorizationHeader);
    if (token === undefined) return null;
    const presented = createHash('sha256').update(token, 'utf8').digest();
    let found: UserInfo | null = null;
    // No early exit: every entry is compared, whichever one matches.
    for (const entry of this.entries) {
      const equal = timingSafeEqual(entry.digest, presented);
      if (equal && found === null) found = entry.user;
    }
    return found && { user: copyUser(found) };
  }
}

/** A copy callers may change without changing who a token is. */
export function copyUser(u: UserInfo): UserInfo {
  return { name: u.name, groups: [...u.groups], ...(u.node ? { node: { ...u.node } } : {}) };
}

async function readToken(file: string): Promise<string | undefined> {
  let content: string;
  try {
    content = await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
  const token = content.trim();
  if (!TOKEN_SYNTAX.test(token)) {
    throw new Error(`${file} does not hold a token (printable ASCII, no spaces); delete it to have a new one generated`);
  }
  return token;
}

// The token file may have been created or copied by hand; it must not stay readable by others.
async function restrictMode(file: string): Promise<void> {
  const { mode } = await fs.stat(file);
  if ((mode & 0o777 & ~0o600) !== 0) await fs.chmod(file, 0o600);
}

/** Loads the admin token from `<dataDir>/admin.token`, creating it (mode 0600) on first use. */
export async function ensureAdminCredentials(dataDir: string): Promise<AdminCredentials> {
  const file = path.join(dataDir, 'admin.token');
  await fs.mkdir(dataDir, { recursive: true, mode: 0o700 });
  let token = await readToken(file);
  if (token === undefined) {
    const fresh = generateToken();
    token = (await createFileExclusive(file, `${fresh}\n`, 0o600)) ? fresh : await readToken(file);
    if (token === undefined) throw new Error(`${file} vanished while it was being created`);
  }
  await restrictMode(file);
  return { token, sha256: hashToken(token) };
}

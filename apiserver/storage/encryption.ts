/**
 * Encryption at rest, like kube-apiserver's EncryptionConfiguration with
 * the aesgcm provider: values under the encrypted prefixes (Secrets) are
 * written as `k8s:enc:aesgcm:v1:<key name>:` + a random 12-byte nonce + the
 * AES-256-GCM ciphertext and tag, with the etcd key as additional data so a
 * value copied to another key does not open. The first key of the key file
 * seals; every key opens, so keys rotate without a stop (docs/security.md).
 * A value without the prefix is read as plain JSON: switching encryption on
 * keeps existing objects readable until they are written again.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';

const PREFIX = 'k8s:enc:aesgcm:v1:';
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const NAME = /^[a-z0-9][-a-z0-9.]{0,62}$/;

/** The keys under which Secrets are kept (kube encrypts secrets by default in its examples). */
export const ENCRYPTED_PREFIXES = ['/registry/secrets/'];

/** One named AES-256 key. */
export interface EncryptionKey {
  name: string;
  secret: Buffer;
}

/** Seals and opens the values of the encrypted prefixes. */
export class AtRestEncryption {
  private readonly byName: Map<string, Buffer>;

  constructor(
    private readonly keys: EncryptionKey[],
    private readonly prefixes: string[] = ENCRYPTED_PREFIXES,
  ) {
    if (keys.length === 0) throw new Error('encryption needs at least one key');
    this.byName = new Map(keys.map((k) => [k.name, k.secret]));
  }

  /** Whether values at `etcdKey` are sealed. */
  covers(etcdKey: string): boolean {
    return this.prefixes.some((p) => etcdKey.startsWith(p));
  }

  /** The value to store at `etcdKey`: sealed with the first key when the key is covered, else `plain` as is. */
  seal(etcdKey: string, plain: Buffer): Buffer {
    if (!this.covers(etcdKey)) return plain;
    const { name, secret } = this.keys[0]!;
    const nonce = crypto.randomBytes(NONCE_BYTES);
    const cipher = crypto.createCipheriv('aes-256-gcm', secret, nonce);
    cipher.setAAD(Buffer.from(etcdKey));
    const body = Buffer.concat([cipher.update(plain), cipher.final()]);
    return Buffer.concat([Buffer.from(`${PREFIX}${name}:`), nonce, body, cipher.getAuthTag()]);
  }

  /**
   * Whether the value stored at `etcdKey` is not sealed as a write now would seal it: plain under an
   * encrypted prefix, or sealed with a key other than the first. A write must then rewrite it even when
   * the object did not change: rewriting every Secret is how a key rotation moves them to the new key.
   */
  isStale(etcdKey: string, stored: Buffer): boolean {
    if (!this.covers(etcdKey)) return false;
    return !isSealed(stored) || sealedWith(stored).name !== this.keys[0]!.name;
  }

  /** The plain value stored at `etcdKey`; throws naming the key when it cannot be opened. */
  open(etcdKey: string, stored: Buffer): Buffer {
    if (!isSealed(stored)) return stored;
    const { name, end } = sealedWith(stored);
    const secret = this.byName.get(name);
    if (!secret) throw new Error(`${etcdKey} is encrypted with key "${name}", which the encryption key file does not hold; add it back (docs/security.md, "Encryption at rest")`);
    const nonce = stored.subarray(end + 1, end + 1 + NONCE_BYTES);
    const body = stored.subarray(end + 1 + NONCE_BYTES, stored.length - TAG_BYTES);
    const decipher = crypto.createDecipheriv('aes-256-gcm', secret, nonce);
    decipher.setAAD(Buffer.from(etcdKey));
    decipher.setAuthTag(stored.subarray(stored.length - TAG_BYTES));
    try {
      return Buffer.concat([decipher.update(body), decipher.final()]);
    } catch {
      throw new Error(`${etcdKey} does not open with key "${name}": the value was altered, moved from another key, or the key's secret changed`);
    }
  }
}

/** The name of the key a sealed value was sealed with, and where that name ends. */
function sealedWith(stored: Buffer): { name: string; end: number } {
  const end = stored.indexOf(':', PREFIX.length);
  return { name: stored.subarray(PREFIX.length, end).toString(), end };
}

/** Whether a stored value is sealed (by any key). */
export function isSealed(stored: Buffer): boolean {
  return stored.length > PREFIX.length && stored.subarray(0, PREFIX.length).toString() === PREFIX;
}

/** A fresh key named after today, e.g. `key-20261126-1a2b`. */
export function newKey(now = new Date()): EncryptionKey {
  const day = now.toISOString().slice(0, 10).replaceAll('-', '');
  return { name: `key-${day}-${crypto.randomBytes(2).toString('hex')}`, secret: crypto.randomBytes(KEY_BYTES) };
}

/** The key file's text: the first key seals, all open. */
export function formatKeyFile(keys: EncryptionKey[]): string {
  const header = [
    '# Cairn encryption at rest (AES-256-GCM). The first key encrypts every write of a Secret;',
    '# every key listed decrypts. Rotate: add a new key first, restart every apiserver, rewrite',
    '# all Secrets, then remove the old key (docs/security.md, "Encryption at rest").',
    '# Every apiserver of one etcd needs the same file. Keep it as secret as etcd itself.',
  ].join('\n');
  return `${header}\n${YAML.stringify({ keys: keys.map((k) => ({ name: k.name, secret: k.secret.toString('base64') })) })}`;
}

/** Reads the key file, checking every entry; throws naming the file and the entry at fault. */
export function parseKeyFile(file: string, text: string): EncryptionKey[] {
  const doc = YAML.parse(text) as { keys?: unknown } | null;
  if (!doc || !Array.isArray(doc.keys) || doc.keys.length === 0) throw new Error(`${file}: expected "keys:" with at least one entry of name and secret (base64 of ${KEY_BYTES} bytes)`);
  const seen = new Set<string>();
  return doc.keys.map((entry: unknown, i) => {
    const { name, secret } = (entry ?? {}) as { name?: unknown; secret?: unknown };
    if (typeof name !== 'string' || !NAME.test(name)) throw new Error(`${file}: keys[${i}].name must be lower-case letters, digits, '-' or '.', not ${JSON.stringify(name)}`);
    if (seen.has(name)) throw new Error(`${file}: keys[${i}].name ${JSON.stringify(name)} is listed twice`);
    seen.add(name);
    const bytes = typeof secret === 'string' ? Buffer.from(secret, 'base64') : Buffer.alloc(0);
    if (bytes.length !== KEY_BYTES) throw new Error(`${file}: keys[${i}].secret must be base64 of ${KEY_BYTES} random bytes (head -c 32 /dev/urandom | base64)`);
    return { name, secret: bytes };
  });
}

/** The keys of `file`, written with one new key first when the file does not exist. */
export function ensureKeyFile(file: string): EncryptionKey[] {
  try {
    return parseKeyFile(file, fs.readFileSync(file, 'utf8'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const keys = [newKey()];
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, formatKeyFile(keys), { mode: 0o600 });
  // A link appears whole and fails when the file exists: apiservers starting together on one data dir keep one key.
  try {
    fs.linkSync(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    return parseKeyFile(file, fs.readFileSync(file, 'utf8'));
  } finally {
    fs.rmSync(tmp, { force: true });
  }
  return keys;
}

/**
 * The only module that speaks etcd's KV API. Every write is a transaction
 * compared on the key's mod_revision (API.md): create requires the key to be
 * absent, update and delete require the revision the caller read. Results
 * say whether the comparison held; callers decide between Conflict, retry
 * and AlreadyExists.
 *
 * The client that sends writes (etcd/txn-client.ts) re-sends a transaction
 * that failed with a recoverable error (etcd3's default policy, three
 * attempts). When etcd committed the first
 * attempt but its answer was lost (a leader change: "etcdserver: leader
 * changed"), the re-sent compare fails on this very write. A failed create
 * or update therefore reads the key in the same transaction and counts as
 * done when what is stored is what it wrote; kube's etcd client avoids the
 * question by never re-sending a write that may have reached etcd, and
 * answers an error instead.
 */
import { Etcd3, type IKeyValue } from 'etcd3';
import { AmbiguousWriteError, etcd3Txns, type TxnSender } from '../etcd/txn-client.js';
import type { TxnIfMod } from '../etcd/txn-codec.js';
import { ApiError, expired } from '../errors.js';
import { decode, encode, type KubeObject } from './codec.js';
import type { AtRestEncryption } from './encryption.js';

/** An object as read from etcd. */
export interface Stored {
  obj: KubeObject;
  /** The key's mod_revision, which is also `obj.metadata.resourceVersion`. */
  rev: number;
  /** etcd's count of writes to the key since it was created (1 after the create). */
  version: number;
  /** Not sealed as a write now would seal it (encryption.ts isStale): a write must rewrite it even unchanged. */
  stale?: true;
}

/** The outcome of a compare-and-swap write. */
export type WriteResult =
  | { ok: true; rev: number }
  | { ok: false; current: Stored | null };

/** One page of a range read. */
export interface RangePage {
  kvs: IKeyValue[];
  /** From `range`, etcd's current revision (even for a read at an older one); from `scan`, the revision read at. */
  revision: number;
  more: boolean;
}

/** What one page of a scan aims at: 1,000 small objects, or a few of the biggest, so a relist's memory stays flat. */
export const PAGE_BYTES = 8 * 1024 * 1024;
// The first page of a scan, read before any value was seen: under 150 MiB even of the biggest objects, and one page for most lists.
const FIRST_PAGE_KEYS = 100;

const COMPACTED = /required revision has been compacted/;
const FUTURE = /required revision is a future revision/;

/** A thin, typed layer over an `etcd3` client. */
export class EtcdStore {
  /**
   * `observe`: told how long each get, create, update, delete and list took (etcd_request_duration_seconds).
   * `encryption`: seals the values of the kinds kept encrypted (Secrets) and opens them on every read.
   * `writes`: where the write transactions go (the apiserver's thin client; by default `client`).
   */
  constructor(
    readonly client: Etcd3,
    private readonly observe?: (operation: string, key: string, seconds: number) => void,
    private readonly encryption?: AtRestEncryption,
    private readonly writes: TxnSender = etcd3Txns(client),
  ) {}

  /** The object stored as `value` at `key` and mod_revision `rev` (opened first when sealed). */
  decode(key: string, value: Buffer, rev: string): KubeObject {
    return decode(this.encryption ? this.encryption.open(key, value) : value, rev);
  }

  /** The object in a key-value pair read from etcd. */
  toStored(kv: IKeyValue): Stored {
    const key = kv.key.toString();
    const stored: Stored = { obj: this.decode(key, kv.value, kv.mod_revision), rev: Number(kv.mod_revision), version: Number(kv.version) };
    if (this.encryption?.isStale(key, kv.value)) stored.stale = true;
    return stored;
  }

  // The bytes to store at `key`: the object's JSON, sealed when its kind is encrypted.
  private valueFor(key: string, obj: KubeObject): Buffer {
    const plain = encodeWithinLimit(obj);
    return this.encryption ? this.encryption.seal(key, plain) : plain;
  }

  // The uid of the object stored in `kv`; undefined for a value that is not one of ours.
  private storedUid(kv: IKeyValue): unknown {
    try {
      return this.decode(kv.key.toString(), kv.value, kv.mod_revision).metadata.uid;
    } catch {
      return undefined;
    }
  }

  private async timed<T>(operation: string, key: string, fn: () => Promise<T>): Promise<T> {
    if (!this.observe) return fn();
    const started = process.hrtime.bigint();
    try {
      return await fn();
    } finally {
      this.observe(operation, key, Number(process.hrtime.bigint() - started) / 1e9);
    }
  }

  /** Reads one key; null when absent. */
  async get(key: string): Promise<Stored | null> {
    const res = await this.timed('get', key, () => this.client.get(key).exec());
    const kv = res.kvs[0];
    return kv ? this.toStored(kv) : null;
  }

  /**
   * Puts `obj` at `key` only if the key does not exist (a failure returns no
   * current object). `obj.metadata.uid` must be new to this call: a key that
   * holds it was created by this very call, whose transaction the client
   * re-sent, so the create succeeded at the key's create revision.
   */
  async create(key: string, obj: KubeObject, lease?: string): Promise<WriteResult> {
    const res = await this.timed('create', key, () => this.txnIfMod(key, 0, { put: this.valueFor(key, obj), lease }));
    if (res.succeeded) return { ok: true, rev: res.rev };
    const uid = obj.metadata.uid;
    if (uid && res.kv && this.storedUid(res.kv) === uid) return { ok: true, rev: Number(res.kv.create_revision) };
    return { ok: false, current: null };
  }

  /**
   * Puts `obj` at `key` only if the key is still as `expected` was read. A
   * key written exactly once since, with exactly these bytes, was written by
   * this very call, whose transaction the client re-sent, so the update
   * succeeded at that revision. Written once since by someone else, this
   * call's write cannot have landed (it could only have been the next).
   * Written more than once since (or created again), it cannot tell: a
   * re-sent call then throws AmbiguousWriteError rather than report a
   * conflict, which an unpinned update would answer by applying its change
   * a second time.
   */
  async update(key: string, obj: KubeObject, expected: Stored, lease?: string): Promise<WriteResult> {
    const value = this.valueFor(key, obj);
    const res = await this.timed('update', key, () => this.txnIfMod(key, expected.rev, { put: value, lease }));
    if (res.succeeded) return { ok: true, rev: res.rev };
    const kv = res.kv;
    if (kv && Number(kv.version) === expected.version + 1 && kv.value.equals(value)) return { ok: true, rev: Number(kv.mod_revision) };
    if (res.resent && kv && (Number(kv.create_revision) > expected.rev || Number(kv.version) > expected.version + 1)) throw resentOverAnotherWrite(key);
    return { ok: false, current: kv ? this.toStored(kv) : null };
  }

  /**
   * Deletes `key` only if its mod_revision is still `expectedRev`. A re-sent call that finds the key
   * created again since cannot tell whether its first attempt deleted the earlier object: it throws
   * AmbiguousWriteError.
   */
  async delete(key: string, expectedRev: number): Promise<WriteResult> {
    const res = await this.timed('delete', key, () => this.txnIfMod(key, expectedRev, { delete: true }));
    if (res.succeeded) return { ok: true, rev: res.rev };
    if (res.resent && res.kv && Number(res.kv.create_revision) > expectedRev) throw resentOverAnotherWrite(key);
    return { ok: false, current: res.kv ? this.toStored(res.kv) : null };
  }

  /** Reads up to `limit` keys in [start, end) at `revision` (0 = current). */
  async range(start: string, end: string, revision = 0, limit = 0): Promise<RangePage> {
    return mapEtcdErrors(async () => {
      let b = this.client.getAll().inRange({ start, end });
      if (revision > 0) b = b.revision(revision);
      if (limit > 0) b = b.limit(limit);
      const res = await this.timed('list', start, () => b.exec());
      return { kvs: res.kvs, revision: Number(res.header.revision), more: res.more };
    });
  }

  /**
   * Reads every key in [start, end) page by page, all at one revision
   * (`revision`, or the first page's). A page holds at most `pageKeys` keys
   * (0: no count of its own), and fewer when the last page's values say more
   * would pass PAGE_BYTES; never so many that MAX_OBJECT_BYTES objects would
   * pass MAX_RECEIVE_BYTES.
   */
  async *scan(start: string, end: string, revision = 0, pageKeys = 0): AsyncGenerator<RangePage> {
    const most = pageKeys > 0 ? Math.min(pageKeys, MAX_PAGE_KEYS) : MAX_PAGE_KEYS;
    let keys = Math.min(most, FIRST_PAGE_KEYS);
    for (;;) {
      const page = await this.range(start, end, revision, keys);
      revision ||= page.revision;
      yield { ...page, revision };
      const last = page.kvs.at(-1);
      if (!page.more || !last) return;
      start = last.key.toString() + '\0';
      const bytes = page.kvs.reduce((n, kv) => n + kv.key.length + kv.value.length, 0);
      keys = Math.max(1, Math.min(most, Math.floor((PAGE_BYTES * page.kvs.length) / bytes)));
    }
  }

  /** The store's current revision. */
  async currentRevision(): Promise<number> {
    // A serializable=false read of an absent key costs one round trip and returns the header.
    const res = await this.client.get('\0').exec();
    return Number(res.header.revision);
  }

  /**
   * Compacts history up to `revision`; true if compaction happened, false if it already had.
   * `physical` waits until the space is free in the backend (before a defragmentation).
   */
  async compact(revision: number, physical = false): Promise<boolean> {
    try {
      await this.client.kv.compact({ revision: String(revision), physical });
      return true;
    } catch (err) {
      if (COMPACTED.test(String(err))) return false;
      throw err;
    }
  }

  /** Grants an etcd lease of `ttlSeconds`; returns its id. */
  async grantLease(ttlSeconds: number): Promise<string> {
    const res = await this.client.leaseClient.leaseGrant({ TTL: ttlSeconds, ID: 0 });
    return String(res.ID);
  }

  // Runs `then` if the key's mod_revision is `expectedRev` (0: the key is absent), else reads the key in the same transaction.
  private async txnIfMod(key: string, expectedRev: number, then: TxnIfMod['then']): Promise<{ succeeded: boolean; rev: number; kv?: IKeyValue; resent?: boolean }> {
    const res = await this.writes.txnIfMod({ key: Buffer.from(key), modRevision: expectedRev, then });
    return { succeeded: res.succeeded, rev: res.revision, kv: res.kv, resent: res.resent };
  }
}

// The first attempt may have been applied before the other write, or never.
function resentOverAnotherWrite(key: string): AmbiguousWriteError {
  return new AmbiguousWriteError(new Error(`re-sent, the write found ${key} written again by another client meanwhile`));
}

/** etcd refuses requests over 1.5 MiB by default; an object that big is the client's problem, said as such. */
export const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024 - 4096;

/**
 * The etcd client's gRPC receive limit: etcd's own Go client default
 * (math.MaxInt32), not grpc-js's 4 MiB, which a page of 1,000 keys or a watch
 * batch of big objects passes; etcd itself sends up to this much.
 */
export const MAX_RECEIVE_BYTES = 2 ** 31 - 1;

// Keys per page that fit MAX_RECEIVE_BYTES at MAX_OBJECT_BYTES a value plus 4 KiB of key and framing: 1,365.
const MAX_PAGE_KEYS = Math.floor(MAX_RECEIVE_BYTES / (MAX_OBJECT_BYTES + 4096));

function encodeWithinLimit(obj: KubeObject): Buffer {
  const bytes = Buffer.from(encode(obj));
  if (bytes.length > MAX_OBJECT_BYTES) {
    throw new ApiError(413, 'RequestEntityTooLarge', `${String(obj.kind)} "${obj.metadata.name}" would be ${bytes.length} bytes stored, over the ${MAX_OBJECT_BYTES}-byte limit; keep large data out of objects`);
  }
  return bytes;
}

/** True for etcd's "required revision has been compacted". */
export function isCompacted(err: unknown): boolean {
  return COMPACTED.test(String(err));
}

/** Runs `fn`, turning etcd's compaction and future-revision errors into API errors. */
export async function mapEtcdErrors<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (isCompacted(err)) throw expired('The resourceVersion for the provided list is too old.');
    if (FUTURE.test(String(err))) {
      throw new ApiError(504, 'Timeout', 'Too large resource version: the requested revision is not yet known to the store; retry shortly.', {
        causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }],
        retryAfterSeconds: 1,
      });
    }
    throw err;
  }
}

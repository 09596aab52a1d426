/**
 * The only module that speaks etcd's KV API. Every write is a transaction
 * compared on the key's mod_revision (API.md): create requires the key to be
 * absent, update and delete require the revision the caller read. Results
 * say whether the comparison held; callers decide between Conflict, retry
 * and AlreadyExists.
 */
import { Etcd3, type IKeyValue } from 'etcd3';
import { ApiError, expired } from '../errors.js';
import { decode, encode, type KubeObject } from './codec.js';

/** An object as read from etcd. */
export interface Stored {
  obj: KubeObject;
  /** The key's mod_revision, which is also `obj.metadata.resourceVersion`. */
  rev: number;
}

/** The outcome of a compare-and-swap write. */
export type WriteResult =
  | { ok: true; rev: number }
  | { ok: false; current: Stored | null };

/** One page of a range read. */
export interface RangePage {
  kvs: IKeyValue[];
  /** The store revision the page was read at. */
  revision: number;
  more: boolean;
}

const COMPACTED = /required revision has been compacted/;
const FUTURE = /required revision is a future revision/;

/** A thin, typed layer over an `etcd3` client. */
export class EtcdStore {
  constructor(readonly client: Etcd3) {}

  /** Reads one key; null when absent. */
  async get(key: string): Promise<Stored | null> {
    const res = await this.client.get(key).exec();
    const kv = res.kvs[0];
    return kv ? toStored(kv) : null;
  }

  /** Puts `obj` at `key` only if the key does not exist (a failure returns no current object). */
  async create(key: string, obj: KubeObject, lease?: string): Promise<WriteResult> {
    let put = this.client.put(key).value(encodeWithinLimit(obj));
    if (lease) put = put.lease(lease);
    const res = await this.client.if(key, 'Mod', '==', 0).then(put).commit();
    return res.succeeded ? { ok: true, rev: Number(res.header.revision) } : { ok: false, current: null };
  }

  /** Puts `obj` at `key` only if its mod_revision is still `expectedRev`. */
  async update(key: string, obj: KubeObject, expectedRev: number, lease?: string): Promise<WriteResult> {
    return this.putIf(key, obj, expectedRev, lease);
  }

  /** Deletes `key` only if its mod_revision is still `expectedRev`. */
  async delete(key: string, expectedRev: number): Promise<WriteResult> {
    const res = await this.client
      .if(key, 'Mod', '==', expectedRev)
      .then(this.client.delete().key(key))
      .else(this.client.get(key))
      .commit();
    return res.succeeded ? { ok: true, rev: Number(res.header.revision) } : { ok: false, current: firstKv(res) };
  }

  /** Reads up to `limit` keys in [start, end) at `revision` (0 = current). */
  async range(start: string, end: string, revision = 0, limit = 0): Promise<RangePage> {
    return mapEtcdErrors(async () => {
      let b = this.client.getAll().inRange({ start, end });
      if (revision > 0) b = b.revision(revision);
      if (limit > 0) b = b.limit(limit);
      const res = await b.exec();
      return { kvs: res.kvs, revision: Number(res.header.revision), more: res.more };
    });
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

  private async putIf(key: string, obj: KubeObject, expectedRev: number, lease?: string): Promise<WriteResult> {
    let put = this.client.put(key).value(encodeWithinLimit(obj));
    if (lease) put = put.lease(lease);
    const res = await this.client.if(key, 'Mod', '==', expectedRev).then(put).else(this.client.get(key)).commit();
    return res.succeeded ? { ok: true, rev: Number(res.header.revision) } : { ok: false, current: firstKv(res) };
  }
}

/** etcd refuses requests over 1.5 MiB by default; an object that big is the client's problem, said as such. */
export const MAX_OBJECT_BYTES = 1.5 * 1024 * 1024 - 4096;

function encodeWithinLimit(obj: KubeObject): string {
  const bytes = encode(obj);
  if (Buffer.byteLength(bytes) > MAX_OBJECT_BYTES) {
    throw new ApiError(413, 'RequestEntityTooLarge', `${String(obj.kind)} "${obj.metadata.name}" would be ${Buffer.byteLength(bytes)} bytes stored, over the ${MAX_OBJECT_BYTES}-byte limit; keep large data out of objects`);
  }
  return bytes;
}

/** The object in a key-value pair. */
export function toStored(kv: IKeyValue): Stored {
  return { obj: decode(kv.value, kv.mod_revision), rev: Number(kv.mod_revision) };
}

function firstKv(res: { responses: { response_range?: { kvs: IKeyValue[] } | null }[] }): Stored | null {
  const kv = res.responses[0]?.response_range?.kvs?.[0];
  return kv ? toStored(kv) : null;
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

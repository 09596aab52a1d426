/**
 * The protobuf bytes of the one transaction EtcdStore sends for every write
 * (etcd's rpc.proto, etcdserverpb.TxnRequest): "if the key's mod_revision is
 * R, then put or delete it, else read it", and of etcd's answer to it.
 *
 * The etcd3 client encodes through @grpc/proto-loader's reflection, which
 * costs more client CPU per write than the rest of the request (see
 * thin-kv.ts); this codec writes and reads only these fields, with
 * protobufjs's Writer and Reader. Field numbers are rpc.proto's and
 * kv.proto's (the test checks them against those files). Pure.
 */
import protobuf from 'protobufjs';
import type { IKeyValue } from 'etcd3';

const { Reader, Writer } = protobuf;

/** A transaction compared on one key's mod_revision (0: the key is absent). */
export interface TxnIfMod {
  key: Buffer;
  modRevision: number;
  /** What to do when the comparison holds; otherwise the key is read. */
  then: { put: Buffer; lease?: string } | { delete: true };
}

/** etcd's answer: whether the comparison held, the store's revision after it, and the key as read when it did not. */
export interface TxnOutcome {
  succeeded: boolean;
  revision: number;
  kv?: IKeyValue;
  /**
   * An earlier attempt of this transaction reached etcd without an answer, and this is the outcome of
   * re-sending it: a failed compare may then be the earlier attempt's own doing.
   */
  resent?: boolean;
}

// Wire types (protobuf encoding): 0 varint, 2 length-delimited.
const tag = (field: number, wireType: 0 | 2) => (field << 3) | wireType;
const COMPARE_TARGET_MOD = 2; // Compare.CompareTarget.Mod; result Equal is 0, the default, so not written

/** The TxnRequest's bytes. */
export function encodeTxnIfMod(t: TxnIfMod): Uint8Array {
  const w = Writer.create();
  w.uint32(tag(1, 2)).fork(); // compare
  w.uint32(tag(2, 0)).int32(COMPARE_TARGET_MOD);
  w.uint32(tag(3, 2)).bytes(t.key);
  w.uint32(tag(6, 0)).int64(t.modRevision); // mod_revision: in a oneof, so written even when 0
  w.ldelim();
  w.uint32(tag(2, 2)).fork(); // success: RequestOp
  if ('put' in t.then) {
    w.uint32(tag(2, 2)).fork(); // request_put
    w.uint32(tag(1, 2)).bytes(t.key);
    w.uint32(tag(2, 2)).bytes(t.then.put);
    if (t.then.lease) w.uint32(tag(3, 0)).int64(t.then.lease);
  } else {
    w.uint32(tag(3, 2)).fork(); // request_delete_range
    w.uint32(tag(1, 2)).bytes(t.key);
  }
  w.ldelim().ldelim();
  w.uint32(tag(3, 2)).fork(); // failure: RequestOp
  w.uint32(tag(1, 2)).fork(); // request_range
  w.uint32(tag(1, 2)).bytes(t.key);
  w.ldelim().ldelim();
  return w.finish();
}

/** The TxnResponse in `bytes`. */
export function decodeTxnOutcome(bytes: Uint8Array): TxnOutcome {
  const out: TxnOutcome = { succeeded: false, revision: 0 };
  eachField(Reader.create(bytes), bytes.length, (r, field, wireType) => {
    if (field === 1 && wireType === 2) out.revision = Number(headerRevision(r));
    else if (field === 2 && wireType === 0) out.succeeded = r.bool();
    else if (field === 3 && wireType === 2) {
      const kv = firstRangeKv(r);
      if (kv && !out.kv) out.kv = kv;
    } else return false;
    return true;
  });
  return out;
}

type FieldReader = (r: protobuf.Reader, field: number, wireType: number) => boolean;

// Calls `read` for each field up to `end` bytes from the reader's position; skips what it does not take.
function eachField(r: protobuf.Reader, length: number, read: FieldReader): void {
  const end = r.pos + length;
  while (r.pos < end) {
    const key = r.uint32();
    if (!read(r, key >>> 3, key & 7)) r.skipType(key & 7);
  }
}

function headerRevision(r: protobuf.Reader): string {
  let revision = '0';
  eachField(r, r.uint32(), (r, field, wireType) => {
    if (field !== 3 || wireType !== 0) return false;
    revision = int64(r);
    return true;
  });
  return revision;
}

// ResponseOp → response_range (1) → kvs (2): the first key-value, if any.
function firstRangeKv(r: protobuf.Reader): IKeyValue | undefined {
  let kv: IKeyValue | undefined;
  eachField(r, r.uint32(), (r, field, wireType) => {
    if (field !== 1 || wireType !== 2) return false;
    eachField(r, r.uint32(), (r, field, wireType) => {
      if (field !== 2 || wireType !== 2 || kv) return false;
      kv = keyValue(r);
      return true;
    });
    return true;
  });
  return kv;
}

function keyValue(r: protobuf.Reader): IKeyValue {
  const kv: IKeyValue = { key: Buffer.alloc(0), value: Buffer.alloc(0), create_revision: '0', mod_revision: '0', version: '0', lease: '0' };
  eachField(r, r.uint32(), (r, field, wireType) => {
    if (wireType === 2 && (field === 1 || field === 5)) kv[field === 1 ? 'key' : 'value'] = asBuffer(r.bytes());
    else if (wireType === 0 && field >= 2 && field <= 6 && field !== 5) kv[INT64_FIELDS[field]!] = int64(r);
    else return false;
    return true;
  });
  return kv;
}

const INT64_FIELDS: Record<number, 'create_revision' | 'mod_revision' | 'version' | 'lease'> = { 2: 'create_revision', 3: 'mod_revision', 4: 'version', 6: 'lease' };

// An int64 as the decimal string etcd3 gives (a lease id passes 2^53, so not a number).
function int64(r: protobuf.Reader): string {
  return String(r.int64());
}

function asBuffer(bytes: Uint8Array): Buffer {
  return Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);
}

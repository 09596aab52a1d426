/**
 * The slice of GlusterFS's management RPC a volfile server needs: ONC RPC
 * (RFC 5531) over a stream with record marking, XDR (RFC 4506), and the two
 * messages glusterd exchanges with a client about its volfile:
 * - the client's GETSPEC call (program GLUSTER HANDSHAKE 14398633 v2,
 *   procedure 2; arguments flags, key, xdata), answered with op_ret (the
 *   volfile's length), op_errno, the volfile text and empty xdata;
 * - the server's FETCHSPEC callback (program GLUSTER CBK 52743234 v1,
 *   procedure 1, no arguments): "your volfile changed, ask again"; the
 *   client then switches its graph without unmounting.
 * Pure encoding and decoding, no I/O. Numbers from GlusterFS's
 * rpc/rpc-lib/src/protocol-common.h and rpc/xdr/src/glusterfs*.x.
 */

export const HANDSHAKE_PROGRAM = 14398633;
export const HANDSHAKE_VERSION = 2;
export const GETSPEC = 2;
export const CALLBACK_PROGRAM = 52743234;
export const CALLBACK_VERSION = 1;
export const FETCHSPEC = 1;

const CALL = 0;
const REPLY = 1;
const LAST_FRAGMENT = 0x80000000;

/** An RPC call, decoded up to its arguments. */
export interface RpcCall {
  xid: number;
  program: number;
  version: number;
  procedure: number;
  args: Buffer;
}

/** Splits a stream into records (a record may span several fragments); keeps what is incomplete. */
export class RecordReader {
  private buffered = Buffer.alloc(0);
  private fragments: Buffer[] = [];

  /** Feeds bytes in; returns the records completed by them. */
  push(chunk: Buffer): Buffer[] {
    this.buffered = Buffer.concat([this.buffered, chunk]);
    const records: Buffer[] = [];
    while (this.buffered.length >= 4) {
      const header = this.buffered.readUInt32BE(0);
      const length = header & ~LAST_FRAGMENT;
      if (this.buffered.length < 4 + length) break;
      this.fragments.push(this.buffered.subarray(4, 4 + length));
      this.buffered = this.buffered.subarray(4 + length);
      if (header & LAST_FRAGMENT) {
        records.push(Buffer.concat(this.fragments));
        this.fragments = [];
      }
    }
    return records;
  }
}

/** A record as one last fragment. */
export function frame(record: Buffer): Buffer {
  const header = Buffer.alloc(4);
  header.writeUInt32BE((LAST_FRAGMENT | record.length) >>> 0);
  return Buffer.concat([header, record]);
}

/** XDR reading over a record. */
class XdrReader {
  private offset = 0;
  constructor(private readonly buf: Buffer) {}

  uint(): number {
    if (this.offset + 4 > this.buf.length) throw new RangeError('XDR record ends early');
    const v = this.buf.readUInt32BE(this.offset);
    this.offset += 4;
    return v;
  }

  opaque(): Buffer {
    const length = this.uint();
    if (this.offset + length > this.buf.length) throw new RangeError('XDR opaque runs past the record');
    const v = this.buf.subarray(this.offset, this.offset + length);
    this.offset += length + ((4 - (length % 4)) % 4);
    return v;
  }

  rest(): Buffer {
    return this.buf.subarray(this.offset);
  }
}

function uint(v: number): Buffer {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(v >>> 0);
  return b;
}

function opaque(data: Buffer): Buffer {
  return Buffer.concat([uint(data.length), data, Buffer.alloc((4 - (data.length % 4)) % 4)]);
}

/** The call in a record, or undefined for a reply (which a volfile server never expects). */
export function decodeCall(record: Buffer): RpcCall | undefined {
  const r = new XdrReader(record);
  const xid = r.uint();
  if (r.uint() !== CALL) return undefined;
  r.uint(); // RPC version 2
  const program = r.uint();
  const version = r.uint();
  const procedure = r.uint();
  r.uint(); // credential flavor: any is accepted
  r.opaque();
  r.uint(); // verifier flavor
  r.opaque();
  return { xid, program, version, procedure, args: r.rest() };
}

/** The key a GETSPEC call asks for. */
export function decodeGetspecKey(args: Buffer): string {
  const r = new XdrReader(args);
  r.uint(); // flags
  return r.opaque().toString('utf8');
}

/** The accepted, successful reply to call `xid` with `results`. */
export function encodeReply(xid: number, results: Buffer): Buffer {
  return frame(Buffer.concat([uint(xid), uint(REPLY), uint(0), uint(0), uint(0), uint(0), results]));
}

/** A reply refusing call `xid`: the program or procedure is not served here (RFC 5531 PROG_UNAVAIL 1, PROC_UNAVAIL 3). */
export function encodeUnavailable(xid: number, acceptStat: 1 | 3): Buffer {
  return frame(Buffer.concat([uint(xid), uint(REPLY), uint(0), uint(0), uint(0), uint(acceptStat)]));
}

/** GETSPEC's results: the volfile with its length in bytes as op_ret (the client writes that many bytes of it), or op_ret -1 with errno when there is none. */
export function encodeGetspecResult(spec: string | undefined, errno = 2): Buffer {
  const bytes = Buffer.from(spec ?? '', 'utf8');
  return Buffer.concat([uint(spec === undefined ? -1 : bytes.length), uint(spec === undefined ? errno : 0), opaque(bytes), opaque(Buffer.alloc(0))]);
}

/** The FETCHSPEC callback, as a call from the server to the client (AUTH_NONE). */
export function encodeFetchspec(xid: number): Buffer {
  return frame(Buffer.concat([uint(xid), uint(CALL), uint(2), uint(CALLBACK_PROGRAM), uint(CALLBACK_VERSION), uint(FETCHSPEC), uint(0), uint(0), uint(0), uint(0)]));
}

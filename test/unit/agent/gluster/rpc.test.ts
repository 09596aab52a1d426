/** The volfile server's ONC RPC and XDR codec — pure. */
import { expect } from 'chai';
import { decodeCall, decodeGetspecKey, encodeFetchspec, encodeGetspecResult, encodeReply, encodeUnavailable, frame, GETSPEC, HANDSHAKE_PROGRAM, RecordReader } from '../../../../agent/gluster/rpc.js';

const u32 = (...vs: number[]) => Buffer.concat(vs.map((v) => { const b = Buffer.alloc(4); b.writeUInt32BE(v >>> 0); return b; }));
const xdrString = (s: string) => { const b = Buffer.from(s); return Buffer.concat([u32(b.length), b, Buffer.alloc((4 - (b.length % 4)) % 4)]); };
/** A GETSPEC call as glusterfs sends it: AUTH_GLUSTERFS-style credentials with a body, flags, key, empty xdata. */
const getspec = (xid: number, key: string) => Buffer.concat([u32(xid, 0, 2, HANDSHAKE_PROGRAM, 2, GETSPEC, 390039), xdrString('cred-body!'), u32(0, 0), u32(0), xdrString(key), u32(0)]);

describe('gluster management RPC', () => {
  it('reassembles records split across chunks and fragments', () => {
    const record = getspec(7, 'glf/data');
    const twoFragments = Buffer.concat([u32(10), record.subarray(0, 10), u32(0x80000000 | (record.length - 10)), record.subarray(10)]);
    const reader = new RecordReader();
    expect(reader.push(twoFragments.subarray(0, 9))).to.deep.equal([]);
    const [whole, ...more] = reader.push(twoFragments.subarray(9));
    expect(more).to.deep.equal([]);
    expect(whole!.equals(record)).to.equal(true);
  });

  it('decodes a GETSPEC call and its key, skipping any credentials', () => {
    const call = decodeCall(getspec(7, 'glf/data'))!;
    expect(call).to.include({ xid: 7, program: HANDSHAKE_PROGRAM, version: 2, procedure: GETSPEC });
    expect(decodeGetspecKey(call.args)).to.equal('glf/data');
    expect(decodeCall(u32(7, 1, 0))).to.equal(undefined);
    expect(() => decodeCall(u32(7, 0, 2))).to.throw(RangeError);
  });

  it('answers with the volfile and its length as op_ret, or -1 and ENOENT', () => {
    const reply = encodeReply(7, encodeGetspecResult('volume x\nend-volume\n'));
    const [record] = new RecordReader().push(reply);
    expect(record!.subarray(0, 24).equals(u32(7, 1, 0, 0, 0, 0))).to.equal(true);
    expect(record!.subarray(24).equals(Buffer.concat([u32(20, 0), xdrString('volume x\nend-volume\n'), u32(0)]))).to.equal(true);
    expect(encodeGetspecResult(undefined).equals(Buffer.concat([u32(0xffffffff, 2, 0, 0)]))).to.equal(true);
    expect(encodeUnavailable(9, 3).equals(frame(u32(9, 1, 0, 0, 0, 3)))).to.equal(true);
  });

  it('calls FETCHSPEC back as program 52743234 v1 procedure 1 with no arguments', () => {
    expect(encodeFetchspec(3).equals(frame(u32(3, 0, 2, 52743234, 1, 1, 0, 0, 0, 0)))).to.equal(true);
  });
});

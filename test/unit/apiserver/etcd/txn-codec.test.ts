/**
 * The write transaction's protobuf bytes, checked against etcd's own
 * rpc.proto (as the etcd3 package ships it) read by protobufjs: what the
 * codec writes decodes to the intended TxnRequest, and a TxnResponse encoded
 * from rpc.proto decodes to the same outcome.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import { createRequire } from 'node:module';
import path from 'node:path';
import protobuf from 'protobufjs';
import { decodeTxnOutcome, encodeTxnIfMod, type TxnIfMod } from '../../../../apiserver/etcd/txn-codec.js';

const protoDir = path.join(path.dirname(createRequire(import.meta.url).resolve('etcd3/package.json')), 'proto');
const root = new protobuf.Root().loadSync(path.join(protoDir, 'rpc.proto'), { keepCase: true });
const TxnRequest = root.lookupType('etcdserverpb.TxnRequest');
const TxnResponse = root.lookupType('etcdserverpb.TxnResponse');
const asObject = { longs: String, enums: String, bytes: Buffer, defaults: true, oneofs: true };

const request = (t: TxnIfMod) => TxnRequest.toObject(TxnRequest.decode(encodeTxnIfMod(t)), asObject);
const outcome = (response: object) => decodeTxnOutcome(TxnResponse.encode(TxnResponse.fromObject(response)).finish());

// A lease id as etcd makes them: past 2^53, so only exact as a string.
const LEASE = '7587869416137261571';

describe('etcd write transaction codec', () => {
  it('writes "if mod_revision is R then put else read" as rpc.proto has it', () => {
    const r = request({ key: Buffer.from('/registry/a'), modRevision: 42, then: { put: Buffer.from('{"x":1}'), lease: LEASE } });
    expect(r.compare).to.have.length(1);
    expect(r.compare[0]).to.include({ result: 'Equal', target: 'Mod', mod_revision: '42', target_union: 'mod_revision' });
    expect(r.compare[0].key.toString()).to.equal('/registry/a');
    expect(r.success).to.have.length(1);
    const put = r.success[0].request_put;
    expect([put.key.toString(), put.value.toString(), put.lease]).to.deep.equal(['/registry/a', '{"x":1}', LEASE]);
    expect(r.failure).to.have.length(1);
    expect(r.failure[0].request_range.key.toString()).to.equal('/registry/a');
    expect(r.failure[0].request_range.range_end.length, 'one key, not a range').to.equal(0);
  });

  it('keeps a comparison with revision 0 (the key must be absent), which proto3 would drop outside a oneof', () => {
    const r = request({ key: Buffer.from('k'), modRevision: 0, then: { put: Buffer.from('v') } });
    expect(r.compare[0]).to.include({ target_union: 'mod_revision', mod_revision: '0' });
    expect(r.success[0].request_put.lease).to.equal('0');
  });

  it('writes a delete as request_delete_range of the one key', () => {
    const r = request({ key: Buffer.from('/registry/b'), modRevision: 7, then: { delete: true } });
    expect(r.success[0].request).to.equal('request_delete_range');
    expect(r.success[0].request_delete_range.key.toString()).to.equal('/registry/b');
    expect(r.success[0].request_delete_range.range_end.length).to.equal(0);
  });

  it('reads a failed comparison with the key as read', () => {
    const kv = { key: Buffer.from('/registry/a'), value: Buffer.from('{"y":2}'), create_revision: '3', mod_revision: '9', version: '4', lease: LEASE };
    const o = outcome({ header: { cluster_id: '1', member_id: '2', revision: '120', raft_term: '5' }, succeeded: false, responses: [{ response_range: { header: { revision: '120' }, kvs: [kv], count: '1' } }] });
    expect(o.succeeded).to.equal(false);
    expect(o.revision).to.equal(120);
    expect(o.kv).to.deep.equal(kv);
  });

  it('reads a failed comparison on an absent key as no key', () => {
    expect(outcome({ header: { revision: '8' }, succeeded: false, responses: [{ response_range: { header: { revision: '8' }, kvs: [] } }] })).to.deep.equal({ succeeded: false, revision: 8 });
  });

  it('reads a write that went through (a put or a delete answer, no key)', () => {
    expect(outcome({ header: { revision: '121' }, succeeded: true, responses: [{ response_put: { header: { revision: '121' } } }] })).to.deep.equal({ succeeded: true, revision: 121 });
    expect(outcome({ header: { revision: '122' }, succeeded: true, responses: [{ response_delete_range: { header: { revision: '122' }, deleted: '1' } }] })).to.deep.equal({ succeeded: true, revision: 122 });
  });

  it('round-trips any key, value and revision through rpc.proto', () => {
    const bytes = fc.uint8Array({ maxLength: 300 }).map((b) => Buffer.from(b));
    fc.assert(
      fc.property(bytes, bytes, fc.nat({ max: Number.MAX_SAFE_INTEGER }), fc.boolean(), (key, value, rev, del) => {
        const r = request({ key, modRevision: rev, then: del ? { delete: true } : { put: value } });
        expect(r.compare[0].key.equals(key)).to.equal(true);
        expect(r.compare[0].mod_revision).to.equal(String(rev));
        if (!del) expect(r.success[0].request_put.value.equals(value)).to.equal(true);
        const kv = { key, value, create_revision: String(rev), mod_revision: String(rev), version: '1', lease: '0' };
        expect(outcome({ header: { revision: String(rev) }, succeeded: false, responses: [{ response_range: { kvs: [kv] } }] })).to.deep.equal({ succeeded: false, revision: rev, kv });
      }),
    );
  });
});

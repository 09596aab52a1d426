/**
 * The apiserver's thin write client (apiserver/etcd/txn-client.ts) against a
 * real etcd: the outcomes EtcdStore relies on, a lease id kept exactly, a
 * member that never answers costing at most one deadline per write, a write
 * never sent to a member that is not serving yet, every member down
 * answered as the 503 clients retry, and a write that reached etcd without
 * an answer as a 504 they must not retry blindly.
 */
import { expect } from 'chai';
import { Etcd3, isRecoverableError } from 'etcd3';
import http2 from 'node:http2';
import net from 'node:net';
import winston from 'winston';
import { etcdHostPolicy, POINT_CALL_DEADLINE_MS } from '../../../apiserver/etcd/fault-handling.js';
import { GrpcChannel } from '../../../apiserver/etcd/grpc-channel.js';
import { ThinTxnClient } from '../../../apiserver/etcd/txn-client.js';
import { decodeTxnOutcome, encodeTxnIfMod } from '../../../apiserver/etcd/txn-codec.js';
import { toApiError } from '../../../apiserver/http/respond.js';
import { EtcdStore } from '../../../apiserver/storage/etcd-store.js';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../../../hack/etcd.js';

const policy = () => etcdHostPolicy((cause) => cause as Error);
const obj = (name: string, n: number) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, uid: `${name}-${n}` }, data: { n: String(n) } });

describe("the apiserver's thin etcd write client (real etcd)", function () {
  this.timeout(60_000);
  let etcd: ThrowawayEtcd;
  let client: Etcd3;
  const opened: Array<{ close(): void }> = [];
  const storeOver = (endpoints: string[]) => {
    const thin = new ThinTxnClient(endpoints, policy);
    opened.push(thin);
    return new EtcdStore(client, undefined, undefined, thin);
  };

  before(async () => {
    etcd = await startThrowawayEtcd();
    client = new Etcd3({ hosts: etcd.endpoint });
  });
  after(async () => {
    for (const o of opened) o.close();
    client?.close();
    await etcd?.cleanup();
  });

  it('creates, updates and deletes compared on the revision, and answers a failed compare with the key as stored', async () => {
    const store = storeOver([etcd.endpoint]);
    const created = await store.create('/t/a', obj('a', 1));
    expect(created.ok).to.equal(true);
    expect(await store.create('/t/a', obj('a', 2)), 'the key exists').to.deep.equal({ ok: false, current: null });
    const read = (await store.get('/t/a'))!;
    expect(read.rev).to.equal(created.ok && created.rev);
    const updated = await store.update('/t/a', obj('a', 3), read);
    expect(updated.ok).to.equal(true);
    const stale = await store.update('/t/a', obj('a', 4), read);
    expect(stale.ok).to.equal(false);
    expect(!stale.ok && stale.current?.obj.data).to.deep.equal({ n: '3' });
    expect((await store.delete('/t/a', read.rev)).ok, 'a delete at a stale revision').to.equal(false);
    expect((await store.delete('/t/a', updated.ok ? updated.rev : 0)).ok).to.equal(true);
    expect(await store.get('/t/a')).to.equal(null);
  });

  it('puts with a lease id past 2^53 exactly', async () => {
    const store = storeOver([etcd.endpoint]);
    const lease = await store.grantLease(60);
    expect(BigInt(lease) > BigInt(Number.MAX_SAFE_INTEGER), `etcd's lease ids are this big (${lease})`).to.equal(true);
    expect((await store.create('/t/leased', obj('leased', 1), lease)).ok).to.equal(true);
    const res = await client.get('/t/leased').exec();
    expect(res.kvs[0]!.lease).to.equal(lease);
  });

  it('passes over a member that never answers: one deadline at most per write', async () => {
    const silent = net.createServer(() => undefined); // accepts and never answers, like a member cut off
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    try {
      const store = storeOver([`http://127.0.0.1:${(silent.address() as net.AddressInfo).port}`, etcd.endpoint]);
      let slow = 0;
      for (let i = 0; i < 10; i++) {
        const started = Date.now();
        expect((await store.create(`/t/silent-${i}`, obj(`silent-${i}`, i))).ok).to.equal(true);
        const ms = Date.now() - started;
        expect(ms, `write ${i}`).to.be.below(POINT_CALL_DEADLINE_MS * 2.5);
        if (ms >= POINT_CALL_DEADLINE_MS) slow++;
      }
      expect(slow, 'writes that waited for the silent member').to.be.at.most(6);
    } finally {
      silent.close();
    }
  });

  it('never sends a write to a member that accepts connections but is not serving yet (a restarting etcd)', async () => {
    // etcd listens before it serves: a write queued there past its deadline would be applied once it serves,
    // after the client was told it failed. Until etcd sends its HTTP/2 settings, nothing may be sent.
    const received: Buffer[] = [];
    const starting = net.createServer((socket) => socket.on('data', (b: Buffer) => received.push(b)));
    await new Promise<void>((resolve) => starting.listen(0, '127.0.0.1', resolve));
    try {
      const store = storeOver([`http://127.0.0.1:${(starting.address() as net.AddressInfo).port}`]);
      const err = await store.create('/t/early', obj('early', 1)).catch((e: unknown) => e);
      expect(String(err)).to.match(/DEADLINE_EXCEEDED.*not serving yet; the write was not sent/);
      const frames = http2FrameTypes(Buffer.concat(received));
      expect(frames, 'the connection preface and settings went out').to.include(SETTINGS);
      expect(frames, 'frames sent (0 is DATA, 1 is HEADERS)').to.not.include.members([DATA, HEADERS]);
    } finally {
      starting.close();
    }
  });

  it('survives a reset of a channel that is still connecting: the waiting write fails as recoverable, the next one succeeds', async () => {
    // reset() after another write failed, while this channel connects: the session is destroyed before its
    // 'connect' event. That event's handler once threw on it, uncaught, and the API server exited.
    for (let i = 0; i < 3; i++) {
      const channel = new GrpcChannel(etcd.endpoint);
      opened.push(channel);
      const waiting = channel.unary('/etcdserverpb.KV/Txn', encodeTxnIfMod({ key: Buffer.from(`/t/reset-${i}`), modRevision: 0, then: { put: Buffer.from('x') } }), POINT_CALL_DEADLINE_MS);
      channel.reset();
      const err = await waiting.then(() => undefined, (e: unknown) => e);
      expect(err instanceof Error && isRecoverableError(err), String(err)).to.equal(true);
      await new Promise((r) => setTimeout(r, 50)); // the destroyed session's 'connect' comes after the call's end
      const outcome = decodeTxnOutcome(await channel.unary('/etcdserverpb.KV/Txn', encodeTxnIfMod({ key: Buffer.from(`/t/reset-${i}`), modRevision: 0, then: { put: Buffer.from('x') } }), POINT_CALL_DEADLINE_MS));
      expect(outcome.succeeded).to.equal(true);
    }
  });

  it('answers a write that reached etcd without an answer as 504 Timeout, without Retry-After: it may have been applied', async () => {
    // Serves HTTP/2 and takes the call, then never answers: a member that committed the write and lost its answer.
    const streams: http2.ServerHttp2Stream[] = [];
    const mute = http2.createServer();
    mute.on('stream', (stream) => streams.push(stream));
    await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
    try {
      const store = storeOver([`http://127.0.0.1:${(mute.address() as net.AddressInfo).port}`]);
      const err = await store.create('/t/ambiguous', obj('ambiguous', 1)).catch((e: unknown) => e);
      expect(streams.length, 'the write went out').to.be.at.least(1);
      const apiErr = toApiError(err, winston.createLogger({ silent: true }));
      expect(apiErr.code).to.equal(504);
      expect(apiErr.reason).to.equal('Timeout');
      expect(apiErr.message).to.match(/may or may not have been applied.*Read the object before retrying/);
      expect(apiErr.details?.retryAfterSeconds, 'client-go retries any verb on a 5xx with Retry-After').to.equal(undefined);
    } finally {
      for (const s of streams) s.destroy();
      mute.close();
    }
  });

  it("tells etcd's refusals from its open answers: no leader is 503 (nothing applied), a request timed out is 504 (it may still commit)", async () => {
    let details = '';
    const answering = http2.createServer();
    answering.on('stream', (stream) => stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '14', 'grpc-message': details }, { endStream: true }));
    await new Promise<void>((resolve) => answering.listen(0, '127.0.0.1', resolve));
    try {
      // A store each: the first one's failures open its member's circuit breaker.
      const code = async (message: string) => {
        const store = storeOver([`http://127.0.0.1:${(answering.address() as net.AddressInfo).port}`]);
        details = message;
        const err = await store.create(`/t/${message.length}`, obj('answered', 1)).catch((e: unknown) => e);
        return toApiError(err, winston.createLogger({ silent: true })).code;
      };
      expect(await code('etcdserver: no leader')).to.equal(503);
      expect(await code('etcdserver: request timed out')).to.equal(504);
      expect(await code('etcdserver: server stopped')).to.equal(504);
    } finally {
      answering.close();
    }
  });

  it('answers 503 when no member can be reached', async () => {
    const refusing = net.createServer();
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    const port = (refusing.address() as net.AddressInfo).port;
    await new Promise<void>((resolve) => refusing.close(() => resolve())); // a port nothing listens on
    const store = storeOver([`http://127.0.0.1:${port}`]);
    const err = await store.create('/t/nowhere', obj('nowhere', 1)).catch((e: unknown) => e);
    expect(String(err)).to.match(/UNAVAILABLE|circuit breaker is open/);
    expect(String(err)).to.include(`127.0.0.1:${port}`);
    expect(toApiError(err, winston.createLogger({ silent: true })).code).to.equal(503);
  });
});

const [DATA, HEADERS, SETTINGS] = [0, 1, 4];
const PREFACE_BYTES = 24; // "PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n"

// The types of the HTTP/2 frames a client sent, after its connection preface.
function http2FrameTypes(bytes: Buffer): number[] {
  const types: number[] = [];
  for (let at = PREFACE_BYTES; at + 9 <= bytes.length; at += 9 + bytes.readUIntBE(at, 3)) types.push(bytes[at + 3]!);
  return types;
}

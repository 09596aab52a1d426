/**
 * The etcd client's per-host policy: a NOSPACE refusal is the caller's
 * error, never a host failure, so it neither opens the breaker (which would
 * cut off reads) nor looks recoverable to etcd3 (which would retry it and
 * reconnect); refused connections still open the breaker.
 */
import { expect } from 'chai';
import { isBrokenCircuitError } from 'cockatiel';
import { castGrpcError, GRPCResourceExhastedError, isRecoverableError } from 'etcd3';
import { etcdCallOptions, etcdHostPolicy, isHostFailure, LONG_CALL_DEADLINE_MS, POINT_CALL_DEADLINE_MS } from '../../../../apiserver/etcd/fault-handling.js';
import { EtcdNoSpaceError, isNoSpace } from '../../../../apiserver/etcd/no-space.js';

// What etcd3 makes of etcd's answer under the alarm (gRPC code 8, RESOURCE_EXHAUSTED).
const noSpaceFromEtcd = () => castGrpcError(Object.assign(new Error('8 RESOURCE_EXHAUSTED: etcdserver: mvcc: database space exceeded'), { code: 8 }));
const refused = () => castGrpcError(Object.assign(new Error('14 UNAVAILABLE: No connection established. Last error: connect ECONNREFUSED 127.0.0.1:2379'), { code: 14 }));

describe('etcd host policy', () => {
  it('tells NOSPACE from a failing host', () => {
    expect(noSpaceFromEtcd()).to.be.instanceOf(GRPCResourceExhastedError);
    expect(isRecoverableError(noSpaceFromEtcd()), 'etcd3 alone would count it as a host failure').to.equal(true);
    expect(isNoSpace(noSpaceFromEtcd())).to.equal(true);
    expect(isHostFailure(noSpaceFromEtcd())).to.equal(false);
    expect(isHostFailure(refused())).to.equal(true);
  });

  it('turns NOSPACE into the caller\'s error and keeps serving through any number of them', async () => {
    let noted = 0;
    const policy = etcdHostPolicy((cause) => {
      noted++;
      return new EtcdNoSpaceError('cairn etcd defrag --etcd-endpoints http://127.0.0.1:2379', cause);
    });
    for (let i = 0; i < 10; i++) {
      const err = await policy.execute(() => Promise.reject(noSpaceFromEtcd())).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(EtcdNoSpaceError);
      expect(isRecoverableError(err as Error), 'etcd3 neither retries nor reconnects').to.equal(false);
    }
    expect(noted).to.equal(10);
    expect(await policy.execute(() => 'read')).to.equal('read');
  });

  it('opens on three failures of the host in a row', async () => {
    const policy = etcdHostPolicy(() => new Error('unused'));
    for (let i = 0; i < 3; i++) await policy.execute(() => Promise.reject(refused())).catch(() => undefined);
    const err = await policy.execute(() => 'read').catch((e: unknown) => e);
    expect(isBrokenCircuitError(err)).to.equal(true);
  });

  it('gives a single-key call a short deadline, a scan a long one, a stream none', () => {
    const left = (o: { deadline?: number }) => (o.deadline === undefined ? undefined : Math.round((o.deadline - Date.now()) / 1000) * 1000);
    const point = POINT_CALL_DEADLINE_MS;
    expect(left(etcdCallOptions({ service: 'KV', method: 'range', isStream: false, params: { key: Buffer.from('/registry/a') } }))).to.equal(point);
    expect(left(etcdCallOptions({ service: 'KV', method: 'txn', isStream: false, params: { compare: [], success: [] } }))).to.equal(point);
    expect(left(etcdCallOptions({ service: 'Lease', method: 'leaseGrant', isStream: false, params: { TTL: 10 } }))).to.equal(point);
    expect(left(etcdCallOptions({ service: 'KV', method: 'range', isStream: false, params: { key: Buffer.from('/registry/'), range_end: Buffer.from('/registry0') } }))).to.equal(LONG_CALL_DEADLINE_MS);
    expect(left(etcdCallOptions({ service: 'KV', method: 'compact', isStream: false, params: { revision: 5 } }))).to.equal(LONG_CALL_DEADLINE_MS);
    expect(etcdCallOptions({ service: 'Watch', method: 'watch', isStream: true })).to.deep.equal({});
  });
});

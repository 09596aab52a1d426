/**
 * Group commit against a real etcd (apiserver/etcd/group-commit.ts over the
 * thin client): writes that arrive together commit as one transaction at
 * one revision, each with the outcome it would have had alone (a create of
 * an existing key, a stale update), the batch size etcd must take at its
 * default limits, and a batch etcd refuses for one write's expired lease
 * costing only that write.
 */
import { expect } from 'chai';
import { Etcd3, EtcdLeaseInvalidError } from 'etcd3';
import { etcdHostPolicy } from '../../../apiserver/etcd/fault-handling.js';
import { GROUP_COMMIT_LIMITS, GroupCommit } from '../../../apiserver/etcd/group-commit.js';
import { ThinTxnClient } from '../../../apiserver/etcd/txn-client.js';
import { EtcdStore } from '../../../apiserver/storage/etcd-store.js';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../../../hack/etcd.js';

const obj = (name: string, n = 1) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, uid: `${name}-${n}` }, data: { n: String(n) } });

describe('group commit of writes (real etcd)', function () {
  this.timeout(60_000);
  let etcd: ThrowawayEtcd;
  let client: Etcd3;
  let thin: ThinTxnClient;
  let sizes: number[];
  let store: EtcdStore;

  before(async () => {
    etcd = await startThrowawayEtcd();
    client = new Etcd3({ hosts: etcd.endpoint });
    thin = new ThinTxnClient([etcd.endpoint], () => etcdHostPolicy((cause) => cause as Error));
  });
  beforeEach(() => {
    sizes = [];
    store = new EtcdStore(client, undefined, undefined, new GroupCommit(thin, (n) => sizes.push(n), { ...GROUP_COMMIT_LIMITS, inFlight: 1 }));
  });
  after(async () => {
    thin?.close();
    client?.close();
    await etcd?.cleanup();
  });

  it('commits the writes that waited as one transaction, each with the outcome it would have had alone', async () => {
    await store.create('/g/existing', obj('existing'));
    const old = (await store.get('/g/existing'))!;
    await store.update('/g/existing', obj('existing', 2), old);
    sizes = [];

    const [first, ...rest] = await Promise.all([
      store.create('/g/first', obj('first')),
      ...Array.from({ length: 20 }, (_, i) => store.create(`/g/c${i}`, obj(`c${i}`))),
      store.create('/g/existing', obj('existing', 3)),
      store.update('/g/existing', obj('existing', 4), old),
    ]);
    expect(sizes[0], 'the first write found the slot free').to.equal(1);
    expect(sizes.slice(1).reduce((a, b) => a + b, 0), 'the others').to.equal(22);
    expect(sizes.length, 'they went together').to.be.below(5);
    expect(first!.ok).to.equal(true);
    const created = rest.slice(0, 20);
    expect(created.every((r) => r.ok)).to.equal(true);
    const revisions = new Set(created.map((r) => r.ok && r.rev));
    expect(revisions.size, 'writes in one transaction share its revision').to.be.at.most(sizes.length - 1);
    const [exists, stale] = rest.slice(20);
    expect(exists, 'a create of an existing key').to.deep.equal({ ok: false, current: null });
    expect(!stale!.ok && stale!.current?.obj.data, 'a stale update gets the key as stored').to.deep.equal({ n: '2' });
    for (let i = 0; i < 20; i++) expect((await store.get(`/g/c${i}`))?.obj.metadata.name).to.equal(`c${i}`);
  });

  it('sends a batch as large as its limit, which etcd takes at its default --max-txn-ops', async () => {
    const n = GROUP_COMMIT_LIMITS.maxOps;
    const outcomes = await thin.txnBatch(Array.from({ length: n }, (_, i) => ({ key: Buffer.from(`/g/max${i}`), modRevision: 0, then: { put: Buffer.from('{}') } })));
    expect(outcomes.filter((o) => o.succeeded)).to.have.length(n);
    expect(new Set(outcomes.map((o) => o.revision)).size).to.equal(1);
  });

  it('costs only the write whose lease is gone when etcd refuses the whole batch for it', async () => {
    const lease = await store.grantLease(60);
    await client.leaseClient.leaseRevoke({ ID: lease });
    const writes = [store.create('/g/slot', obj('slot')), store.create('/g/l1', obj('l1')), store.create('/g/leased', obj('leased'), lease), store.create('/g/l2', obj('l2'))];
    const settled = await Promise.allSettled(writes);
    expect(settled.map((s) => s.status)).to.deep.equal(['fulfilled', 'fulfilled', 'rejected', 'fulfilled']);
    expect((settled[2] as PromiseRejectedResult).reason).to.be.instanceOf(EtcdLeaseInvalidError);
    expect(sizes, 'alone, a batch of three refused, then each alone').to.deep.equal([1, 3, 1, 1, 1]);
    expect(await store.get('/g/leased')).to.equal(null);
    expect((await store.get('/g/l2'))?.obj.metadata.name).to.equal('l2');
  });
});

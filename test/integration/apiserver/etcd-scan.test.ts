/**
 * EtcdStore.scan against a real etcd: every key once and in order, every
 * page at the first page's revision, and pages sized by bytes as well as
 * by count (issue 17, defect 1).
 */
import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../../../hack/etcd.js';
import { EtcdStore, PAGE_BYTES, type RangePage } from '../../../apiserver/storage/etcd-store.js';
import { prefixEnd } from '../../../apiserver/storage/watch-cache.js';

describe('EtcdStore.scan (real etcd)', function () {
  this.timeout(60_000);
  let etcd: ThrowawayEtcd;
  let store: EtcdStore;
  const BIG = 'x'.repeat(64 * 1024);
  const bigKeys = Array.from({ length: 300 }, (_, i) => `scan/big/${String(i).padStart(3, '0')}`);
  const smallKeys = Array.from({ length: 120 }, (_, i) => `scan/small/${String(i).padStart(3, '0')}`);

  const valueBytes = (page: RangePage) => page.kvs.reduce((n, kv) => n + kv.value.length, 0);
  const keysOf = (pages: RangePage[]) => pages.flatMap((p) => p.kvs.map((kv) => kv.key.toString()));

  before(async () => {
    etcd = await startThrowawayEtcd();
    store = new EtcdStore(new Etcd3({ hosts: etcd.endpoint, grpcOptions: { 'grpc.max_receive_message_length': 2 ** 31 - 1 } }));
    for (let i = 0; i < bigKeys.length; i += 50) await Promise.all(bigKeys.slice(i, i + 50).map((k) => store.client.put(k).value(BIG)));
    await Promise.all(smallKeys.map((k) => store.client.put(k).value('small')));
  });
  after(async () => {
    store?.client.close();
    await etcd?.cleanup();
  });

  it('pages big values by bytes: after the first page, none passes PAGE_BYTES', async () => {
    const pages: RangePage[] = [];
    for await (const page of store.scan('scan/big/', prefixEnd('scan/big/'), 0, 1000)) pages.push(page);
    expect(keysOf(pages)).to.deep.equal(bigKeys);
    expect(pages.length, 'pages for 19 MiB').to.be.at.least(3);
    for (const page of pages.slice(1)) expect(valueBytes(page)).to.be.at.most(PAGE_BYTES);
  });

  it('pages small values by count, all at the first page’s revision despite writes in between', async () => {
    const pages: RangePage[] = [];
    for await (const page of store.scan('scan/small/', prefixEnd('scan/small/'), 0, 50)) {
      pages.push(page);
      // Sorts last: a page read at the current revision would return it.
      if (pages.length === 1) await store.client.put('scan/small/zzz-late').value('late');
    }
    expect(keysOf(pages)).to.deep.equal(smallKeys);
    expect(pages.map((p) => p.kvs.length)).to.deep.equal([50, 50, 20]);
    expect(new Set(pages.map((p) => p.revision)).size, 'one revision').to.equal(1);
  });
});

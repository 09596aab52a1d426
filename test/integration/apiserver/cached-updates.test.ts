/**
 * Updates that start from the watch cache (as kube's GuaranteedUpdate does
 * with the cacher's object): a fresh cached state saves the etcd read; a
 * stale one must never decide the outcome: not a 409, not a refusal, not a
 * write skipped as unneeded. Real etcd; the cache is stood in for, so a
 * test can make it as stale as it likes.
 */
import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import winston from 'winston';
import { loadCrds } from '../../../apiserver/crd-loader.js';
import { ApiError } from '../../../apiserver/errors.js';
import { Registry } from '../../../apiserver/registry.js';
import type { ResourceDefinition } from '../../../apiserver/resources.js';
import { Namespaces } from '../../../apiserver/rest/namespaces.js';
import { ResourceStore, type WriteOptions } from '../../../apiserver/rest/resource-store.js';
import type { KubeObject } from '../../../apiserver/storage/codec.js';
import { EtcdStore, type Stored } from '../../../apiserver/storage/etcd-store.js';
import { LeaseManager } from '../../../apiserver/storage/lease-manager.js';
import { WatchCache } from '../../../apiserver/storage/watch-cache.js';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../../../hack/etcd.js';
import { instance } from '../../support/fixtures.js';
import { CRD_DIR } from '../../support/paths.js';

const NS = 'default';
const OPTS: WriteOptions = { dryRun: false, fieldValidation: 'Strict' };

/** An EtcdStore that counts its single-key reads. */
class CountingStore extends EtcdStore {
  gets = 0;
  override async get(key: string): Promise<Stored | null> {
    this.gets++;
    return super.get(key);
  }
}

describe('updates that start from the watch cache (real etcd)', function () {
  this.timeout(30_000);
  let etcd: ThrowawayEtcd;
  let client: Etcd3;
  let kv: CountingStore;
  let store: ResourceStore;
  let instances: ResourceDefinition;
  /** What the stand-in cache answers for any key. */
  let cachedState: Stored | undefined;

  before(async () => {
    etcd = await startThrowawayEtcd();
    client = new Etcd3({ hosts: etcd.endpoint });
    const registry = new Registry(loadCrds(CRD_DIR));
    instances = registry.find('cairn.dev', 'v1alpha1', 'instances')!;
    kv = new CountingStore(client);
    const cache = new WatchCache(kv, registry.defs, winston.createLogger({ silent: true }));
    const namespaces = new Namespaces(kv, cache, registry.find('cairn.dev', 'v1alpha1', 'clusters')!, new Date().toISOString());
    store = new ResourceStore({ etcd: kv, registry, namespaces, eventLeases: new LeaseManager(kv, 60), now: () => new Date(), cached: () => cachedState });
  });
  after(async () => {
    client?.close();
    await etcd?.cleanup();
  });

  const key = (name: string) => `/registry/cairn.dev/instances/${NS}/${name}`;
  const read = async (name: string) => (await new EtcdStore(client).get(key(name)))!;
  const withCpus = (cpus: number, rv?: string) => (o: KubeObject): KubeObject => ({ ...o, metadata: { ...o.metadata, ...(rv ? { resourceVersion: rv } : {}) }, spec: { ...o.spec, cpus } });

  /** Creates `name`, then changes it once more: returns its first and its current state. */
  async function twoVersions(name: string): Promise<{ old: Stored; now: Stored }> {
    cachedState = undefined;
    await store.create(instances, NS, instance(name, NS), OPTS);
    const old = await read(name);
    await store.update(instances, NS, name, 'main', withCpus(2), OPTS);
    return { old, now: await read(name) };
  }

  it('a fresh cached state saves the read: one write, no get', async () => {
    const { now } = await twoVersions('fresh');
    cachedState = now;
    const gets = kv.gets;
    const res = await store.update(instances, NS, 'fresh', 'main', withCpus(3, now.obj.metadata.resourceVersion), OPTS);
    expect(kv.gets - gets).to.equal(0);
    expect(res.obj.spec.cpus).to.equal(3);
    expect((await read('fresh')).obj.spec.cpus).to.equal(3);
  });

  it('a stale cached state does not turn an update pinned at the current version into a 409', async () => {
    const { old, now } = await twoVersions('pinned');
    cachedState = old;
    const res = await store.update(instances, NS, 'pinned', 'main', withCpus(4, now.obj.metadata.resourceVersion), OPTS);
    expect(res.obj.spec.cpus).to.equal(4);
    expect((await read('pinned')).obj.spec.cpus).to.equal(4);
  });

  it('an update pinned at a really stale version is still a 409', async () => {
    const { old } = await twoVersions('stale-pin');
    cachedState = old;
    const err = await store.update(instances, NS, 'stale-pin', 'main', withCpus(5, old.obj.metadata.resourceVersion), OPTS).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ApiError).and.include({ code: 409 });
  });

  it('a change that keeps the version it was given (pinned at the stale cached one) is made on the fresh state', async () => {
    const { old } = await twoVersions('kept-version');
    cachedState = old;
    await store.update(instances, NS, 'kept-version', 'main', withCpus(8), OPTS);
    expect((await read('kept-version')).obj.spec.cpus).to.equal(8);
  });

  it('a write the stale state makes look unneeded is still made', async () => {
    const { old } = await twoVersions('unneeded');
    cachedState = old; // cpus 1 in the cache, 2 in etcd
    await store.update(instances, NS, 'unneeded', 'main', withCpus(1), OPTS);
    expect((await read('unneeded')).obj.spec.cpus).to.equal(1);
  });

  it('a refusal that only the stale state causes is decided again on the fresh one', async () => {
    const { old } = await twoVersions('refused');
    cachedState = old;
    const onlyFromTwo = (o: KubeObject): KubeObject => {
      if (o.spec.cpus !== 2) throw new ApiError(422, 'Invalid', 'expected 2 cpus');
      return withCpus(6)(o);
    };
    await store.update(instances, NS, 'refused', 'main', onlyFromTwo, OPTS);
    expect((await read('refused')).obj.spec.cpus).to.equal(6);
  });

  it('an object deleted since it was cached is not found', async () => {
    const { now } = await twoVersions('gone');
    await client.delete().key(key('gone'));
    cachedState = now;
    const err = await store.update(instances, NS, 'gone', 'main', withCpus(7), OPTS).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ApiError).and.include({ code: 404 });
  });
});

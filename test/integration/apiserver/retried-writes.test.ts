/**
 * Defect 6 of issue 17: a write whose transaction committed but whose answer
 * was lost (an etcd leader change) is re-sent by the client's retry policy.
 * The retry's compare fails on the write's own result; the store must
 * recognise it and answer as if the first answer had arrived (201 with the
 * object, one object), while a genuine AlreadyExists or Conflict still
 * answers 409. Both write paths: the etcd3 client's (tools, tests) with the
 * loss injected inside it, and the apiserver's thin client with the loss
 * injected by a proxy in front of etcd.
 */
import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import winston from 'winston';
import { loadCrds } from '../../../apiserver/crd-loader.js';
import { Registry } from '../../../apiserver/registry.js';
import type { ResourceDefinition } from '../../../apiserver/resources.js';
import { Namespaces } from '../../../apiserver/rest/namespaces.js';
import { ResourceStore, type WriteOptions } from '../../../apiserver/rest/resource-store.js';
import type { KubeObject } from '../../../apiserver/storage/codec.js';
import { etcdHostPolicy } from '../../../apiserver/etcd/fault-handling.js';
import { etcd3Txns, ThinTxnClient, type TxnSender } from '../../../apiserver/etcd/txn-client.js';
import { EtcdStore } from '../../../apiserver/storage/etcd-store.js';
import { LeaseManager } from '../../../apiserver/storage/lease-manager.js';
import { WatchCache } from '../../../apiserver/storage/watch-cache.js';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../../../hack/etcd.js';
import { instance } from '../../support/fixtures.js';
import { startLossyGrpcProxy, type LossyGrpcProxy } from '../../support/lossy-grpc-proxy.js';
import { loseTxnAnswers, type LossyTxns } from '../../support/lossy-etcd.js';
import { CRD_DIR } from '../../support/paths.js';

const NS = 'default';
const OPTS: WriteOptions = { dryRun: false, fieldValidation: 'Strict' };

/** A write path with answers that can be lost. */
interface LossyWrites {
  sender: TxnSender;
  lossy: Pick<LossyTxns, 'sent' | 'lost'> & Pick<LossyGrpcProxy, 'loseNext'>;
  close(): Promise<void>;
}

const THIN_PATH = "the apiserver's thin client";

const WRITE_PATHS: Record<string, (client: Etcd3, endpoint: string) => Promise<LossyWrites>> = {
  'the etcd3 client': async (client) => ({ sender: etcd3Txns(client), lossy: loseTxnAnswers(client), close: async () => undefined }),
  [THIN_PATH]: async (_client, endpoint) => {
    const proxy = await startLossyGrpcProxy(endpoint);
    const thin = new ThinTxnClient([proxy.endpoint], () => etcdHostPolicy((cause) => cause as Error));
    return { sender: thin, lossy: proxy, close: async () => (thin.close(), await proxy.close()) };
  },
};

for (const [path, connect] of Object.entries(WRITE_PATHS)) describe(`writes retried after their commit answer was lost (real etcd, ${path})`, function () {
  this.timeout(30_000);
  let etcd: ThrowawayEtcd;
  let client: Etcd3;
  let writes: LossyWrites;
  let lossy: LossyWrites['lossy'];
  let store: ResourceStore;
  let instances: ResourceDefinition;

  before(async () => {
    etcd = await startThrowawayEtcd();
    client = new Etcd3({ hosts: etcd.endpoint });
    writes = await connect(client, etcd.endpoint);
    lossy = writes.lossy;
    const registry = new Registry(loadCrds(CRD_DIR));
    instances = registry.find('cairn.dev', 'v1alpha1', 'instances')!;
    const kv = new EtcdStore(client, undefined, undefined, writes.sender);
    const cache = new WatchCache(kv, registry.defs, winston.createLogger({ silent: true }));
    const namespaces = new Namespaces(kv, cache, registry.find('cairn.dev', 'v1alpha1', 'clusters')!, new Date().toISOString());
    store = new ResourceStore({ etcd: kv, registry, namespaces, eventLeases: new LeaseManager(kv, 60), now: () => new Date() });
  });
  after(async () => {
    await writes?.close();
    client?.close();
    await etcd?.cleanup();
  });

  /** Every stored Instance in NS, straight from etcd. */
  async function stored(): Promise<KubeObject[]> {
    const values = await client.getAll().prefix(`/registry/cairn.dev/instances/${NS}/`).strings();
    return Object.values(values).map((v) => JSON.parse(v) as KubeObject);
  }

  /** Runs `write` with the answer of its next transaction lost; checks the client did re-send it. */
  async function withLostAnswer<T>(write: () => Promise<T>): Promise<T> {
    const before = { sent: lossy.sent, lost: lossy.lost };
    lossy.loseNext();
    const out = await write();
    expect(lossy.lost - before.lost, 'answers lost').to.equal(1);
    expect(lossy.sent - before.sent, 'transactions sent (the first and its retry)').to.equal(2);
    return out;
  }

  it('a create answers created with its object, and stores one object', async () => {
    const res = await withLostAnswer(() => store.create(instances, NS, instance('named', NS), OPTS));
    expect(res.created).to.equal(true);
    const objects = (await stored()).filter((o) => o.metadata.name === 'named');
    expect(objects).to.have.length(1);
    expect(objects[0]!.metadata.uid).to.equal(res.obj.metadata.uid);
    const current = await new EtcdStore(client).get(`/registry/cairn.dev/instances/${NS}/named`);
    expect(res.obj.metadata.resourceVersion).to.equal(String(current!.rev));
  });

  it('a create with generateName answers its object and does not create a second one', async () => {
    const body = { ...instance('', NS), metadata: { generateName: 'gen-', namespace: NS } };
    const res = await withLostAnswer(() => store.create(instances, NS, body, OPTS));
    expect(res.created).to.equal(true);
    const generated = (await stored()).filter((o) => o.metadata.generateName === 'gen-');
    expect(generated.map((o) => o.metadata.name)).to.deep.equal([res.obj.metadata.name]);
  });

  it('a create of a name another request created still answers 409 AlreadyExists', async () => {
    const first = await store.create(instances, NS, instance('taken', NS), OPTS);
    const err = await store.create(instances, NS, instance('taken', NS), OPTS).catch((e: unknown) => e);
    expect(err).to.include({ code: 409, reason: 'AlreadyExists' });
    const objects = (await stored()).filter((o) => o.metadata.name === 'taken');
    expect(objects.map((o) => o.metadata.uid)).to.deep.equal([first.obj.metadata.uid]);
  });

  it('an update pinned to the resourceVersion it read answers its object at the new version', async () => {
    const created = await store.create(instances, NS, instance('pinned', NS), OPTS);
    const next = { ...created.obj, spec: { ...created.obj.spec, cpus: 3 } };
    const res = await withLostAnswer(() => store.update(instances, NS, 'pinned', 'main', () => structuredClone(next), OPTS));
    expect(res.obj.spec.cpus).to.equal(3);
    expect(res.obj.metadata.generation).to.equal(2);
    const current = await new EtcdStore(client).get(`/registry/cairn.dev/instances/${NS}/pinned`);
    expect(res.obj.metadata.resourceVersion).to.equal(String(current!.rev));
    expect(current!.obj.spec.cpus).to.equal(3);
  });

  it('a delete answers with the object it deleted, not NotFound', async () => {
    await store.create(instances, NS, instance('deleted', NS), OPTS);
    const res = await withLostAnswer(() => store.delete(instances, NS, 'deleted', {}, false));
    expect(res.metadata.name).to.equal('deleted');
    expect((await stored()).filter((o) => o.metadata.name === 'deleted')).to.deep.equal([]);
  });

  it('an update that removes the last finalizer of an object being deleted answers the object it deleted; an apply does not create it again', async () => {
    // Pinned to its version (the controller's patch), unpinned (kubectl patch), and a server-side apply.
    for (const [name, pinned, createIfMissing] of [['finalized', true, false], ['patched', false, false], ['applied', false, true]] as const) {
      await store.create(instances, NS, { ...instance(name, NS), metadata: { name, namespace: NS, finalizers: ['example.com/hold'] } }, OPTS);
      await store.delete(instances, NS, name, {}, false);
      const unfinalized = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, finalizers: [], resourceVersion: pinned ? o.metadata.resourceVersion : undefined } });
      const res = await withLostAnswer(() => store.update(instances, NS, name, 'main', unfinalized, { ...OPTS, createIfMissing }));
      expect(res.obj.metadata.name).to.equal(name);
      expect((await stored()).filter((o) => o.metadata.name === name), `${name}: gone, and not created again`).to.deep.equal([]);
    }
  });

  it('an update that lost its race to another writer still fails its compare, its answer lost or not', async () => {
    const kv = new EtcdStore(client, undefined, undefined, writes.sender);
    await store.create(instances, NS, instance('raced', NS), OPTS);
    const key = `/registry/cairn.dev/instances/${NS}/raced`;
    const read = (await kv.get(key))!;
    const theirs = await store.update(instances, NS, 'raced', 'main', (o) => ({ ...o, spec: { ...o.spec, cpus: 2 } }), OPTS);
    const res = await withLostAnswer(() => kv.update(key, { ...read.obj, spec: { ...read.obj.spec, cpus: 4 } }, read));
    expect(res.ok).to.equal(false);
    expect((await kv.get(key))!.rev).to.equal(Number(theirs.obj.metadata.resourceVersion));
  });

  // Only the thin client knows a re-sent transaction from a first one: the etcd3 client retries inside itself.
  if (path === THIN_PATH) {
    it('an unpinned update re-sent over another client\'s write meanwhile is ambiguous (504), not applied twice', async () => {
      const key = `/registry/cairn.dev/instances/${NS}/counted`;
      await store.create(instances, NS, instance('counted', NS), OPTS);
      const theirs = async () => {
        const now = JSON.parse((await client.get(key).string())!) as KubeObject;
        await client.put(key).value(JSON.stringify({ ...now, metadata: { ...now.metadata, labels: { other: 'writer' } } }));
      };
      const before = lossy.lost;
      lossy.loseNext(1, theirs);
      const add = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined }, spec: { ...o.spec, cpus: (o.spec as { cpus: number }).cpus + 1 } });
      const err = await store.update(instances, NS, 'counted', 'main', add, OPTS).then(() => undefined, (e: unknown) => e);
      expect(lossy.lost - before).to.equal(1);
      expect(String(err)).to.match(/may or may not have been applied.*written again by another client/);
      const now = JSON.parse((await client.get(key).string())!) as KubeObject;
      expect((now.spec as { cpus: number }).cpus, 'the change applied once').to.equal((instance('counted', NS).spec as { cpus: number }).cpus + 1);
      expect(now.metadata.labels).to.deep.equal({ other: 'writer' });
    });
  }
});

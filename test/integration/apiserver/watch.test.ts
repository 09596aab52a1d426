/**
 * Watches against a real etcd: initial state then live events, resuming
 * from a resourceVersion, selector transitions (label and spec.nodeName),
 * timeoutSeconds, bookmarks and keepalive newlines, 410 from a compacted
 * revision, and Table events.
 */
import https from 'node:https';
import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import { EtcdStore } from '../../../apiserver/storage/etcd-store.js';
import { cairnPath, cluster, instance, workItem, TABLE_ACCEPT } from '../../support/fixtures.js';
import { sleep } from '../../support/eventually.js';
import { rawRequest, type RawResponse } from '../../support/http.js';
import { kubeconfigFor, startTestEnv, type TestEnv } from '../../support/in-process.js';
import { openWatch, type WireEvent } from '../../support/watch-stream.js';

const MERGE = 'application/merge-patch+json';
const summary = (evs: WireEvent[]) => evs.map((e) => `${e.type} ${e.object?.metadata?.name ?? ''}`.trim());


describe('apiserver watch (real etcd)', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let store: EtcdStore;
  const closers: (() => void)[] = [];

  const req = (method: string, path: string, body?: unknown, contentType?: string): Promise<RawResponse> =>
    rawRequest(env.kubeconfig, { method, path, body: body === undefined ? undefined : JSON.stringify(body), contentType });
  const ok = async (method: string, path: string, body?: unknown, contentType?: string): Promise<any> => {
    const r = await req(method, path, body, contentType);
    expect(r.status, `${method} ${path}: ${r.text}`).to.be.oneOf([200, 201]);
    return r.json;
  };
  const watch = async (path: string, headers: Record<string, string> = {}, kc = env.kubeconfig) => {
    const w = await openWatch(kc, path, headers);
    closers.push(w.close);
    return w;
  };

  before(async () => {
    env = await startTestEnv({ watchKeepaliveMs: 300 });
    store = new EtcdStore(new Etcd3({ hosts: env.etcd.endpoint }));
    for (const c of ['w-init', 'w-rv', 'w-same', 'w-big', 'w-label', 'w-node', 'w-node2', 'w-idle', 'w-table', 'w-compact', 'w-list', 'w-meta']) await ok('POST', cairnPath('clusters'), cluster(c));
  });
  after(async () => {
    for (const c of closers) c();
    store?.client.close();
    await env?.stop();
  });

  it('without resourceVersion: synthetic ADDED for existing objects, then live events', async () => {
    const ns = 'w-init';
    for (const n of ['a', 'b']) await ok('POST', cairnPath('instances', ns), instance(n, ns));
    const w = await watch(`${cairnPath('instances', ns)}?watch=true`);
    await w.until((e) => e.length >= 2, 5000);
    expect(summary(w.events).sort()).to.deep.equal(['ADDED a', 'ADDED b']);
    await ok('POST', cairnPath('instances', ns), instance('c', ns));
    await ok('PATCH', cairnPath('instances', ns, 'c'), { spec: { cpus: 2 } }, MERGE);
    await ok('DELETE', cairnPath('instances', ns, 'c'));
    await w.until((e) => e.some((x) => x.type === 'DELETED'), 5000);
    await sleep(200);
    expect(summary(w.events.slice(2))).to.deep.equal(['ADDED c', 'MODIFIED c', 'DELETED c']);
  });

  it('a WatchList (sendInitialEvents=true, client-go streaming lists): ADDED per object, a bookmark marked as the end of them, then live events', async () => {
    const ns = 'w-list';
    for (const n of ['a', 'b']) await ok('POST', cairnPath('instances', ns), instance(n, ns));
    // a is now newer than b: the initial events, in key order, are not in version order.
    await ok('PATCH', cairnPath('instances', ns, 'a'), { spec: { cpus: 2 } }, MERGE);
    const listed = await ok('GET', cairnPath('instances', ns));
    const w = await watch(`${cairnPath('instances', ns)}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${listed.metadata.resourceVersion}`);
    await w.until((e) => e.some((x) => x.type === 'BOOKMARK'), 5000);
    const end = w.events.findIndex((x) => x.type === 'BOOKMARK');
    expect(summary(w.events.slice(0, end)).sort()).to.deep.equal(['ADDED a', 'ADDED b']);
    const mark = w.events[end]!.object!.metadata!;
    expect(mark.annotations).to.deep.equal({ 'k8s.io/initial-events-end': 'true' });
    expect(Number(mark.resourceVersion)).to.be.at.least(Number(listed.metadata.resourceVersion));
    await ok('POST', cairnPath('instances', ns), instance('c', ns));
    await w.until((e) => e.some((x) => x.type === 'ADDED' && x.object?.metadata?.name === 'c'), 5000);

    // sendInitialEvents=false from "now": live events only.
    const live = await watch(`${cairnPath('instances', ns)}?watch=1&sendInitialEvents=false&resourceVersionMatch=NotOlderThan`);
    await sleep(300);
    await ok('POST', cairnPath('instances', ns), instance('d', ns));
    await live.until((e) => e.length >= 1, 5000);
    expect(summary(live.events)).to.deep.equal(['ADDED d']);
  });

  it("a WatchList larger than a stream's cap (16 MiB) is sent whole, not cut off at once (its client could never sync)", async () => {
    const ns = 'w-big';
    const filler = 'x'.repeat(200 * 1024);
    for (let i = 0; i < 90; i++) await ok('POST', cairnPath('instances', ns), { ...instance(`big-${i}`, ns), metadata: { name: `big-${i}`, namespace: ns, annotations: { filler } } });
    const listed = await ok('GET', cairnPath('instances', ns));
    const w = await watch(`${cairnPath('instances', ns)}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true&resourceVersion=${listed.metadata.resourceVersion}`);
    await w.until((e) => e.some((x) => x.type === 'BOOKMARK'), 20_000).catch(() => undefined);
    expect(w.events.filter((x) => x.type === 'ADDED')).to.have.length(90);
    expect(w.events.some((x) => x.type === 'BOOKMARK'), 'the end of the initial events').to.equal(true);
  });

  it('metadata only (as=PartialObjectMetadata, client-go\'s metadata informers): get, list and watch send PartialObjectMetadata', async () => {
    const ns = 'w-meta';
    await ok('POST', cairnPath('instances', ns), instance('m1', ns));
    const accept = (as: string) => ({ Accept: `application/vnd.kubernetes.protobuf;as=${as};g=meta.k8s.io;v=v1,application/json;as=${as};g=meta.k8s.io;v=v1,application/json` });
    const one = await rawRequest(env.kubeconfig, { path: cairnPath('instances', ns, 'm1'), headers: accept('PartialObjectMetadata') });
    expect(one.json).to.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
    expect(Object.keys(one.json).sort()).to.deep.equal(['apiVersion', 'kind', 'metadata']);
    expect(one.json.metadata).to.include({ name: 'm1', namespace: ns });
    const list = await rawRequest(env.kubeconfig, { path: cairnPath('instances', ns), headers: accept('PartialObjectMetadataList') });
    expect(list.json).to.include({ kind: 'PartialObjectMetadataList', apiVersion: 'meta.k8s.io/v1' });
    expect(list.json.items.map((i: { kind: string; metadata: { name: string }; spec?: unknown }) => [i.kind, i.metadata.name, i.spec])).to.deep.equal([['PartialObjectMetadata', 'm1', undefined]]);
    const w = await watch(`${cairnPath('instances', ns)}?watch=1&resourceVersion=${list.json.metadata.resourceVersion}`, accept('PartialObjectMetadata'));
    await ok('PATCH', cairnPath('instances', ns, 'm1'), { metadata: { labels: { seen: 'yes' } } }, MERGE);
    await w.until((e) => e.length >= 1, 5000);
    expect(w.events[0]!.type).to.equal('MODIFIED');
    expect(w.events[0]!.object).to.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
    expect(w.events[0]!.object!.metadata!.labels).to.deep.equal({ seen: 'yes' });
    expect((w.events[0]!.object as Record<string, unknown>).spec).to.equal(undefined);
  });

  it('refuses WatchList options kube refuses, naming the field', async () => {
    const path = `${cairnPath('instances', 'w-list')}?watch=1`;
    const cases: Array<[string, string]> = [
      ['&sendInitialEvents=true&allowWatchBookmarks=true', 'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to NotOlderThan'],
      ['&sendInitialEvents=true&resourceVersionMatch=NotOlderThan', 'allowWatchBookmarks: Forbidden: allowWatchBookmarks must be set to true when sendInitialEvents is set to true'],
      ['&resourceVersionMatch=NotOlderThan', 'resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided'],
    ];
    for (const [query, message] of cases) {
      const r = await req('GET', path + query);
      expect(r.status, query).to.equal(422);
      expect(r.json.message, query).to.contain(message);
    }
  });

  it('watch=True (what Python clients send) watches, as kube reads query booleans; watch=False lists', async () => {
    const ns = 'w-init';
    const w = await watch(`${cairnPath('instances', ns)}?watch=True`);
    await w.until((e) => e.length >= 2, 5000);
    expect(summary(w.events).sort()).to.deep.equal(['ADDED a', 'ADDED b']);
    const list = await ok('GET', `${cairnPath('instances', ns)}?watch=False`);
    expect(list.kind).to.equal('InstanceList');
  });

  it('resourceVersion=N: exactly the events after N, in order; DELETED carries the last state at the deletion revision', async () => {
    const ns = 'w-rv';
    await ok('POST', cairnPath('instances', ns), instance('before', ns));
    const n = (await ok('GET', cairnPath('instances', ns))).metadata.resourceVersion as string;
    const created = await ok('POST', cairnPath('instances', ns), instance('d', ns));
    const patched = await ok('PATCH', cairnPath('instances', ns, 'd'), { spec: { cpus: 3 }, metadata: { labels: { x: 'y' } } }, MERGE);
    await ok('DELETE', cairnPath('instances', ns, 'd'));
    const deletedAt = await store.currentRevision();
    const e = await ok('POST', cairnPath('instances', ns), instance('e', ns));
    const w = await watch(`${cairnPath('instances', ns)}?watch=true&resourceVersion=${n}`);
    await w.until((evs) => evs.length >= 4, 5000);
    await sleep(300);
    expect(summary(w.events)).to.deep.equal(['ADDED d', 'MODIFIED d', 'DELETED d', 'ADDED e']);
    const rvs = w.events.map((x) => x.object.metadata.resourceVersion);
    expect(rvs).to.deep.equal([created.metadata.resourceVersion, patched.metadata.resourceVersion, String(deletedAt), e.metadata.resourceVersion]);
    const del = w.events[2]!.object;
    expect(del.spec.cpus).to.equal(3);
    expect(del.metadata.labels).to.deep.equal({ x: 'y' });
    expect(del.metadata.uid).to.equal(created.metadata.uid);
    expect(del).to.include({ kind: 'Instance', apiVersion: 'cairn.dev/v1alpha1' });
  });

  it('resourceVersion=N: every event of a revision that changed several objects (a lease expiry deletes all its Events at once)', async () => {
    const ns = 'w-same';
    const n = (await ok('GET', cairnPath('instances', ns))).metadata.resourceVersion as string;
    for (const name of ['s1', 's2', 's3']) await ok('POST', cairnPath('instances', ns), instance(name, ns));
    const w = await watch(`${cairnPath('instances', ns)}?watch=true&resourceVersion=${n}`);
    await w.until((evs) => evs.length >= 3, 5000);
    // One etcd transaction: three deletions at one revision.
    await store.client.delete().prefix(`/registry/cairn.dev/instances/${ns}/`);
    await w.until((evs) => evs.length >= 6, 5000).catch(() => undefined);
    await sleep(300);
    expect(summary(w.events)).to.deep.equal(['ADDED s1', 'ADDED s2', 'ADDED s3', 'DELETED s1', 'DELETED s2', 'DELETED s3']);
    const revs = new Set(w.events.slice(3).map((e) => e.object.metadata.resourceVersion));
    expect(revs.size, 'the three deletions share one revision').to.equal(1);
  });

  it('label-selector watch: gaining the label → ADDED, losing it → DELETED', async () => {
    const ns = 'w-label';
    const w = await watch(`${cairnPath('instances', ns)}?watch=true&labelSelector=${encodeURIComponent('app=x')}`);
    await ok('POST', cairnPath('instances', ns), instance('o', ns));
    await ok('PATCH', cairnPath('instances', ns, 'o'), { metadata: { labels: { app: 'x' } } }, MERGE);
    await ok('PATCH', cairnPath('instances', ns, 'o'), { spec: { cpus: 2 } }, MERGE);
    const lost = await ok('PATCH', cairnPath('instances', ns, 'o'), { metadata: { labels: { app: 'y' } } }, MERGE);
    await ok('PATCH', cairnPath('instances', ns, 'o'), { spec: { cpus: 3 } }, MERGE);
    const marker = instance('marker', ns);
    marker.metadata.labels = { app: 'x' };
    await ok('POST', cairnPath('instances', ns), marker);
    await w.until((evs) => evs.some((x) => x.object?.metadata?.name === 'marker'), 5000);
    await sleep(200);
    expect(summary(w.events)).to.deep.equal(['ADDED o', 'MODIFIED o', 'DELETED o', 'ADDED marker']);
    // kube: the DELETED for an object that stopped matching has its previous content at the new revision.
    expect(w.events[2]!.object.metadata.resourceVersion).to.equal(lost.metadata.resourceVersion);
  });

  it('spec.nodeName=n1 watch on WorkItems: moves away → DELETED, back → ADDED, n3 never seen', async () => {
    const sel = `fieldSelector=${encodeURIComponent('spec.nodeName=n1')}`;
    const all = await watch(`/apis/cairn.dev/v1alpha1/workitems?watch=true&${sel}`);
    const one = await watch(`${cairnPath('workitems', 'w-node')}?watch=true&${sel}`);
    await ok('POST', cairnPath('workitems', 'w-node'), workItem('wi-1', 'w-node', 'n1'));
    await ok('POST', cairnPath('workitems', 'w-node'), workItem('wi-3', 'w-node', 'n3'));
    await ok('PATCH', cairnPath('workitems', 'w-node', 'wi-1'), { spec: { nodeName: 'n2' } }, MERGE);
    await ok('PATCH', cairnPath('workitems', 'w-node', 'wi-3'), { spec: { timeoutSeconds: 5 } }, MERGE);
    await ok('PATCH', cairnPath('workitems', 'w-node', 'wi-1'), { spec: { nodeName: 'n1' } }, MERGE);
    await ok('DELETE', cairnPath('workitems', 'w-node', 'wi-3'));
    await ok('POST', cairnPath('workitems', 'w-node2'), workItem('wi-other', 'w-node2', 'n1'));
    await ok('POST', cairnPath('workitems', 'w-node'), workItem('wi-m', 'w-node', 'n1'));
    await all.until((evs) => evs.some((x) => x.object?.metadata?.name === 'wi-m'), 5000);
    await one.until((evs) => evs.some((x) => x.object?.metadata?.name === 'wi-m'), 5000);
    await sleep(200);
    expect(summary(all.events)).to.deep.equal(['ADDED wi-1', 'DELETED wi-1', 'ADDED wi-1', 'ADDED wi-other', 'ADDED wi-m']);
    expect(summary(one.events)).to.deep.equal(['ADDED wi-1', 'DELETED wi-1', 'ADDED wi-1', 'ADDED wi-m']);
  });

  it('timeoutSeconds=1 ends the stream by itself', async () => {
    const t0 = Date.now();
    const w = await watch(`${cairnPath('instances', 'w-idle')}?watch=true&timeoutSeconds=1`);
    const ended = await Promise.race([w.ended.then(() => true), sleep(3500).then(() => false)]);
    expect(ended, 'stream still open 3.5 s after timeoutSeconds=1').to.equal(true);
    expect(Date.now() - t0).to.be.lessThan(3500);
  });

  it('allowWatchBookmarks=true: an idle watch gets a BOOKMARK of the kind at ≥ its start revision', async () => {
    const start = Number((await ok('GET', cairnPath('instances', 'w-idle'))).metadata.resourceVersion);
    const w = await watch(`${cairnPath('instances', 'w-idle')}?watch=true&resourceVersion=${start}&allowWatchBookmarks=true`);
    await w.until((evs) => evs.some((x) => x.type === 'BOOKMARK'), 3000);
    const bm = w.events.find((x) => x.type === 'BOOKMARK')!;
    expect(bm.object).to.include({ kind: 'Instance', apiVersion: 'cairn.dev/v1alpha1' });
    expect(Number(bm.object.metadata.resourceVersion)).to.be.at.least(start);
    expect(w.events.filter((x) => x.type !== 'BOOKMARK')).to.deep.equal([]);
  });

  it('without allowWatchBookmarks an idle watch gets only bare newlines and stays open', async () => {
    const w = await watch(`${cairnPath('instances', 'w-idle')}?watch=true`);
    let open = true;
    void w.ended.then(() => (open = false));
    // The raw bytes too: keepalives arrive, and they are only whitespace.
    const cluster0 = env.kubeconfig.getCurrentCluster()!;
    const raw: string[] = [];
    const rawReq = https.get(new URL(`${cairnPath('instances', 'w-idle')}?watch=true`, cluster0.server), {
      ca: Buffer.from(cluster0.caData!, 'base64'),
      headers: { authorization: `Bearer ${env.token}` },
    }, (res) => res.setEncoding('utf8').on('data', (d: string) => raw.push(d)));
    rawReq.on('error', () => undefined);
    closers.push(() => rawReq.destroy());
    await sleep(1200);
    rawReq.destroy();
    expect(open, 'watch ended while idle').to.equal(true);
    expect(w.events).to.deep.equal([]);
    expect(raw.length, 'no keepalive bytes in 1.2 s with a 300 ms keepalive').to.be.greaterThan(0);
    expect(raw.join('').trim()).to.equal('');
  });

  it('a watch from a compacted revision on a fresh apiserver → one ERROR 410 Expired, then the stream ends', async () => {
    const ns = 'w-compact';
    const old = await ok('POST', cairnPath('instances', ns), instance('x', ns));
    await ok('PATCH', cairnPath('instances', ns, 'x'), { spec: { cpus: 2 } }, MERGE);
    await ok('PATCH', cairnPath('instances', ns, 'x'), { spec: { cpus: 3 } }, MERGE);
    await store.compact(await store.currentRevision());
    const fresh = await env.addServer();
    const w = await watch(`${cairnPath('instances', ns)}?watch=true&resourceVersion=${old.metadata.resourceVersion}`, {}, kubeconfigFor(fresh));
    const ended = await Promise.race([w.ended.then(() => true), sleep(5000).then(() => false)]);
    expect(summary(w.events)).to.deep.equal(['ERROR']);
    expect(w.events[0]!.object).to.include({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code: 410, reason: 'Expired' });
    expect(ended, 'stream did not end after the ERROR event').to.equal(true);
  });

  it('Table watch: every event’s object is a Table with one row', async () => {
    const ns = 'w-table';
    await ok('POST', cairnPath('instances', ns), instance('t-1', ns));
    const w = await watch(`${cairnPath('instances', ns)}?watch=true`, { accept: TABLE_ACCEPT });
    await w.until((evs) => evs.length >= 1, 5000);
    await ok('PATCH', cairnPath('instances', ns, 't-1'), { spec: { cpus: 2 } }, MERGE);
    await ok('DELETE', cairnPath('instances', ns, 't-1'));
    await w.until((evs) => evs.length >= 3, 5000);
    expect(w.events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED', 'DELETED']);
    expect(w.events[0]!.object.columnDefinitions[0].name).to.equal('Name');
    for (const e of w.events) {
      expect(e.object).to.include({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
      expect(e.object.rows).to.have.length(1);
      expect(e.object.rows[0].cells[0]).to.equal('t-1');
      expect(e.object.rows[0].object).to.include({ kind: 'PartialObjectMetadata' });
      expect(e.object.rows[0].object.metadata.name).to.equal('t-1');
    }
  });
});

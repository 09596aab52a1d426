/**
 * Writes against a real etcd: generateName, dryRun, the status subresource
 * and generation, no-op writes, finalizers, delete preconditions,
 * deletecollection, terminating/missing namespaces, server-side apply,
 * Event TTLs, Leases, and the periodic compactor.
 */
import { expect } from 'chai';
import { CONTROLLER_FINALIZER, CONTROLLER_LEASE_NAME, SYSTEM_NAMESPACE } from '../../../api/names.js';
import { cairnPath, cluster, instance, workItem } from '../../support/fixtures.js';
import { rawRequest, type RawResponse } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';
import { eventually } from '../../support/eventually.js';
import { openWatch, type WatchStream } from '../../support/watch-stream.js';

const MERGE = 'application/merge-patch+json';
const APPLY = 'application/apply-patch+yaml';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('apiserver writes (real etcd)', function () {
  this.timeout(60_000);
  let env: TestEnv;
  const watches: WatchStream[] = [];
  const ns = 'wr';
  const inst = (name: string) => cairnPath('instances', ns, name);
  const coll = cairnPath('instances', ns);

  const req = (method: string, path: string, body?: unknown, contentType?: string): Promise<RawResponse> =>
    rawRequest(env.kubeconfig, { method, path, body: body === undefined ? undefined : JSON.stringify(body), contentType });
  const expectStatus = async (p: Promise<RawResponse>, code: number): Promise<any> => {
    const r = await p;
    expect(r.status, r.text).to.equal(code);
    return r.json;
  };
  const create = (obj: any) => expectStatus(req('POST', cairnPath(obj.kind === 'Cluster' ? 'clusters' : 'instances', obj.metadata.namespace), obj), 201);
  const watchOne = async (name: string): Promise<WatchStream> => {
    const w = await openWatch(env.kubeconfig, `${coll}?watch=true&fieldSelector=${encodeURIComponent(`metadata.name=${name}`)}`);
    watches.push(w);
    return w;
  };

  before(async () => {
    env = await startTestEnv({ eventTtlSeconds: 2 });
    await create(cluster(ns));
  });
  after(async () => {
    for (const w of watches) w.close();
    await env?.stop();
  });

  it('generateName: 201 with <prefix> + 5 random characters', async () => {
    const o = instance('', ns);
    o.metadata = { generateName: 'gen-', namespace: ns };
    const created = await create(o);
    expect(created.metadata.name).to.match(/^gen-[a-z0-9]{5}$/);
    expect(created.metadata.generateName).to.equal('gen-');
    await expectStatus(req('GET', inst(created.metadata.name)), 200);
  });

  it('dryRun=All on create, patch and delete (query and body) stores nothing', async () => {
    const dry = await expectStatus(req('POST', `${coll}?dryRun=All`, instance('dry-1', ns)), 201);
    expect(dry.metadata.name).to.equal('dry-1');
    expect(dry.spec.cpus).to.equal(1);
    await expectStatus(req('GET', inst('dry-1')), 404);

    const real = await create(instance('dry-2', ns));
    const patched = await expectStatus(req('PATCH', `${inst('dry-2')}?dryRun=All`, { spec: { cpus: 3 } }, MERGE), 200);
    expect(patched.spec.cpus).to.equal(3);
    const stored = await expectStatus(req('GET', inst('dry-2')), 200);
    expect(stored.spec.cpus).to.equal(1);
    expect(stored.metadata.resourceVersion).to.equal(real.metadata.resourceVersion);

    await expectStatus(req('DELETE', inst('dry-2'), { dryRun: ['All'] }), 200);
    await expectStatus(req('GET', inst('dry-2')), 200);
    await expectStatus(req('DELETE', `${inst('dry-2')}?dryRun=All`), 200);
    const still = await expectStatus(req('GET', inst('dry-2')), 200);
    expect(still.metadata.resourceVersion).to.equal(real.metadata.resourceVersion);
  });

  it('status subresource: create drops status, main endpoint ignores it, /status changes only status; generation', async () => {
    const o = instance('st', ns);
    o.status = { phase: 'Running' };
    const created = await create(o);
    expect(created.status).to.equal(undefined);
    expect(created.metadata.generation).to.equal(1);
    expect((await expectStatus(req('GET', inst('st')), 200)).status).to.equal(undefined);

    const viaMain = await expectStatus(req('PUT', inst('st'), { ...created, spec: { ...created.spec, cpus: 2 }, status: { phase: 'Failed' } }), 200);
    expect(viaMain.status).to.equal(undefined);
    expect(viaMain.spec.cpus).to.equal(2);
    expect(viaMain.metadata.generation).to.equal(2);

    const viaStatus = await expectStatus(req('PUT', `${inst('st')}/status`, { ...viaMain, spec: { ...viaMain.spec, cpus: 4 }, status: { phase: 'Running' } }), 200);
    expect(viaStatus.status.phase).to.equal('Running');
    expect(viaStatus.spec.cpus).to.equal(2);
    expect(viaStatus.metadata.generation).to.equal(2);

    const patched = await expectStatus(req('PATCH', `${inst('st')}/status`, { spec: { cpus: 5 }, status: { phase: 'Stopped' } }, MERGE), 200);
    expect(patched.status.phase).to.equal('Stopped');
    expect(patched.spec.cpus).to.equal(2);
    expect(patched.metadata.generation).to.equal(2);

    const labelled = await expectStatus(req('PATCH', inst('st'), { metadata: { labels: { a: 'b' } } }, MERGE), 200);
    expect(labelled.metadata.generation).to.equal(2);
    const spec = await expectStatus(req('PATCH', inst('st'), { spec: { cpus: 3 } }, MERGE), 200);
    expect(spec.metadata.generation).to.equal(3);
    expect(spec.status.phase).to.equal('Stopped');
  });

  it('a write that changes nothing keeps the resourceVersion and emits no event', async () => {
    const o = instance('noop', ns);
    o.metadata.labels = { a: 'b' };
    const created = await create(o);
    const w = await watchOne('noop');
    await w.until((e) => e.length === 1, 5000);
    const same = await expectStatus(req('PATCH', inst('noop'), { metadata: { labels: { a: 'b' } }, spec: { cpus: 1 } }, MERGE), 200);
    expect(same.metadata.resourceVersion).to.equal(created.metadata.resourceVersion);
    const put = await expectStatus(req('PUT', inst('noop'), created), 200);
    expect(put.metadata.resourceVersion).to.equal(created.metadata.resourceVersion);
    const marker = await expectStatus(req('PATCH', inst('noop'), { metadata: { labels: { c: 'd' } } }, MERGE), 200);
    await w.until((e) => e.length >= 2, 5000);
    await sleep(200);
    expect(w.events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED']);
    expect(w.events[1]!.object.metadata.resourceVersion).to.equal(marker.metadata.resourceVersion);
  });

  it('finalizers: DELETE marks for deletion (MODIFIED), no new finalizers (422), emptying them deletes (DELETED)', async () => {
    const o = instance('fin', ns);
    o.metadata.finalizers = ['cairn.dev/test'];
    await create(o);
    const w = await watchOne('fin');
    await w.until((e) => e.length === 1, 5000);
    const del = await expectStatus(req('DELETE', inst('fin')), 200);
    expect(del.metadata.deletionTimestamp).to.be.a('string');
    expect(del.metadata.deletionGracePeriodSeconds).to.equal(0);
    await w.until((e) => e.length >= 2, 5000);
    expect(w.events[1]!.type).to.equal('MODIFIED');
    expect(w.events[1]!.object.metadata.deletionTimestamp).to.be.a('string');
    await expectStatus(req('GET', inst('fin')), 200);

    const added = await req('PATCH', inst('fin'), { metadata: { finalizers: ['cairn.dev/test', 'cairn.dev/other'] } }, MERGE);
    expect(added.status, added.text).to.equal(422);
    expect(added.json.reason).to.equal('Invalid');

    await expectStatus(req('PATCH', inst('fin'), { metadata: { finalizers: null } }, MERGE), 200);
    await w.until((e) => e.some((x) => x.type === 'DELETED'), 5000);
    expect(w.events.map((e) => e.type)).to.deep.equal(['ADDED', 'MODIFIED', 'DELETED']);
    await expectStatus(req('GET', inst('fin')), 404);
  });

  it("admission gives new Instances the controller's finalizer while a controller holds the leader Lease, and only then", async () => {
    const leasePath = `/apis/coordination.k8s.io/v1/namespaces/${SYSTEM_NAMESPACE}/leases`;
    const finalizersOf = async (name: string, finalizers?: string[]) => {
      const o = instance(name, ns);
      if (finalizers) o.metadata.finalizers = finalizers;
      return (await create(o)).metadata.finalizers ?? [];
    };
    const sameList = (a: string[], b: string[]) => JSON.stringify(a) === JSON.stringify(b);
    expect(await finalizersOf('unled')).to.deep.equal([]);
    const lease = await expectStatus(req('POST', leasePath, { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: CONTROLLER_LEASE_NAME }, spec: { holderIdentity: 'c1', leaseDurationSeconds: 15 } }), 201);
    let n = 0;
    await eventually('a created Instance has the finalizer', async () => sameList(await finalizersOf(`led-${n++}`), [CONTROLLER_FINALIZER]), 5000);
    expect(await finalizersOf('led-own', ['example.com/mine'])).to.deep.equal(['example.com/mine', CONTROLLER_FINALIZER]);
    const item = await expectStatus(req('POST', cairnPath('workitems', ns), workItem('led-wi', ns, 'n1')), 201);
    expect(item.metadata.finalizers ?? [], 'only Instances and Volumes').to.deep.equal([]);

    // A controller that stops leading releases the lease (no holder): nothing would remove the finalizer then.
    await expectStatus(req('PUT', `${leasePath}/${CONTROLLER_LEASE_NAME}`, { ...lease, spec: { leaseDurationSeconds: 15 } }), 200);
    await eventually('a created Instance has no finalizer', async () => sameList(await finalizersOf(`released-${n++}`), []), 5000);
    await expectStatus(req('DELETE', `${leasePath}/${CONTROLLER_LEASE_NAME}`), 200);
  });

  it('DELETE preconditions: wrong uid or resourceVersion → 409; right ones → 200', async () => {
    const o = await create(instance('pre', ns));
    const wrongUid = await expectStatus(req('DELETE', inst('pre'), { preconditions: { uid: '00000000-0000-0000-0000-000000000000' } }), 409);
    expect(wrongUid.reason).to.equal('Conflict');
    const wrongRv = await expectStatus(req('DELETE', inst('pre'), { preconditions: { resourceVersion: '1' } }), 409);
    expect(wrongRv.reason).to.equal('Conflict');
    await expectStatus(req('GET', inst('pre')), 200);
    await expectStatus(req('DELETE', inst('pre'), { preconditions: { uid: o.metadata.uid, resourceVersion: o.metadata.resourceVersion } }), 200);
    await expectStatus(req('GET', inst('pre')), 404);
  });

  it('a uid in a PUT body is a precondition: another object under the same name is not written over (409)', async () => {
    const first = await create(instance('reborn', ns));
    await expectStatus(req('DELETE', inst('reborn')), 200);
    const second = await create(instance('reborn', ns));
    const stale = { ...first, metadata: { ...first.metadata, resourceVersion: second.metadata.resourceVersion, labels: { from: 'stale-copy' } } };
    const refused = await expectStatus(req('PUT', inst('reborn'), stale), 409);
    expect(refused.message).to.equal(`Operation cannot be fulfilled on instances.cairn.dev "reborn": Precondition failed: UID in precondition: ${first.metadata.uid}, UID in object meta: ${second.metadata.uid}`);
    const kept = await expectStatus(req('GET', inst('reborn')), 200);
    expect(kept.metadata.labels?.from).to.equal(undefined);
    await expectStatus(req('PUT', inst('reborn'), { ...second, metadata: { ...second.metadata, labels: { from: 'right-copy' } } }), 200);
  });

  it('deletecollection with a label selector deletes exactly the matching objects', async () => {
    await create(cluster('dc'));
    for (const [n, del] of [['dc-1', 'yes'], ['dc-2', 'no'], ['dc-3', 'yes'], ['dc-4', undefined]] as const) {
      const o = instance(n, 'dc');
      if (del) o.metadata.labels = { del };
      await create(o);
    }
    await expectStatus(req('DELETE', `${cairnPath('instances', 'dc')}?labelSelector=${encodeURIComponent('del=yes')}`), 200);
    const left = await expectStatus(req('GET', cairnPath('instances', 'dc')), 200);
    expect((left.items as any[]).map((x) => x.metadata.name).sort()).to.deep.equal(['dc-2', 'dc-4']);
  });

  it('create in a terminating namespace → 403; in a missing one → 404 naming the Cluster', async () => {
    const c = cluster('term');
    c.metadata.finalizers = ['cairn.dev/test'];
    await create(c);
    const del = await expectStatus(req('DELETE', cairnPath('clusters', undefined, 'term')), 200);
    expect(del.metadata.deletionTimestamp).to.be.a('string');
    // Admission judges the namespace from the watch cache, which learns of the deletion a moment after the
    // DELETE answered (as kube's NamespaceLifecycle does from its informer): wait until reads show it.
    await eventually('the Cluster terminating in reads', async () => (await req('GET', cairnPath('clusters', undefined, 'term'))).json?.metadata?.deletionTimestamp !== undefined, 5_000);
    const forbidden = await expectStatus(req('POST', cairnPath('instances', 'term'), instance('x', 'term')), 403);
    expect(forbidden).to.include({ kind: 'Status', reason: 'Forbidden', code: 403 });
    expect(forbidden.message).to.include('term');
    expect(forbidden.details.causes, 'how controllers tell it from an RBAC refusal').to.deep.equal([{ reason: 'NamespaceTerminating', message: 'namespace term is being terminated', field: 'metadata.namespace' }]);
    await expectStatus(req('PATCH', cairnPath('clusters', undefined, 'term'), { metadata: { finalizers: null } }, MERGE), 200);

    const missing = await expectStatus(req('POST', cairnPath('instances', 'nosuch'), instance('x', 'nosuch')), 404);
    expect(missing).to.include({ kind: 'Status', reason: 'NotFound', code: 404 });
    expect(missing.message).to.include('namespaces "nosuch" not found');
    expect(missing.message).to.match(/Cluster "nosuch"/);
  });

  it('server-side apply: creates (201), conflicts between managers (409 FieldManagerConflict), force moves ownership', async () => {
    const a = await expectStatus(req('PATCH', `${inst('ssa')}?fieldManager=mgr-a`, instance('ssa', ns), APPLY), 201);
    expect(a.spec.cpus).to.equal(1);
    expect((a.metadata.managedFields as any[]).find((m) => m.manager === 'mgr-a')).to.include({ operation: 'Apply' });
    const again = await expectStatus(req('PATCH', `${inst('ssa')}?fieldManager=mgr-a`, instance('ssa', ns), APPLY), 200);
    expect(again.metadata.resourceVersion).to.equal(a.metadata.resourceVersion);

    const b = instance('ssa', ns, { cpus: 2 });
    const conflict = await expectStatus(req('PATCH', `${inst('ssa')}?fieldManager=mgr-b`, b, APPLY), 409);
    expect(conflict.reason).to.equal('Conflict');
    expect((conflict.details?.causes ?? []).map((c: any) => c.reason)).to.include('FieldManagerConflict');
    expect((conflict.details.causes as any[]).some((c) => c.reason === 'FieldManagerConflict' && /cpus/.test(c.field ?? c.message))).to.equal(true);
    expect((await expectStatus(req('GET', inst('ssa')), 200)).spec.cpus).to.equal(1);

    const forced = await expectStatus(req('PATCH', `${inst('ssa')}?fieldManager=mgr-b&force=true`, b, APPLY), 200);
    expect(forced.spec.cpus).to.equal(2);
    const mf = forced.metadata.managedFields as any[];
    expect(mf.find((m) => m.manager === 'mgr-b')?.fieldsV1?.['f:spec']?.['f:cpus']).to.not.equal(undefined);
    expect(mf.find((m) => m.manager === 'mgr-a')?.fieldsV1?.['f:spec']?.['f:cpus']).to.equal(undefined);

    // A field the manager stops sending is pruned.
    const a2 = instance('ssa', ns, { cpus: 2 });
    a2.metadata.labels = { keep: '1', drop: '1' };
    expect((await expectStatus(req('PATCH', `${inst('ssa')}?fieldManager=mgr-a`, a2, APPLY), 200)).metadata.labels).to.deep.equal({ keep: '1', drop: '1' });
    a2.metadata.labels = { keep: '1' };
    expect((await expectStatus(req('PATCH', `${inst('ssa')}?fieldManager=mgr-a`, a2, APPLY), 200)).metadata.labels).to.deep.equal({ keep: '1' });
  });

  it('Events expire by themselves (eventTtlSeconds: 2)', async () => {
    const ev = {
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: 'ev-ttl', namespace: ns },
      involvedObject: { kind: 'Instance', apiVersion: 'cairn.dev/v1alpha1', name: 'st', namespace: ns },
      reason: 'Testing',
      message: 'expires soon',
      type: 'Normal',
    };
    await expectStatus(req('POST', `/api/v1/namespaces/${ns}/events`, ev), 201);
    await expectStatus(req('GET', `/api/v1/namespaces/${ns}/events/ev-ttl`), 200);
    const t0 = Date.now();
    while ((await req('GET', `/api/v1/namespaces/${ns}/events/ev-ttl`)).status !== 404) {
      if (Date.now() - t0 > 10_000) throw new Error('Event still there 10 s after creation with a 2 s TTL');
      await sleep(200);
    }
  });

  it('Leases: PUT creates, get/update; PUT without resourceVersion is 422 (as kube); a stale one → 409', async () => {
    const path = `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`;
    const lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: 'lock', namespace: ns },
      spec: { holderIdentity: 'node-a', leaseDurationSeconds: 15, renewTime: '2026-01-01T00:00:00.000000Z' },
    };
    await expectStatus(req('PUT', `${path}/by-put`, { ...lease, metadata: { name: 'by-put', namespace: ns } }), 201);
    const created = await expectStatus(req('POST', path, lease), 201);
    const got = await expectStatus(req('GET', `${path}/lock`), 200);
    expect(got.spec).to.deep.equal(lease.spec);
    const renewed = await expectStatus(req('PUT', `${path}/lock`, { ...got, spec: { ...got.spec, renewTime: '2026-01-01T00:00:05.123456Z' } }), 200);
    expect(renewed.spec.renewTime).to.equal('2026-01-01T00:00:05.123456Z');
    const { resourceVersion: _drop, ...metaNoRv } = renewed.metadata;
    const unversioned = await expectStatus(req('PUT', `${path}/lock`, { ...renewed, metadata: metaNoRv, spec: { ...renewed.spec, holderIdentity: 'node-x' } }), 422);
    expect(unversioned.details.causes[0].field).to.equal('metadata.resourceVersion');
    await expectStatus(req('PUT', `${path}/lock`, { ...renewed, spec: { ...renewed.spec, holderIdentity: 'node-b' } }), 200);
    const stale = await expectStatus(req('PUT', `${path}/lock`, { ...created, spec: { ...created.spec, holderIdentity: 'node-c' } }), 409);
    expect(stale.reason).to.equal('Conflict');
    expect((await expectStatus(req('GET', `${path}/lock`), 200)).spec.holderIdentity).to.equal('node-b');
  });

  it('periodic compaction (compactionIntervalMs: 300) expires an old continue token', async () => {
    const env2 = await startTestEnv({ compactionIntervalMs: 300 });
    try {
      const r2 = (method: string, path: string, body?: unknown) => rawRequest(env2.kubeconfig, { method, path, body: body === undefined ? undefined : JSON.stringify(body) });
      expect((await r2('POST', cairnPath('clusters'), cluster('cmp'))).status).to.equal(201);
      for (const n of ['c-1', 'c-2', 'c-3']) expect((await r2('POST', cairnPath('instances', 'cmp'), instance(n, 'cmp'))).status).to.equal(201);
      const first = await r2('GET', `${cairnPath('instances', 'cmp')}?limit=1`);
      const cont = encodeURIComponent(first.json.metadata.continue as string);
      expect((await r2('POST', cairnPath('instances', 'cmp'), instance('c-4', 'cmp'))).status).to.equal(201);
      const t0 = Date.now();
      for (;;) {
        const r = await r2('GET', `${cairnPath('instances', 'cmp')}?limit=1&continue=${cont}`);
        if (r.status === 410) {
          expect(r.json.reason).to.equal('Expired');
          break;
        }
        expect(r.status, r.text).to.equal(200);
        if (Date.now() - t0 > 5000) throw new Error('continue token still valid 5 s into 300 ms compaction');
        await sleep(100);
      }
    } finally {
      await env2.stop();
    }
  });
});

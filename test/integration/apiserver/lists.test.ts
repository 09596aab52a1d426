/**
 * Lists against a real etcd: limit/continue paging at one revision, expired
 * continue tokens, label and field selectors (also on the paged path), the
 * list resourceVersion, Table output, all-namespaces lists and namespaces.
 */
import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import { EtcdStore } from '../../../apiserver/storage/etcd-store.js';
import { cairnPath, cluster, instance, workItem, TABLE_ACCEPT } from '../../support/fixtures.js';
import { rawRequest, type RawResponse } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';



describe('apiserver lists (real etcd)', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let store: EtcdStore;

  const req = (method: string, path: string, body?: unknown, contentType?: string, headers?: Record<string, string>): Promise<RawResponse> =>
    rawRequest(env.kubeconfig, { method, path, body: body === undefined ? undefined : JSON.stringify(body), contentType, headers });
  const create = async (path: string, obj: object): Promise<any> => {
    const r = await req('POST', path, obj);
    expect(r.status, `POST ${path}: ${r.text}`).to.equal(201);
    return r.json;
  };
  const names = (r: RawResponse): string[] => {
    expect(r.status, r.text).to.equal(200);
    return (r.json.items as any[]).map((o) => o.metadata.name).sort();
  };
  /** Follows continue tokens; returns every item and every page's list metadata. */
  const listAll = async (path: string): Promise<{ items: any[]; pages: any[] }> => {
    const items: any[] = [];
    const pages: any[] = [];
    let cont: string | undefined;
    do {
      const sep = path.includes('?') ? '&' : '?';
      const r = await req('GET', cont ? `${path}${sep}continue=${encodeURIComponent(cont)}` : path);
      expect(r.status, r.text).to.equal(200);
      items.push(...r.json.items);
      pages.push(r.json.metadata);
      cont = r.json.metadata.continue || undefined;
      expect(pages.length).to.be.lessThan(50);
    } while (cont);
    return { items, pages };
  };

  before(async () => {
    env = await startTestEnv();
    store = new EtcdStore(new Etcd3({ hosts: env.etcd.endpoint }));
    for (const c of ['page', 'expire', 'labels', 'fld1', 'fld2', 'rv', 'other', 'exact']) await create(cairnPath('clusters'), cluster(c));
    const labelled: [string, Record<string, string>][] = [
      ['l-a', { app: 'a', tier: 'web' }],
      ['l-b', { app: 'b' }],
      ['l-c', { app: 'c', tier: 'db' }],
      ['l-none', {}],
      ['l-tier', { tier: 'web' }],
    ];
    for (const [n, labels] of labelled) {
      const o = instance(n, 'labels');
      o.metadata.labels = labels;
      await create(cairnPath('instances', 'labels'), o);
    }
  });
  after(async () => {
    store?.client.close();
    await env?.stop();
  });

  it('limit/continue pages 25 objects in name order, all at the first page’s revision', async () => {
    const all = Array.from({ length: 25 }, (_, i) => `p-${String(i).padStart(2, '0')}`);
    await Promise.all(all.map((n) => create(cairnPath('instances', 'page'), instance(n, 'page'))));
    const first = await req('GET', `${cairnPath('instances', 'page')}?limit=10`);
    expect(first.status, first.text).to.equal(200);
    expect(first.json.items).to.have.length(10);
    expect(first.json.metadata.continue).to.be.a('string').and.not.empty;
    const rv = first.json.metadata.resourceVersion;
    // Written after page 1: sorts last, so it would land on page 3 if pages were read at the current revision.
    await create(cairnPath('instances', 'page'), instance('p-zz-late', 'page'));
    await create(cairnPath('instances', 'page'), instance('p-05a-late', 'page'));
    // Deleted after page 1 but still present at the first page's revision.
    expect((await req('DELETE', cairnPath('instances', 'page', 'p-20'))).status).to.equal(200);
    const got: string[] = first.json.items.map((o: any) => o.metadata.name);
    let cont: string | undefined = first.json.metadata.continue;
    let pages = 1;
    while (cont) {
      const r = await req('GET', `${cairnPath('instances', 'page')}?limit=10&continue=${encodeURIComponent(cont)}`);
      expect(r.status, r.text).to.equal(200);
      expect(r.json.metadata.resourceVersion, `page ${pages + 1} resourceVersion`).to.equal(rv);
      got.push(...r.json.items.map((o: any) => o.metadata.name));
      cont = r.json.metadata.continue || undefined;
      if (++pages > 5) throw new Error('too many pages');
    }
    expect(pages).to.equal(3);
    expect(got).to.deep.equal(all); // distinct, in key order, without the late objects
  });

  it('a continue token whose revision was compacted → 410 Expired', async () => {
    for (const n of ['e-1', 'e-2', 'e-3']) await create(cairnPath('instances', 'expire'), instance(n, 'expire'));
    const first = await req('GET', `${cairnPath('instances', 'expire')}?limit=1`);
    expect(first.status).to.equal(200);
    const cont = first.json.metadata.continue as string;
    expect(cont).to.be.a('string').and.not.empty;
    await create(cairnPath('instances', 'expire'), instance('e-4', 'expire'));
    await store.compact(await store.currentRevision());
    const r = await req('GET', `${cairnPath('instances', 'expire')}?limit=1&continue=${encodeURIComponent(cont)}`);
    expect(r.status, r.text).to.equal(410);
    expect(r.json).to.include({ kind: 'Status', reason: 'Expired', code: 410 });
  });

  const labelCases: [string, string[]][] = [
    ['app=a', ['l-a']],
    ['app==b', ['l-b']],
    ['app!=a', ['l-b', 'l-c', 'l-none', 'l-tier']],
    ['app in (a,b)', ['l-a', 'l-b']],
    ['app notin (a,b)', ['l-c', 'l-none', 'l-tier']],
    ['!app', ['l-none', 'l-tier']],
    ['tier', ['l-a', 'l-c', 'l-tier']],
    ['app in (a,b),tier', ['l-a']],
    ['app!=a,tier', ['l-c', 'l-tier']],
    ['tier=web,!app', ['l-tier']],
  ];
  for (const [selector, want] of labelCases) {
    it(`labelSelector ${selector} (cache and paged reads)`, async () => {
      const path = `${cairnPath('instances', 'labels')}?labelSelector=${encodeURIComponent(selector)}`;
      expect(names(await req('GET', path))).to.deep.equal(want);
      const paged = await listAll(`${path}&limit=2`);
      expect(paged.items.map((o) => o.metadata.name).sort()).to.deep.equal(want);
    });
  }

  it('field selectors metadata.name, metadata.namespace; unsupported field → 400', async () => {
    const base = cairnPath('instances', 'labels');
    expect(names(await req('GET', `${base}?fieldSelector=${encodeURIComponent('metadata.name=l-b')}`))).to.deep.equal(['l-b']);
    expect(names(await req('GET', `${base}?fieldSelector=${encodeURIComponent('metadata.name==l-b')}&limit=1`))).to.deep.equal(['l-b']);
    expect(names(await req('GET', `${base}?fieldSelector=${encodeURIComponent('metadata.name!=l-b')}`))).to.deep.equal(['l-a', 'l-c', 'l-none', 'l-tier']);
    const byNs = await req('GET', `${cairnPath('instances')}?fieldSelector=${encodeURIComponent('metadata.namespace=labels')}`);
    expect(names(byNs)).to.deep.equal(['l-a', 'l-b', 'l-c', 'l-none', 'l-tier']);
    expect((byNs.json.items as any[]).every((o) => o.metadata.namespace === 'labels')).to.equal(true);
    const bad = await req('GET', `${base}?fieldSelector=${encodeURIComponent('spec.cpus=1')}`);
    expect(bad.status, bad.text).to.equal(400);
    expect(bad.json).to.include({ kind: 'Status', reason: 'BadRequest' });
  });

  it('fieldSelector spec.nodeName on WorkItems, across namespaces and in one, follows a move n1→n2', async () => {
    await create(cairnPath('workitems', 'fld1'), workItem('w1', 'fld1', 'n1'));
    await create(cairnPath('workitems', 'fld2'), workItem('w2', 'fld2', 'n1'));
    await create(cairnPath('workitems', 'fld1'), workItem('w3', 'fld1', 'n2'));
    const sel = (node: string) => `fieldSelector=${encodeURIComponent(`spec.nodeName=${node}`)}`;
    const all = (node: string) => req('GET', `/apis/cairn.dev/v1alpha1/workitems?${sel(node)}`);
    expect(names(await all('n1'))).to.deep.equal(['w1', 'w2']);
    expect(names(await req('GET', `${cairnPath('workitems', 'fld1')}?${sel('n1')}`))).to.deep.equal(['w1']);
    expect((await listAll(`/apis/cairn.dev/v1alpha1/workitems?${sel('n1')}&limit=1`)).items.map((o) => o.metadata.name).sort()).to.deep.equal(['w1', 'w2']);
    const moved = await req('PATCH', cairnPath('workitems', 'fld1', 'w1'), { spec: { nodeName: 'n2' } }, 'application/merge-patch+json');
    expect(moved.status, moved.text).to.equal(200);
    expect(names(await all('n1'))).to.deep.equal(['w2']);
    expect(names(await all('n2'))).to.deep.equal(['w1', 'w3']);
    expect(names(await req('GET', `${cairnPath('workitems', 'fld1')}?${sel('n1')}`))).to.deep.equal([]);
    expect(names(await req('GET', `${cairnPath('workitems', 'fld1')}?${sel('n2')}`))).to.deep.equal(['w1', 'w3']);
  });

  it('list resourceVersion is etcd’s current revision and includes a write made just before', async () => {
    const created = await create(cairnPath('instances', 'rv'), instance('rv-1', 'rv'));
    const list = await req('GET', cairnPath('instances', 'rv'));
    expect(names(list)).to.deep.equal(['rv-1']);
    const current = await store.currentRevision();
    expect(list.json.metadata.resourceVersion).to.equal(String(current));
    expect(Number(list.json.metadata.resourceVersion)).to.be.at.least(Number(created.metadata.resourceVersion));
    expect(list.json).to.include({ kind: 'InstanceList', apiVersion: 'cairn.dev/v1alpha1' });
    // And again immediately after another write (read-your-writes, no stale cache).
    const second = await create(cairnPath('instances', 'rv'), instance('rv-2', 'rv'));
    const again = await req('GET', cairnPath('instances', 'rv'));
    expect(names(again)).to.deep.equal(['rv-1', 'rv-2']);
    expect(again.json.metadata.resourceVersion).to.equal(second.metadata.resourceVersion);
  });

  it('a resourceVersion this store has not reached → 504 ResourceVersionTooLarge (client-go then lists without one), not an older list', async () => {
    const ahead = (await store.currentRevision()) + 1000;
    const r = await req('GET', `${cairnPath('instances', 'rv')}?resourceVersion=${ahead}`);
    expect(r.status, r.text).to.equal(504);
    expect(r.json).to.include({ reason: 'Timeout' });
    expect(r.json.message).to.match(new RegExp(`^Too large resource version: ${ahead}, current: \\d+$`));
    expect(r.json.details.causes).to.deep.equal([{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }]);
  });

  it('resourceVersionMatch=Exact (or a limit with a resourceVersion) lists the state at that version; NotOlderThan the current one; 410 once compacted', async () => {
    const path = cairnPath('instances', 'exact');
    await create(path, instance('x', 'exact'));
    const then = (await req('GET', path)).json.metadata.resourceVersion as string;
    const patched = await rawRequest(env.kubeconfig, { method: 'PATCH', path: `${path}/x`, body: JSON.stringify({ spec: { cpus: 2 } }), contentType: 'application/merge-patch+json' });
    expect(patched.status, patched.text).to.equal(200);
    await create(path, instance('y', 'exact'));
    const cpus = (r: { json: { items: Array<{ metadata: { name: string }; spec: { cpus: number } }> } }) => r.json.items.map((i) => `${i.metadata.name}:${i.spec.cpus}`);
    for (const query of [`resourceVersion=${then}&resourceVersionMatch=Exact`, `resourceVersion=${then}&limit=10`]) {
      const r = await req('GET', `${path}?${query}`);
      expect([r.status, cpus(r), r.json.metadata.resourceVersion], query).to.deep.equal([200, ['x:1'], then]);
    }
    expect(cpus(await req('GET', `${path}?resourceVersion=${then}&resourceVersionMatch=NotOlderThan`))).to.deep.equal(['x:2', 'y:1']);
    await store.compact(await store.currentRevision());
    const gone = await req('GET', `${path}?resourceVersion=${then}&resourceVersionMatch=Exact`);
    expect([gone.status, gone.json.reason]).to.deep.equal([410, 'Expired']);
  });

  it('refuses list options kube refuses: an unknown resourceVersionMatch, one without a resourceVersion or beside continue, Exact at "0", a resourceVersion beside continue', async () => {
    const path = cairnPath('instances', 'exact');
    const cont = encodeURIComponent(Buffer.from(JSON.stringify({ v: 'meta.k8s.io/v1', rv: 5, start: 'a' })).toString('base64'));
    const cases: Array<[string, number, string]> = [
      ['resourceVersion=5&resourceVersionMatch=Newest', 422, 'resourceVersionMatch: Unsupported value: "Newest"'],
      ['resourceVersionMatch=Exact', 422, 'resourceVersionMatch is forbidden unless resourceVersion is provided'],
      ['resourceVersion=0&resourceVersionMatch=Exact', 422, 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'],
      [`resourceVersion=5&resourceVersionMatch=NotOlderThan&continue=${cont}`, 422, 'resourceVersionMatch is forbidden when continue is provided'],
      [`resourceVersion=5&continue=${cont}`, 400, 'specifying resource version is not allowed when using continue'],
    ];
    for (const [query, code, message] of cases) {
      const r = await req('GET', `${path}?${query}`);
      expect([r.status, r.json.message], query).to.satisfy(([s, m]: [number, string]) => s === code && m.includes(message));
    }
  });

  it('Table lists: Name column first, rows of PartialObjectMetadata; includeObject=Object gives full objects', async () => {
    const r = await req('GET', cairnPath('instances', 'labels'), undefined, undefined, { accept: TABLE_ACCEPT });
    expect(r.status, r.text).to.equal(200);
    expect(r.json).to.include({ kind: 'Table', apiVersion: 'meta.k8s.io/v1' });
    expect(r.json.columnDefinitions[0].name).to.equal('Name');
    expect(r.json.metadata.resourceVersion).to.be.a('string');
    expect(r.json.rows).to.have.length(5);
    for (const row of r.json.rows) {
      expect(row.object).to.include({ kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1' });
      expect(row.object.metadata.namespace).to.equal('labels');
      expect(row.object.spec).to.equal(undefined);
      expect(row.cells[0]).to.equal(row.object.metadata.name);
      expect(row.cells).to.have.length(r.json.columnDefinitions.length);
    }
    expect(r.json.rows.find((x: any) => x.object.metadata.name === 'l-a').object.metadata.labels).to.deep.equal({ app: 'a', tier: 'web' });
    const full = await req('GET', `${cairnPath('instances', 'labels')}?includeObject=Object`, undefined, undefined, { accept: TABLE_ACCEPT });
    expect(full.status, full.text).to.equal(200);
    for (const row of full.json.rows) {
      expect(row.object).to.include({ kind: 'Instance', apiVersion: 'cairn.dev/v1alpha1' });
      expect(row.object.spec.cpus).to.equal(1);
    }
  });

  it('all-namespaces lists span namespaces; /api/v1/namespaces follows Clusters', async () => {
    await create(cairnPath('instances', 'other'), instance('o-1', 'other'));
    const all = await req('GET', cairnPath('instances'));
    expect(all.status).to.equal(200);
    const pairs = new Set((all.json.items as any[]).map((o) => `${o.metadata.namespace}/${o.metadata.name}`));
    for (const p of ['labels/l-a', 'other/o-1', 'page/p-00', 'rv/rv-1']) expect(pairs.has(p), p).to.equal(true);
    const nsNames = names(await req('GET', '/api/v1/namespaces'));
    for (const n of ['default', 'cairn-system', 'page', 'labels', 'fld1', 'other']) expect(nsNames, n).to.include(n);
    await create(cairnPath('clusters'), cluster('doomed'));
    expect(names(await req('GET', '/api/v1/namespaces'))).to.include('doomed');
    const del = await req('DELETE', cairnPath('clusters', undefined, 'doomed'));
    expect(del.status, del.text).to.equal(200);
    const deadline = Date.now() + 5000;
    while (names(await req('GET', '/api/v1/namespaces')).includes('doomed')) {
      if (Date.now() > deadline) throw new Error('namespace "doomed" still listed 5 s after its Cluster was deleted');
      await new Promise((r) => setTimeout(r, 50));
    }
    expect((await req('GET', '/api/v1/namespaces/doomed')).status).to.equal(404);
  });
});

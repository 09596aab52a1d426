/**
 * `get -w`'s follow loop against a real etcd and apiserver: a watch from a
 * resourceVersion compacted away (a fresh apiserver, whose watch cache
 * starts after it, replays it from etcd and answers 410 Expired) re-lists
 * and follows on from the list, instead of ending with the error.
 */
import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import { EtcdStore } from '../../../apiserver/storage/etcd-store.js';
import { clientContext, type ClientContext } from '../../../cli/client/context.js';
import { followChanges, type ChangeSource } from '../../../cli/client/follow.js';
import type { Interruption } from '../../../cli/client/interrupt.js';
import { listObjects, watchObjects } from '../../../cli/client/watch.js';
import { cairnPath, cluster, instance } from '../../support/fixtures.js';
import { rawRequest } from '../../support/http.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';

const MERGE = 'application/merge-patch+json';

describe('get -w after 410 Expired (real etcd)', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let store: EtcdStore;
  let ctx: ClientContext | undefined;

  const ok = async (method: string, path: string, body?: unknown, contentType?: string): Promise<any> => {
    const r = await rawRequest(env.kubeconfig, { method, path, body: body === undefined ? undefined : JSON.stringify(body), contentType });
    expect(r.status, `${method} ${path}: ${r.text}`).to.be.oneOf([200, 201]);
    return r.json;
  };

  before(async () => {
    env = await startTestEnv();
    store = new EtcdStore(new Etcd3({ hosts: env.etcd.endpoint }));
    await ok('POST', cairnPath('clusters'), cluster('f-compact'));
  });
  after(async () => {
    ctx?.rest.close();
    store?.client.close();
    await env?.stop();
  });

  it('re-lists, prints from the list, and follows on from its resourceVersion', async () => {
    const ns = 'f-compact';
    const old = await ok('POST', cairnPath('instances', ns), instance('x', ns));
    await ok('PATCH', cairnPath('instances', ns, 'x'), { spec: { cpus: 2 } }, MERGE);
    await store.compact(await store.currentRevision());
    const fresh = await env.addServer();
    ctx = await clientContext({ kubeconfig: fresh.kubeconfigPath, namespace: ns });
    const c = ctx;
    const r = (await c.catalog()).resolveOne('instances');
    const sel = { namespace: ns };

    const log: string[] = [];
    let interrupt!: (code: number) => void;
    const interruption: Interruption = { done: new Promise((resolve) => (interrupt = resolve)), dispose: () => undefined };
    const source: ChangeSource = {
      watch: (rv, onEvent) => {
        log.push(rv === old.metadata.resourceVersion ? 'watch from the compacted version' : 'watch from the list');
        return watchObjects(c, r, sel, rv, onEvent);
      },
      relist: async () => {
        const list = await listObjects(c, r, sel);
        log.push(`relist: ${list.items.map((o) => `${o.metadata.name} cpus=${String(o.spec?.cpus)}`).join(', ')}`);
        // The follow loop is watching again once this resolves; a change now must reach it.
        setTimeout(() => void ok('PATCH', cairnPath('instances', ns, 'x'), { spec: { cpus: 3 } }, MERGE), 200);
        return list.metadata.resourceVersion;
      },
    };
    const onChange = (type: string, obj: unknown) => {
      const o = obj as { metadata: { name: string }; spec?: { cpus?: number } };
      log.push(`${type} ${o.metadata.name} cpus=${String(o.spec?.cpus)}`);
      if (o.spec?.cpus === 3) interrupt(130);
    };
    const code = await followChanges(source, old.metadata.resourceVersion, onChange, { interruption });
    expect(code).to.equal(130);
    expect(log).to.deep.equal(['watch from the compacted version', 'relist: x cpus=2', 'watch from the list', 'MODIFIED x cpus=3']);
  });
});

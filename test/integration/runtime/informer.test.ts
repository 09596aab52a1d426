/**
 * The runtime's Informer against a real etcd and an in-process apiserver,
 * over a pooled KubeConfig: first list fills the cache before hasSynced,
 * add/update/delete handlers, namespace and fieldSelector narrowing
 * (including objects moving in and out of a selector), stop, and the
 * relist after 410 Gone — the informer's server goes away, objects change
 * through another apiserver and etcd is compacted past the informer's
 * resourceVersion, so its resumed watch gets 410 and only a relist can
 * bring it back, delivering the deletes it missed.
 */
import net from 'node:net';
import { URL } from 'node:url';
import { expect } from 'chai';
import { Etcd3 } from 'etcd3';
import type { Logger } from 'winston';
import { CairnClient } from '../../../api/client/cairn-client.js';
import { loadKubeConfig, type PooledKubeConfig } from '../../../api/client/kubeconfig.js';
import type { Instance } from '../../../api/instance.js';
import type { Cluster } from '../../../api/cluster.js';
import type { WorkItem } from '../../../api/workitem.js';
import { EtcdStore } from '../../../apiserver/storage/etcd-store.js';
import { Informer, objectKey, type InformerSource, type ListedObject } from '../../../runtime/informer.js';
import { WatchStream } from '../../../runtime/watch-stream.js';
import { cluster, instance, workItem } from '../../support/fixtures.js';
import { eventually, sleep } from '../../support/eventually.js';
import { kubeconfigFor, startTestEnv, type TestEnv } from '../../support/in-process.js';

const INSTANCES: InformerSource = { group: 'cairn.dev', version: 'v1alpha1', plural: 'instances' };
const WORKITEMS: InformerSource = { group: 'cairn.dev', version: 'v1alpha1', plural: 'workitems' };

const inst = (name: string, ns: string, cpus = 1) => instance(name, ns, { cpus }) as unknown as Instance;
const item = (name: string, ns: string, node: string) => workItem(name, ns, node) as unknown as WorkItem;

/** Handler calls as strings: "add ns/name", "update ns/name cpus=2", "delete ns/name". */
function record<T extends Instance | WorkItem>(informer: Informer<T>): string[] {
  const seen: string[] = [];
  const cpus = (o: T) => ((o.spec as { cpus?: number }).cpus !== undefined ? ` cpus=${(o.spec as { cpus?: number }).cpus}` : '');
  informer.addHandlers({
    add: (o) => seen.push(`add ${objectKey(o)}`),
    update: (old, o) => {
      expect(old.metadata.resourceVersion, 'update passes (old, new)').to.not.equal(o.metadata.resourceVersion);
      seen.push(`update ${objectKey(o)}${cpus(o)}`);
    },
    delete: (o) => seen.push(`delete ${objectKey(o)}`),
  });
  return seen;
}

const names = (i: { list(): ListedObject[] }) => i.list().map(objectKey).sort();

describe('runtime Informer (real etcd, in-process apiserver)', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let kc: PooledKubeConfig;
  let client: CairnClient;
  const informers: Array<{ stop(): Promise<void> }> = [];
  const warnings: string[] = [];
  const errors: string[] = [];
  const log = { warn: (m: string) => warnings.push(m), info: () => undefined, debug: () => undefined, error: (m: string, meta: { object?: string }) => errors.push(`${m}: ${meta.object}`) } as unknown as Logger;

  function informer<T extends Instance | WorkItem>(source: InformerSource, transform?: <U>(o: U) => U): Informer<T> {
    const i = new Informer<T>(kc, source, { log, transform });
    informers.push(i);
    return i;
  }

  before(async () => {
    env = await startTestEnv();
    kc = loadKubeConfig({ kubeconfig: env.server.kubeconfigPath });
    client = new CairnClient(kc);
    for (const c of ['inf-a', 'inf-b', 'inf-c', 'inf-w', 'inf-gone', 'inf-throw', 'inf-idx']) await client.create('Cluster', cluster(c) as unknown as Cluster);
  });
  after(async () => {
    await Promise.all(informers.map((i) => i.stop()));
    kc?.destroyAgent();
    await env?.stop();
  });

  it('fills its cache from the first list before hasSynced, then delivers add, update and delete', async () => {
    await client.create('Instance', inst('pre', 'inf-a'));
    const i = informer<Instance>({ ...INSTANCES, namespace: 'inf-a' });
    const seen = record(i);
    expect(i.hasSynced).to.equal(false);
    i.start();
    await i.waitForSync();
    expect(i.hasSynced).to.equal(true);
    expect(names(i)).to.deep.equal(['inf-a/pre']);
    expect(seen).to.deep.equal(['add inf-a/pre']);
    expect(Number(i.lastResourceVersion)).to.be.greaterThan(0);

    const created = await client.create('Instance', inst('x', 'inf-a'));
    await eventually('add x', () => seen.includes('add inf-a/x'), 5000, 10);
    await client.patch('Instance', 'inf-a', 'x', { spec: { cpus: 2 } });
    await eventually('update x', () => seen.includes('update inf-a/x cpus=2'), 5000, 10);
    expect(i.get('inf-a/x')?.spec.cpus).to.equal(2);
    expect(i.get('inf-a/x')?.metadata.uid).to.equal(created.metadata.uid);
    await client.delete('Instance', 'inf-a', 'x');
    await eventually('delete x', () => seen.includes('delete inf-a/x'), 5000, 10);
    expect(i.get('inf-a/x')).to.equal(undefined);
    expect(seen).to.deep.equal(['add inf-a/pre', 'add inf-a/x', 'update inf-a/x cpus=2', 'delete inf-a/x']);
    expect(Number(i.lastResourceVersion)).to.be.at.least(Number(created.metadata.resourceVersion));

    // Handlers registered after the sync get the cached objects as adds.
    const late: string[] = [];
    i.addHandlers({ add: (o) => late.push(objectKey(o)) });
    expect(late).to.deep.equal(['inf-a/pre']);
  });

  it('byIndex hands out the same list until one of its objects changes, then the list as it is now', async () => {
    await client.create('Instance', inst('one', 'inf-idx', 1));
    await client.create('Instance', inst('two', 'inf-idx', 1));
    const i = informer<Instance>({ ...INSTANCES, namespace: 'inf-idx' });
    i.addIndex('cpus', (o) => [String(o.spec.cpus)]);
    i.start();
    await i.waitForSync();
    const ones = i.byIndex('cpus', '1');
    expect(ones.map(objectKey).sort()).to.deep.equal(['inf-idx/one', 'inf-idx/two']);
    expect(i.byIndex('cpus', '1')).to.equal(ones);
    expect([i.countByIndex('cpus', '1'), i.countByIndex('cpus', '3')]).to.deep.equal([2, 0]);

    await client.patch('Instance', 'inf-idx', 'two', { metadata: { labels: { touched: 'yes' } } });
    await eventually('the label seen', () => i.get('inf-idx/two')?.metadata.labels?.touched === 'yes', 5000, 10);
    const relabelled = i.byIndex('cpus', '1');
    expect(relabelled).not.to.equal(ones);
    expect(relabelled.find((o) => o.metadata.name === 'two')?.metadata.labels?.touched).to.equal('yes');

    await client.patch('Instance', 'inf-idx', 'two', { spec: { cpus: 2 } });
    await eventually('two moved to cpus 2', () => i.byIndex('cpus', '2').length === 1, 5000, 10);
    expect(i.byIndex('cpus', '1').map(objectKey)).to.deep.equal(['inf-idx/one']);
    await client.delete('Instance', 'inf-idx', 'one');
    await eventually('one gone', () => i.byIndex('cpus', '1').length === 0, 5000, 10);
  });

  it('applies a big list a chunk at a time, letting the event loop run in between (a leader renews its lease meanwhile)', async () => {
    await client.create('Cluster', cluster('inf-big') as unknown as Cluster);
    const n = 2500;
    for (let k = 0; k < n; k += 250) await Promise.all(Array.from({ length: Math.min(250, n - k) }, (_, j) => client.create('Instance', inst(`b${k + j}`, 'inf-big'))));
    const i = informer<Instance>({ ...INSTANCES, namespace: 'inf-big' });
    let turns = 0;
    let spinning = true;
    const turn = () => {
      turns++;
      if (spinning) setImmediate(turn);
    };
    const turnsAtAdd: number[] = [];
    i.addHandlers({ add: () => turnsAtAdd.push(turns) });
    setImmediate(turn);
    i.start();
    await i.waitForSync();
    spinning = false;
    expect(turnsAtAdd).to.have.length(n);
    expect(turnsAtAdd.at(-1)! - turnsAtAdd[0]!, 'event-loop turns between the first add and the last').to.be.at.least(2);
  });

  it('stores a whole list before it tells a handler of any of it: no reader sees part of a list (listed in key order, not in etcd\'s, a part is a state that never was)', async () => {
    await client.create('Cluster', cluster('inf-whole') as unknown as Cluster);
    await Promise.all(['w1', 'w2', 'w3'].map((n) => client.create('Instance', inst(n, 'inf-whole'))));
    const i = informer<Instance>({ ...INSTANCES, namespace: 'inf-whole' });
    const seenAtAdd: number[] = [];
    i.addHandlers({ add: () => seenAtAdd.push(i.list().length) });
    i.start();
    await i.waitForSync();
    expect(seenAtAdd).to.deep.equal([3, 3, 3]);
  });

  it('a namespace narrows the list and the watch; a cluster-wide informer sees every namespace', async () => {
    await client.create('Instance', inst('early-b', 'inf-b'));
    await client.create('Instance', inst('early-c', 'inf-c'));
    const onlyC = informer<Instance>({ ...INSTANCES, namespace: 'inf-c' });
    const all = informer<Instance>(INSTANCES);
    onlyC.start();
    all.start();
    await Promise.all([onlyC.waitForSync(), all.waitForSync()]);
    expect(names(onlyC)).to.deep.equal(['inf-c/early-c']);
    expect(names(all)).to.include.members(['inf-a/pre', 'inf-b/early-b', 'inf-c/early-c']);

    // Written in this order, a watch that ignored the namespace would see late-b before late-c.
    await client.create('Instance', inst('late-b', 'inf-b'));
    await client.create('Instance', inst('late-c', 'inf-c'));
    await eventually('late-c in the namespaced cache', () => onlyC.get('inf-c/late-c') !== undefined, 5000, 10);
    await eventually('both in the cluster-wide cache', () => all.get('inf-b/late-b') !== undefined && all.get('inf-c/late-c') !== undefined, 5000, 10);
    expect(names(onlyC)).to.deep.equal(['inf-c/early-c', 'inf-c/late-c']);
  });

  it('a fieldSelector (spec.nodeName=x on WorkItems) narrows list and watch; moving away is a delete, moving back an add', async () => {
    await client.create('WorkItem', item('w-x1', 'inf-w', 'x'));
    await client.create('WorkItem', item('w-y1', 'inf-w', 'y'));
    const onX = informer<WorkItem>({ ...WORKITEMS, fieldSelector: 'spec.nodeName=x' });
    const seen = record(onX);
    onX.start();
    await onX.waitForSync();
    expect(names(onX)).to.deep.equal(['inf-w/w-x1']);

    await client.create('WorkItem', item('w-y2', 'inf-w', 'y'));
    await client.create('WorkItem', item('w-x2', 'inf-w', 'x'));
    await eventually('w-x2', () => onX.get('inf-w/w-x2') !== undefined, 5000, 10);
    await client.patch('WorkItem', 'inf-w', 'w-x1', { spec: { nodeName: 'y' } });
    await eventually('w-x1 moved away', () => onX.get('inf-w/w-x1') === undefined, 5000, 10);
    await client.patch('WorkItem', 'inf-w', 'w-y1', { spec: { nodeName: 'x' } });
    await eventually('w-y1 moved in', () => onX.get('inf-w/w-y1') !== undefined, 5000, 10);
    expect(names(onX)).to.deep.equal(['inf-w/w-x2', 'inf-w/w-y1']);
    expect(seen).to.deep.equal(['add inf-w/w-x1', 'add inf-w/w-x2', 'delete inf-w/w-x1', 'add inf-w/w-y1']);
    expect(onX.get('inf-w/w-y1')?.spec.nodeName).to.equal('x');
  });

  it('stop() ends the watch: later changes are not delivered', async () => {
    const i = informer<Instance>({ ...INSTANCES, namespace: 'inf-b' });
    const seen = record(i);
    i.start();
    await i.waitForSync();
    await i.stop();
    await client.create('Instance', inst('after-stop', 'inf-b'));
    await sleep(300);
    expect(seen.filter((s) => s.includes('after-stop'))).to.deep.equal([]);
    expect(i.get('inf-b/after-stop')).to.equal(undefined);
  });

  /** An informer whose watches go to `watcher` instead of the apiserver (its lists still do). */
  function withWatch(watcher: Pick<WatchStream, 'watch'>, idleTimeoutMs = 60_000): Informer<Instance> {
    const i = new Informer<Instance>(kc, { ...INSTANCES, namespace: 'inf-b' }, { log, idleTimeoutMs });
    (i as unknown as { watcher: Pick<WatchStream, 'watch'> }).watcher = watcher;
    informers.push(i);
    return i;
  }

  /** A TLS port that takes connections and never says a word, as a hung apiserver does; counts them. */
  async function blackHole(): Promise<{ kc: PooledKubeConfig; made: () => number; open: () => number; close: () => void }> {
    const sockets = new Set<net.Socket>();
    let made = 0;
    const server = net.createServer((s) => {
      s.resume(); // reads, so a close from the client is seen
      made++;
      sockets.add(s);
      s.on('close', () => sockets.delete(s));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as net.AddressInfo;
    return {
      kc: loadKubeConfig({ server: `https://127.0.0.1:${port}`, token: 'nobody', insecureSkipTlsVerify: true }),
      made: () => made,
      open: () => sockets.size,
      close: () => (sockets.forEach((s) => s.destroy()), server.close()),
    };
  }

  it('a watch whose response never comes (a hung apiserver) is given up when silent too long, its connection closed, and stop() does not wait for it', async () => {
    const hole = await blackHole();
    try {
      const i = withWatch(new WatchStream(hole.kc), 200);
      i.start();
      await i.waitForSync();
      await eventually('four watches sent', async () => hole.made() >= 4, 5000);
      // Each one given up is closed: left open, each would hold one of the pooled agent's 64 sockets for good.
      await eventually('every watch but the latest closed', async () => hole.open() <= 1, 2000);
      const stopping = Date.now();
      await i.stop();
      expect(Date.now() - stopping).to.be.below(1000);
      await eventually('the last one closed by stop()', async () => hole.open() === 0, 2000);
    } finally {
      hole.close();
      hole.kc.destroyAgent();
    }
  });

  it('a watch ended by an ERROR other than 410 is retried with backoff, not at once', async () => {
    let calls = 0;
    const i = withWatch({
      watch: async (_path, _query, onEvent, done) => {
        calls++;
        setImmediate(() => (onEvent('ERROR', { kind: 'Status', code: 500, message: 'etcd is down' }), done(null)));
      },
    });
    i.start();
    await i.waitForSync();
    await sleep(500);
    expect(calls, 'backing off 100, 200, 400 ms').to.be.within(2, 5);
    expect(warnings).to.include('watch ended by an error; retrying');
  });

  it('a list change a handler throws on is undone and told again by the next list, and so is every change after it', async () => {
    await client.create('Cluster', cluster('inf-relist') as unknown as Cluster);
    await Promise.all(['r1', 'r2', 'r3'].map((n) => client.create('Instance', inst(n, 'inf-relist'))));
    const i = informer<Instance>({ ...INSTANCES, namespace: 'inf-relist' });
    let thrown = false;
    i.addHandlers({
      add: (o) => {
        if (o.metadata.name !== 'r1' || thrown) return;
        thrown = true;
        throw new Error('r1 refused once');
      },
    });
    const seen = record(i);
    i.start();
    await i.waitForSync();
    // The first list stored all three, told r1 (refused: undone), r2 and r3; the second told r1 again.
    expect(seen.filter((e) => e.startsWith('add')).sort()).to.deep.equal(['add inf-relist/r1', 'add inf-relist/r2', 'add inf-relist/r3']);
    expect(names(i)).to.deep.equal(['inf-relist/r1', 'inf-relist/r2', 'inf-relist/r3']);
  });

  it('an event whose transform or handler throws is not lost: it is undone, logged, and delivered again by a relist', async () => {
    const ns = 'inf-throw';
    await client.create('Instance', inst('flaky', ns));
    const throwOnce = (what: string) => {
      let thrown = false;
      return (o: Instance) => {
        if (o.spec.cpus !== Number(what) || thrown) return;
        thrown = true;
        throw new Error(`cpus=${what} refused once`);
      };
    };
    const transformThrow = throwOnce('3');
    const i = informer<Instance>({ ...INSTANCES, namespace: ns }, (o) => (transformThrow(o as Instance), o));
    // A watch stream that swallowed these throws would lose them; before, the first left the cache without the change
    // and the second kept every later handler from hearing of it, with the resourceVersion moved past both.
    const handlerThrow = throwOnce('5');
    i.addHandlers({ update: (_old, o) => handlerThrow(o) });
    const seen = record(i);
    i.start();
    await i.waitForSync();

    await client.patch('Instance', ns, 'flaky', { spec: { cpus: 3 } });
    await eventually('the transform-refused change reaches the cache', () => i.get(`${ns}/flaky`)?.spec.cpus === 3, 10_000, 20);
    await client.patch('Instance', ns, 'flaky', { spec: { cpus: 5 } });
    await eventually('the handler-refused change reaches every handler', () => seen.includes(`update ${ns}/flaky cpus=5`), 10_000, 20);
    expect(seen).to.deep.equal([`add ${ns}/flaky`, `update ${ns}/flaky cpus=3`, `update ${ns}/flaky cpus=5`]);
    expect(errors.filter((e) => e.includes(`${ns}/flaky`))).to.have.length(2);

    await client.patch('Instance', ns, 'flaky', { spec: { cpus: 6 } });
    await eventually('it watches again after the relists', () => seen.includes(`update ${ns}/flaky cpus=6`), 5000, 10);
  });

  it('relists after 410 Gone and converges, delivering the update, add and delete it missed', async () => {
    const ns = 'inf-gone';
    await client.create('Instance', inst('keep', ns));
    await client.create('Instance', inst('doomed', ns));
    const i = informer<Instance>({ ...INSTANCES, namespace: ns });
    const seen = record(i);
    i.start();
    await i.waitForSync();
    expect(names(i)).to.deep.equal([`${ns}/doomed`, `${ns}/keep`]);
    const rvBefore = i.lastResourceVersion;

    // Take the informer's apiserver away; change things through another one; compact past everything it saw.
    const port = Number(new URL(env.server.url).port);
    await env.server.close();
    const other = await env.addServer();
    const otherClient = new CairnClient(kubeconfigFor(other));
    await otherClient.patch('Instance', ns, 'keep', { spec: { cpus: 3 } });
    await otherClient.delete('Instance', ns, 'doomed');
    await otherClient.create('Instance', inst('newcomer', ns));
    const etcd = new EtcdStore(new Etcd3({ hosts: env.etcd.endpoint }));
    try {
      await etcd.compact(await etcd.currentRevision());
    } finally {
      etcd.client.close();
    }
    env.server = await env.addServer({ port, kubeconfigPath: env.server.kubeconfigPath });

    // The scenario is real: a watch from the informer's last version now gets 410.
    const codes: number[] = [];
    const probe = new WatchStream(kubeconfigFor(env.server));
    await new Promise<void>((resolve) => {
      const path = `/apis/cairn.dev/v1alpha1/namespaces/${ns}/instances`;
      void probe.watch(path, { resourceVersion: rvBefore }, (type, obj) => type === 'ERROR' && codes.push(obj.code), () => resolve(), new AbortController().signal);
    });
    expect(codes).to.deep.equal([410]);

    await eventually('the cache converges on the final state', () => names(i).join() === `${ns}/keep,${ns}/newcomer` && i.get(`${ns}/keep`)?.spec.cpus === 3, 10_000, 20);
    expect(seen.slice(2).sort()).to.deep.equal([`add ${ns}/newcomer`, `delete ${ns}/doomed`, `update ${ns}/keep cpus=3`]);
    expect(Number(i.lastResourceVersion)).to.be.greaterThan(Number(rvBefore));

    // And it watches again after the relist.
    await client.create('Instance', inst('after-relist', ns));
    await eventually('add after the relist', () => seen.includes(`add ${ns}/after-relist`), 5000, 10);
  });
});

/**
 * The reconcilers' executor against a real apiserver when writes fail:
 * the owner's finalizer patch and the WorkItem writes run concurrently, so
 * when the patch fails (409 on a stale owner, or any error while etcd is
 * unavailable) the WorkItem writes of the same attempt must still be
 * awaited — never left running past the attempt (the work queue would
 * start the next one on top of them, after the reconciler forgot its
 * assumed placements) and never left with an unhandled rejection, which
 * terminates a Node.js process. Only a create that was refused is reported
 * as such (the reconciler then drops its assumed placement): one that landed
 * places its WorkItem on the node whatever else failed.
 */
import { expect } from 'chai';
import { CairnClient } from '../../../api/client/cairn-client.js';
import { ApiStatusError } from '../../../api/client/errors.js';
import { loadKubeConfig, type PooledKubeConfig } from '../../../api/client/kubeconfig.js';
import { createLogger } from '../../../api/log.js';
import type { Instance } from '../../../api/instance.js';
import type { WorkItem } from '../../../api/workitem.js';
import { execute } from '../../../controller/reconcilers/executor.js';
import { desiredInstanceWorkItem } from '../../../controller/reconcilers/instance/workitem-spec.js';
import { StaleGuard } from '../../../controller/reconcilers/stale-guard.js';
import { EventRecorder } from '../../../runtime/events.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';

const NS = 'exec';

describe('controller executor: failed writes (real etcd + apiserver)', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let kc: PooledKubeConfig;
  let client: CairnClient;
  let deps: Parameters<typeof execute>[0];
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => void unhandled.push(reason);

  before(async () => {
    env = await startTestEnv();
    kc = loadKubeConfig({ kubeconfig: env.server.kubeconfigPath });
    client = new CairnClient(kc, 'test');
    const log = createLogger('executor-test', 'error');
    deps = { client, recorder: new EventRecorder(kc, 'test', 'test', log), log, stale: new StaleGuard() };
    await client.create('Cluster', { metadata: { name: NS }, spec: {} });
    process.prependListener('unhandledRejection', onUnhandled);
  });
  after(async () => {
    process.removeListener('unhandledRejection', onUnhandled);
    kc?.destroyAgent();
    await env?.stop();
  });

  /** An Instance whose copy we hold is already stale (someone wrote it after we read it). */
  async function staleInstance(name: string): Promise<Instance> {
    const created = await client.create('Instance', { metadata: { name, namespace: NS }, spec: { cpus: 1, memory: '64Mi', process: { command: ['/bin/true'] } } });
    await client.patch('Instance', NS, name, { metadata: { labels: { touched: 'yes' } } });
    return created;
  }

  it('rejects with the finalizer conflict only after the WorkItem writes settled, leaving no unhandled rejection', async () => {
    const inst = await staleInstance('a');
    const bad: WorkItem = desiredInstanceWorkItem(inst, undefined, new Map(), 'n1');
    bad.spec.instance!.cpus = 0; // refused by the WorkItem schema (minimum 1): this write fails too
    const refused: string[] = [];
    const err = await execute(deps, 'Instance', inst, [{ type: 'addFinalizer' }, { type: 'createWorkItem', workItem: bad }], inst.status, (w) => refused.push(w.metadata.name!)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect(err).to.be.instanceOf(ApiStatusError);
    expect(refused, 'the refused create is reported (its assumed placement is dropped)').to.deep.equal([bad.metadata.name]);
    await new Promise((r) => setTimeout(r, 300));
    expect(unhandled.map(String), 'unhandled rejections').to.deep.equal([]);
  });

  it('does not return before a WorkItem create of the same attempt has landed', async () => {
    const inst = await staleInstance('b');
    const wi = desiredInstanceWorkItem(inst, undefined, new Map(), 'n1');
    const refused: string[] = [];
    const err = await execute(deps, 'Instance', inst, [{ type: 'addFinalizer' }, { type: 'createWorkItem', workItem: wi }], inst.status, (w) => refused.push(w.metadata.name!)).then(
      () => undefined,
      (e: unknown) => e,
    );
    expect((err as ApiStatusError | undefined)?.code).to.equal(409);
    expect(refused, 'a create that landed is not reported refused, though the attempt failed: its placement stays assumed').to.deep.equal([]);
    expect(await client.get('WorkItem', NS, wi.metadata.name!), 'the create had settled when execute rejected').to.not.equal(undefined);
  });

  it('keeps the placement assumed when a create landed but its answer was lost; drops it when the create did not happen', async () => {
    const inst = await client.create('Instance', { metadata: { name: 'lost', namespace: NS }, spec: { cpus: 1, memory: '64Mi', process: { command: ['/bin/true'] } } });
    const lostAnswer = (landed: boolean) =>
      Object.assign(Object.create(client) as CairnClient, {
        create: async (kind: 'WorkItem', obj: WorkItem) => {
          if (landed) await client.create(kind, obj);
          throw Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' });
        },
      });
    for (const [landed, node] of [[true, 'n1'], [false, 'n2']] as const) {
      const wi = desiredInstanceWorkItem(inst, undefined, new Map(), node);
      const refused: string[] = [];
      const err = await execute({ ...deps, client: lostAnswer(landed) }, 'Instance', inst, [{ type: 'createWorkItem', workItem: wi }], undefined, (w) => refused.push(w.metadata.name!)).then(
        () => undefined,
        (e: unknown) => e,
      );
      expect(String(err)).to.include('socket hang up');
      expect(refused, landed ? 'landed: its placement stays' : 'never made: its placement goes').to.deep.equal(landed ? [] : [wi.metadata.name]);
    }
  });

  it('releases the WorkItem it planned on, by uid: one made since under the same name is left alone', async () => {
    const inst = await client.create('Instance', { metadata: { name: 'again', namespace: NS }, spec: { cpus: 1, memory: '64Mi', process: { command: ['/bin/true'] } } });
    const wi = desiredInstanceWorkItem(inst, undefined, new Map(), 'n1');
    const old = await client.create('WorkItem', { ...wi, metadata: { ...wi.metadata, finalizers: [] } });
    await client.delete('WorkItem', NS, wi.metadata.name!);
    const current = await client.create('WorkItem', wi);
    await execute(deps, 'Instance', inst, [{ type: 'releaseWorkItem', name: wi.metadata.name!, uid: old.metadata.uid }], undefined);
    const kept = await client.get('WorkItem', NS, wi.metadata.name!);
    expect(kept?.metadata.uid).to.equal(current.metadata.uid);
    expect(kept?.metadata.deletionTimestamp).to.equal(undefined);
    await execute(deps, 'Instance', inst, [{ type: 'releaseWorkItem', name: wi.metadata.name!, uid: current.metadata.uid }], undefined);
    expect(await client.get('WorkItem', NS, wi.metadata.name!)).to.equal(undefined);
  });
});

/**
 * EventRecorder against a real etcd and an in-process apiserver, read back
 * with CoreV1Api: an Event in the object's namespace, a repeat within the
 * window bumps count and lastTimestamp of the same Event, a different
 * message or a repeat after the window makes a new one, Events about one
 * object past a burst of 25 are dropped (one more every 5 minutes), cluster-scoped
 * objects land in `default`, and a failed write is logged, never thrown.
 */
import { expect } from 'chai';
import { CoreV1Api, type CoreV1Event } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { loadKubeConfig, type PooledKubeConfig } from '../../../api/client/kubeconfig.js';
import { EventRecorder, type InvolvedObject } from '../../../runtime/events.js';
import { FakeClock } from '../../support/fake-clock.js';
import { startTestEnv, type TestEnv } from '../../support/in-process.js';

const NS = 'default';

describe('EventRecorder (real etcd, in-process apiserver)', function () {
  this.timeout(30_000);
  let env: TestEnv;
  let kc: PooledKubeConfig;
  let core: CoreV1Api;
  const warnings: Array<Record<string, unknown>> = [];
  const log = { warn: (_m: string, meta: Record<string, unknown>) => warnings.push(meta), info: () => undefined, error: () => undefined, debug: () => undefined } as unknown as Logger;

  const eventsAbout = async (namespace: string, name: string): Promise<CoreV1Event[]> =>
    (await core.listNamespacedEvent({ namespace })).items.filter((e) => e.involvedObject.name === name).sort((a, b) => a.metadata!.name!.localeCompare(b.metadata!.name!));
  const obj = (name: string, namespace?: string): InvolvedObject => ({
    apiVersion: 'cairn.dev/v1alpha1',
    kind: namespace ? 'Instance' : 'Cluster',
    metadata: { name, namespace, uid: `uid-${name}` },
  });

  before(async () => {
    env = await startTestEnv();
    kc = loadKubeConfig({ kubeconfig: env.server.kubeconfigPath });
    core = kc.makeApiClient(CoreV1Api);
  });
  after(async () => {
    kc?.destroyAgent();
    await env?.stop();
  });

  it('drops Events about an object past a burst of 25, then lets one through every 5 minutes (client-go\'s spam filter)', async () => {
    const clock = new FakeClock(Date.parse('2030-01-02T00:00:00Z'));
    const rec = new EventRecorder(kc, 'cairn-controller', 'host-1', log, clock);
    for (let i = 0; i < 30; i++) await rec.record(obj('flaky', NS), 'Warning', 'FailedScheduling', 'no node fits');
    expect((await eventsAbout(NS, 'flaky')).map((e) => e.count)).to.deep.equal([25]);
    clock.advance(5 * 60_000);
    await rec.record(obj('flaky', NS), 'Warning', 'FailedScheduling', 'no node fits');
    await rec.record(obj('flaky', NS), 'Warning', 'FailedScheduling', 'no node fits');
    expect((await eventsAbout(NS, 'flaky')).map((e) => e.count)).to.deep.equal([26]);
  });

  it('creates an Event about the object, then bumps count and lastTimestamp on an identical repeat', async () => {
    const clock = new FakeClock(Date.parse('2030-01-01T00:00:00Z'));
    const rec = new EventRecorder(kc, 'cairn-controller', 'host-1', log, clock);
    await rec.record(obj('web', NS), 'Warning', 'InvalidSpec', 'spec.cpus: must be at least 1');
    const [first, ...others] = await eventsAbout(NS, 'web');
    expect(others).to.deep.equal([]);
    expect(first).to.deep.include({ type: 'Warning', reason: 'InvalidSpec', message: 'spec.cpus: must be at least 1', count: 1 });
    expect(first!.involvedObject).to.deep.include({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', name: 'web', namespace: NS, uid: 'uid-web' });
    expect(first!.source).to.deep.include({ component: 'cairn-controller', host: 'host-1' });
    expect(first!.metadata?.name).to.match(/^web\./);
    expect(new Date(first!.firstTimestamp!).toISOString()).to.equal('2030-01-01T00:00:00.000Z');

    clock.advance(5000);
    await rec.record(obj('web', NS), 'Warning', 'InvalidSpec', 'spec.cpus: must be at least 1');
    clock.advance(5000);
    await rec.record(obj('web', NS), 'Warning', 'InvalidSpec', 'spec.cpus: must be at least 1');
    const after = await eventsAbout(NS, 'web');
    expect(after).to.have.length(1);
    expect(after[0]!.metadata?.name).to.equal(first!.metadata?.name);
    expect(after[0]!.count).to.equal(3);
    expect(new Date(after[0]!.lastTimestamp!).toISOString()).to.equal('2030-01-01T00:00:10.000Z');
    expect(new Date(after[0]!.firstTimestamp!).toISOString(), 'firstTimestamp stays').to.equal('2030-01-01T00:00:00.000Z');
    expect(warnings).to.deep.equal([]);
  });

  it('a different reason or message, or a repeat after the 10-minute window, makes a new Event', async () => {
    const clock = new FakeClock(Date.parse('2030-01-02T00:00:00Z'));
    const rec = new EventRecorder(kc, 'cairn-controller', 'host-1', log, clock);
    await rec.record(obj('db', NS), 'Normal', 'Scheduled', 'placed on n1');
    clock.advance(1);
    await rec.record(obj('db', NS), 'Normal', 'Scheduled', 'placed on n2');
    clock.advance(1);
    await rec.record(obj('db', NS), 'Normal', 'Started', 'placed on n2');
    clock.advance(11 * 60_000);
    await rec.record(obj('db', NS), 'Normal', 'Scheduled', 'placed on n1');
    const events = await eventsAbout(NS, 'db');
    expect(events.map((e) => `${e.reason}: ${e.message} ×${e.count}`).sort()).to.deep.equal([
      'Scheduled: placed on n1 ×1',
      'Scheduled: placed on n1 ×1',
      'Scheduled: placed on n2 ×1',
      'Started: placed on n2 ×1',
    ]);
  });

  it('files Events about cluster-scoped objects in `default`', async () => {
    const rec = new EventRecorder(kc, 'cairn-controller', 'host-1', log);
    await rec.record(obj('prod'), 'Normal', 'Created', 'cluster prod created');
    const [e] = await eventsAbout('default', 'prod');
    expect(e?.involvedObject).to.deep.include({ kind: 'Cluster', name: 'prod' });
  });

  it('never throws: an Event that cannot be written is logged and dropped, and the next call tries a create again', async () => {
    const rec = new EventRecorder(kc, 'cairn-controller', 'host-1', log);
    warnings.length = 0;
    await rec.record(obj('lost', 'no-such-namespace'), 'Warning', 'Oops', 'x');
    await rec.record(obj('lost', 'no-such-namespace'), 'Warning', 'Oops', 'x');
    expect(warnings.map((w) => w.object)).to.deep.equal(['no-such-namespace/lost', 'no-such-namespace/lost']);
    expect(String(warnings[0]!.error)).to.match(/404|not found/i);
  });

  it('when the aggregated Event has gone (TTL, deleted), the repeat is logged and the next one creates a fresh Event', async () => {
    const rec = new EventRecorder(kc, 'cairn-controller', 'host-1', log);
    await rec.record(obj('eph', NS), 'Normal', 'Tick', 'tock');
    const [e] = await eventsAbout(NS, 'eph');
    await core.deleteNamespacedEvent({ namespace: NS, name: e!.metadata!.name! });
    warnings.length = 0;
    await rec.record(obj('eph', NS), 'Normal', 'Tick', 'tock');
    expect(warnings).to.have.length(1);
    await rec.record(obj('eph', NS), 'Normal', 'Tick', 'tock');
    const now = await eventsAbout(NS, 'eph');
    expect(now.map((x) => x.count)).to.deep.equal([1]);
    expect(now[0]!.metadata?.name).to.not.equal(e!.metadata!.name);
  });
});

/**
 * Controller acceptance, a new leader and a dead node, against a real etcd
 * + apiserver with fake agents. A controller that starts (after a restart
 * or a leader change) observes every lease afresh, so it must wait a full
 * lease duration before it may call a node dead — but a lease it has never
 * seen renewed is no evidence of life either: a node that is Unreachable
 * stays Unreachable (no NodeReachable event, nothing scheduled onto it)
 * until its agent actually renews again.
 */
import { expect } from 'chai';
import { getCondition } from '../../../api/conditions.js';
import type { Instance } from '../../../api/instance.js';
import { dumpLogs, startControllerEnv, until, type ControllerEnv } from '../../support/controller-env.js';
import type { FakeAgent } from '../../support/fake-agent.js';

const NS = 'restart';

function instanceSpec(name: string): Instance {
  return { metadata: { name, namespace: NS }, spec: { cpus: 1, memory: '128Mi', process: { command: ['/bin/sleep', '3600'] } } };
}

describe('controller: a new leader does not revive a dead node (real etcd + apiserver, fake agents)', function () {
  this.timeout(60_000);
  let c: ControllerEnv;
  let dead: FakeAgent;

  before(async () => {
    c = await startControllerEnv();
    await c.createCluster(NS);
    dead = await c.startAgent(NS, 'n1');
    await c.startAgent(NS, 'n2');
    await until('both nodes Ready', async () => {
      const nodes = (await c.client.list('Node', { namespace: NS })).items;
      return nodes.length === 2 && nodes.every((n) => n.status?.phase === 'Ready') ? true : undefined;
    });
    // One instance on each node, so both stay equally allocated.
    await c.client.create('Instance', { ...instanceSpec('stay'), spec: { ...instanceSpec('stay').spec, failoverPolicy: 'Manual', placement: { nodeName: 'n1' } } });
    await c.client.create('Instance', { ...instanceSpec('other'), spec: { ...instanceSpec('other').spec, placement: { nodeName: 'n2' } } });
    await until('stay Running on n1, other on n2', async () => {
      const i = await c.client.get('Instance', NS, 'stay');
      const o = await c.client.get('Instance', NS, 'other');
      return i?.status?.phase === 'Running' && i.status.nodeName === 'n1' && o?.status?.phase === 'Running' ? true : undefined;
    });
  });
  afterEach(function () {
    if (this.currentTest?.state === 'failed') dumpLogs(c);
  });
  after(async () => c?.stop());

  it('keeps an Unreachable node Unreachable across a controller restart until its agent renews again', async () => {
    dead.freeze();
    const unreachable = await until('n1 Unreachable', async () => {
      const n = await c.client.get('Node', NS, 'n1');
      return n?.status?.phase === 'Unreachable' ? n : undefined;
    });
    const since = getCondition(unreachable.status!.conditions, 'Ready')!.lastTransitionTime;
    await until('stay Unknown', async () => ((await c.client.get('Instance', NS, 'stay'))?.status?.phase === 'Unknown' ? true : undefined));

    await c.restartController();
    const restartedAt = Date.now();
    // An instance created now would land on n1 if n1 looked Ready: both nodes hold one equal instance and n1 wins ties by name.
    await c.client.create('Instance', instanceSpec('probe'));
    const phases = new Set<string>();
    const stay = new Set<string>();
    while (Date.now() < restartedAt + 3000) {
      const n = await c.client.get('Node', NS, 'n1');
      phases.add(`${n?.status?.phase}/${getCondition(n?.status?.conditions, 'Ready')?.status}`);
      const i = await c.client.get('Instance', NS, 'stay');
      stay.add(`${i?.status?.phase}/${getCondition(i?.status?.conditions, 'Ready')?.status}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    expect([...phases], 'n1 as the new leader saw it').to.deep.equal(['Unreachable/Unknown']);
    expect([...stay], 'its instance is not reported Running from a dead node').to.deep.equal(['Unknown/Unknown']);
    const n1 = await c.client.get('Node', NS, 'n1');
    expect(getCondition(n1!.status!.conditions, 'Ready')!.lastTransitionTime, 'unreachable since before the restart').to.equal(since);
    expect((await c.events(NS)).filter((e) => e.reason === 'NodeReachable')).to.deep.equal([]);
    const probe = await until('probe placed', async () => {
      const i = await c.client.get('Instance', NS, 'probe');
      return i?.status?.nodeName ? i : undefined;
    });
    expect(probe.status!.nodeName).to.equal('n2');

    // Evidence of life: the agent renews again.
    dead.heartbeat = true;
    dead.working = true;
    await until('n1 Ready again', async () => ((await c.client.get('Node', NS, 'n1'))?.status?.phase === 'Ready' ? true : undefined));
    await until('NodeReachable event', async () => (await c.events(NS)).find((e) => e.involvedObject.name === 'n1' && e.reason === 'NodeReachable'));
  });
});

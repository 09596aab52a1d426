/**
 * Issue 17: a flood of hostile requests (the shapes that once stalled the
 * apiserver's event loop for minutes) must not starve what fencing depends
 * on. While 16 clients send nothing else, a node's lease renewals keep
 * p99 ≤ 1 s, and a real agent keeps its instance running: it never loses
 * its node lease and never stops the instance for want of it.
 */
import { expect } from 'chai';
import { percentile, targetFromKubeconfig, type ApiTarget } from '../../../hack/bench/lib.js';
import { startLeaseProbe } from '../../../hack/fuzz/lease-probe.js';
import { HOSTILE_BODIES } from '../../../hack/fuzz/requests.js';
import { send } from '../../../hack/fuzz/runner.js';
import { alive, copiesOf } from '../../support/agent-process.js';
import { instanceWorkItem, tickCommand, useAgentE2E } from './harness.js';
import { scaled } from '../../support/scale.js';

/** 20 s under npm run test:full. */
const FLOOD_SECONDS = scaled(10, 20);
const FLOODERS = 16;

/** Sends the hostile bodies round and round from `clients` connections until `until`; resolves with how many. */
async function flood(t: ApiTarget, ns: string, clients: number, until: number): Promise<number> {
  let sent = 0;
  const client = async (offset: number) => {
    for (let i = offset; Date.now() < until; i++) {
      const h = HOSTILE_BODIES[i % HOSTILE_BODIES.length]!;
      const patch = i % 2 === 1;
      await send(t, { method: patch ? 'PATCH' : 'POST', path: `/apis/cairn.dev/v1alpha1/namespaces/${ns}/instances${patch ? '/x' : ''}?fieldManager=flood`, contentType: h.contentType, body: h.body });
      sent++;
    }
  };
  await Promise.all(Array.from({ length: clients }, (_, i) => client(i)));
  return sent;
}

describe('cairn agent end to end: a hostile-request flood (issue 17)', function () {
  this.timeout(90_000);
  const e2e = useAgentE2E();
  const inst = 'steady';
  let attempt = 0;

  it(`keeps lease renewals under 1 s (p99) and the instance running through ${FLOOD_SECONDS} s of hostile requests`, async function () {
    // About 20 renewals make the p99 their slowest one, and the suite's other files share the two cores:
    // one renewal of 1.27 s was seen once in CI. A second attempt, in a namespace of its own; an apiserver
    // that starves renewals under the flood fails both.
    this.retries(1);
    const ns = `e2e-flood-${++attempt}`;
    const node = `node-flood-${attempt}`;
    const marker = `${e2e.marker}-${attempt}`; // still matched by the file's cleanup
    await e2e.createCluster(ns);
    await e2e.startAgent({ cluster: ns, nodeName: node, dataDir: e2e.tmp('flood') });
    await e2e.client.create('WorkItem', instanceWorkItem(ns, node, inst, tickCommand(marker, inst), { fencing: { leaseName: `instance-${inst}` } }));
    const pid = (await e2e.waitWorkItem(ns, `${inst}.${node}`, 'Done', (w) => w.status?.phase === 'Done' && !!w.status.instance?.pid)).status!.instance!.pid!;
    e2e.trackGroup(pid);

    const t = targetFromKubeconfig(e2e.server.kubeconfig, FLOODERS + 2);
    try {
      const probe = await startLeaseProbe(t, ns, 'probe-node', 500);
      const sent = await flood(t, ns, FLOODERS, Date.now() + FLOOD_SECONDS * 1000);
      const renewals = await probe.stop();
      const p99 = percentile(renewals, 99);
      expect(sent, 'hostile requests sent').to.be.above(FLOOD_SECONDS * 10);
      expect(renewals.filter((ms) => ms === Infinity), 'failed renewals').to.deep.equal([]);
      expect(p99, `renewal p99 (ms) of ${renewals.length}, max ${Math.max(...renewals).toFixed(0)}`).to.be.at.most(1000);
    } finally {
      t.agent.destroy();
    }
    expect(alive(pid), 'the instance kept running').to.equal(true);
    expect(copiesOf(marker)).to.have.length(1);
    const w = await e2e.workItem(ns, `${inst}.${node}`);
    expect(w?.status?.instance?.pid, 'never restarted').to.equal(pid);
  });
});

/**
 * Fencing against a real apiserver (docs/fencing.md): when the agent cannot
 * reach the apiserver it stops its instances itself before its node lease
 * expires (so the controller may start them elsewhere without ever running
 * two copies), and starts them again, claimed anew, once a new term of the
 * node lease begins. Two ways to lose the apiserver: connections
 * refused/reset (tcp-proxy cut), and a partition where requests simply hang
 * (partition-proxy hold).
 */
import { expect } from 'chai';
import { eventually, sleep } from '../../support/eventually.js';
import { alive, copiesOf, monitorText, type AgentProcess } from '../../support/agent-process.js';
import { instanceWorkItem, renewMs, tag, tickCommand, useAgentE2E } from './harness.js';

const LEASE_SECONDS = 6;

describe('cairn agent end to end: fencing', function () {
  this.timeout(60_000);
  const e2e = useAgentE2E();
  const ns = 'e2e-fence';

  before(async function () {
    this.timeout(40_000);
    await e2e.createCluster(ns);
  });

  const cases = [
    { how: 'connections to it are refused', node: 'node-c', staleWatch: false, proxy: () => e2e.proxy().then((p) => ({ https: p.https, lose: () => p.cut(), regain: () => p.restore() })) },
    // The partition heals, but the connections open during it stay dead (as when a NAT or firewall lost their state).
    { how: 'requests to it hang (partition)', node: 'node-d', staleWatch: true, proxy: () => e2e.partitionProxy().then((p) => ({ https: p.https, lose: () => p.hold(), regain: () => p.release({ abandonStalled: true }) })) },
  ];

  for (const c of cases) {
    describe(`when ${c.how}`, () => {
      const inst = `guarded-${c.node}`;
      const wi = `${inst}.${c.node}`;
      const nodeLease = `node-${c.node}`;
      let agent: AgentProcess;
      let link: Awaited<ReturnType<(typeof c)['proxy']>>;
      let pid: number;

      before(async function () {
        this.timeout(40_000);
        link = await c.proxy();
        agent = await e2e.startAgent({ cluster: ns, nodeName: c.node, dataDir: e2e.tmp('fence'), server: link.https, leaseDuration: `${LEASE_SECONDS}s`, extraArgs: ['--watch-idle-timeout', '20s'] });
        await e2e.client.create('WorkItem', instanceWorkItem(ns, c.node, inst, tickCommand(e2e.marker, inst), { fencing: { leaseName: `instance-${inst}` } }));
        const w = await e2e.waitWorkItem(ns, wi, 'Done', (x) => x.status?.phase === 'Done' && !!x.status.instance?.pid);
        pid = w.status!.instance!.pid!;
        e2e.trackGroup(pid);
      });

      it('the agent stops its instance before its node lease expires', async () => {
        expect((await e2e.lease(ns, `instance-${inst}`))?.spec?.holderIdentity, 'claimed').to.equal(c.node);
        const held = await e2e.lease(ns, nodeLease);
        expect(held?.spec?.holderIdentity).to.equal(c.node);
        await eventually('a fresh renewal', async () => renewMs(await e2e.lease(ns, nodeLease)) > renewMs(held), 5_000, 50);
        link.lose();
        const lostAt = Date.now();
        await sleep(100); // a renewal already on the wire may still land
        const last = await e2e.lease(ns, nodeLease);
        const expiresAt = renewMs(last) + LEASE_SECONDS * 1000;
        expect(alive(pid), 'still running right after the loss').to.equal(true);
        await eventually('instance stopped', () => copiesOf(tag(e2e.marker, inst)).length === 0, Math.max(1, expiresAt - Date.now()), 20).catch((err: Error) => {
          throw new Error(`${err.message}: not stopped ${Date.now() - lostAt} ms after the apiserver became unreachable, lease expired at +${expiresAt - lostAt} ms`);
        });
        expect(Date.now()).to.be.below(expiresAt);
        const after = await e2e.lease(ns, nodeLease);
        expect(renewMs(after), 'the agent did not renew it meanwhile').to.equal(renewMs(last));
        const metrics = (await monitorText(agent, '/metrics')).text;
        expect(metrics).to.match(/^cairn_agent_lease_renew_failures_total\{lease="node"\} [1-9]\d*$/m);
      });

      it('starts it again once the apiserver is reachable: a new term, the instance claimed anew', async () => {
        await sleep(1_500); // the outage outlasts the fencing: the agent tries to report Fenced meanwhile
        const claimBefore = await e2e.lease(ns, `instance-${inst}`);
        link.regain();
        const w = await e2e.waitWorkItem(ns, wi, 'running again', (x) => x.status?.phase === 'Done' && !!x.status.instance?.pid && x.status.instance.pid !== pid, 20_000);
        e2e.trackGroup(w.status!.instance!.pid);
        expect(alive(w.status!.instance!.pid)).to.equal(true);
        expect(copiesOf(tag(e2e.marker, inst))).to.have.length(1);
        const claim = await e2e.lease(ns, `instance-${inst}`);
        expect(claim?.spec?.holderIdentity).to.equal(c.node);
        expect(claim?.metadata?.resourceVersion, 'claimed again (one write) in the new term').to.not.equal(claimBefore?.metadata?.resourceVersion);
        const resumed = Date.now();
        await eventually('node lease renewed again', async () => renewMs(await e2e.lease(ns, nodeLease)) >= resumed, 10_000, 100);
      });

      // Where the partition left the watch connection silently dead, the informer's idle timeout
      // (--watch-idle-timeout, set short here; the apiserver sends a bookmark every 15 s) restarts it.
      it('sees WorkItem changes made after the outage: deleting the WorkItem stops the instance', async () => {
        const w = (await e2e.workItem(ns, wi))!;
        await e2e.client.delete('WorkItem', ns, wi);
        await eventually('WorkItem gone', async () => (await e2e.workItem(ns, wi)) === undefined, c.staleWatch ? 40_000 : 15_000, 100);
        expect(alive(w.status!.instance!.pid)).to.equal(false);
      });
    });
  }

  // The race of a failover: the controller deletes the lost node's claim and releases its WorkItem
  // (finalizer removed), but the node, back in a new term, claimed again before it saw the WorkItem go.
  it('gives up its claim when its WorkItem vanishes without it (released by the controller), so the next node can claim', async () => {
    const node = 'node-e';
    const inst = 'released-node-e';
    const wi = `${inst}.${node}`;
    await e2e.startAgent({ cluster: ns, nodeName: node, dataDir: e2e.tmp('fence'), leaseDuration: `${LEASE_SECONDS}s` });
    await e2e.client.create('WorkItem', instanceWorkItem(ns, node, inst, tickCommand(e2e.marker, inst), { fencing: { leaseName: `instance-${inst}` } }));
    const w = await e2e.waitWorkItem(ns, wi, 'Done', (x) => x.status?.phase === 'Done' && !!x.status.instance?.pid);
    e2e.trackGroup(w.status!.instance!.pid!);
    expect((await e2e.lease(ns, `instance-${inst}`))?.spec?.holderIdentity, 'claimed').to.equal(node);
    await e2e.client.patch('WorkItem', ns, wi, { metadata: { finalizers: [] } });
    await e2e.client.delete('WorkItem', ns, wi);
    await eventually('the instance stopped and its claim given up', async () => !alive(w.status!.instance!.pid!) && !(await e2e.lease(ns, `instance-${inst}`))?.spec?.holderIdentity, 15_000, 100);
  });
});

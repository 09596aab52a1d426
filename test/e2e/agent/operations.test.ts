/**
 * Supervised operations of a real agent: an operation that exceeds the
 * WorkItem's timeoutSeconds is killed (its worker process group is gone)
 * and reported as Failed with reason Timeout and a hint; SIGTERM to the
 * agent during an operation ends the operation's processes within
 * --shutdown-grace, while instances keep running.
 *
 * The slow operation: stopping an instance that ignores SIGTERM with a
 * long terminationGracePeriodSeconds — the stop waits out the grace period
 * before SIGKILL, far longer than the timeout.
 */
import { expect } from 'chai';
import { parseOperationId } from '../../../agent/operations/operation-id.js';
import { eventually } from '../../support/eventually.js';
import { alive, groupMembers, monitorJson, monitorText, type AgentProcess } from '../../support/agent-process.js';
import { instanceWorkItem, stubbornCommand, useAgentE2E } from './harness.js';

interface LiveOp {
  operationId: string;
  key: string;
  verb: string;
  action?: string;
  pid: number;
  startedAt: string;
  deadline: string;
}

describe('cairn agent end to end: operation timeouts and shutdown', function () {
  this.timeout(60_000);
  const e2e = useAgentE2E();
  const ns = 'e2e-ops';
  const node = 'node-e';
  const inst = 'stubborn';
  const wi = `${inst}.${node}`;
  let agent: AgentProcess;
  let pid: number;

  /** Waits until /status lists an operation of the WorkItem matching `ok`. */
  async function liveOperation(ok: (op: LiveOp) => boolean): Promise<LiveOp> {
    let found: LiveOp | undefined;
    await eventually('a live operation', async () => {
      const ops = (await monitorJson<{ operations: LiveOp[] }>(agent, '/status')).operations;
      found = ops.find((o) => o.key === `${ns}/${wi}` && ok(o));
      return !!found;
    }, 15_000, 20);
    return found!;
  }

  before(async function () {
    this.timeout(40_000);
    await e2e.createCluster(ns);
    agent = await e2e.startAgent({ cluster: ns, nodeName: node, dataDir: e2e.tmp('ops'), shutdownGrace: '2s' });
    await e2e.client.create('WorkItem', instanceWorkItem(ns, node, inst, stubbornCommand(e2e.marker, inst), { terminationGracePeriodSeconds: 60, fencing: { leaseName: `instance-${inst}` } }));
    const w = await e2e.waitWorkItem(ns, wi, 'Done', (x) => x.status?.phase === 'Done' && !!x.status.instance?.pid);
    pid = w.status!.instance!.pid!;
    e2e.trackGroup(pid);
  });

  it('an operation that exceeds spec.timeoutSeconds is killed: Failed, reason Timeout, with a hint', async () => {
    const w0 = (await e2e.workItem(ns, wi))!;
    await e2e.client.patch('WorkItem', ns, wi, { spec: { timeoutSeconds: 2, instance: { runState: 'Stopped' } } });
    const op = await liveOperation((o) => o.action === 'stop');
    expect(alive(op.pid), 'the worker runs').to.equal(true);
    const w = await e2e.waitWorkItem(ns, wi, 'Failed with Timeout', (x) => x.status?.phase === 'Failed' && x.status.lastError?.reason === 'Timeout' && x.status.observedGeneration === w0.metadata.generation! + 1, 15_000);
    const err = w.status!.lastError!;
    expect(err.message).to.match(/exceeded its 2 s timeout and was killed/);
    expect(err.hint).to.match(/timeoutSeconds/);
    expect(err.operationId).to.equal(op.operationId);
    expect(parseOperationId(err.operationId!)?.childPid).to.equal(op.pid);
    expect(w.status!.action).to.equal('stop');
    const took = Date.parse(w.status!.finishedAt!) - Date.parse(w.status!.startedAt!);
    expect(took, 'killed at the timeout, not after the 60 s grace period').to.be.within(2_000, 4_500);
    expect(w.status!.conditions?.find((c) => c.type === 'Ready')).to.include({ status: 'False', reason: 'Timeout' });
    await eventually('worker and its group gone', () => !alive(op.pid) && groupMembers(op.pid).length === 0, 3_000, 20);
    expect(alive(pid), 'the stubborn instance itself is left as it was').to.equal(true);
    expect((await monitorText(agent, '/metrics')).text).to.match(/^cairn_agent_operation_failures_total\{reason="Timeout"\} [1-9]\d*$/m);
  });

  it('SIGTERM to the agent during an operation ends its processes within --shutdown-grace; instances keep running', async () => {
    // A generous timeout: the next stop attempt now waits out the instance's 60 s grace period.
    await e2e.client.patch('WorkItem', ns, wi, { spec: { timeoutSeconds: 300 } });
    const op = await liveOperation((o) => o.action === 'stop' && Date.parse(o.deadline) - Date.parse(o.startedAt) === 300_000);
    await new Promise((r) => setTimeout(r, 300)); // well inside the operation
    expect(alive(op.pid), 'the operation is still running').to.equal(true);
    const t0 = Date.now();
    process.kill(agent.pid, 'SIGTERM');
    await eventually('operation processes gone', () => !alive(op.pid) && groupMembers(op.pid).length === 0, 2_500, 10);
    const goneAfter = Date.now() - t0;
    expect(goneAfter, 'within the 2 s shutdown grace').to.be.below(2_500);
    const exit = await Promise.race([agent.exited, new Promise<'hung'>((r) => setTimeout(() => r('hung'), 5_000))]);
    expect(exit, 'the agent exits').to.deep.equal({ code: 0, signal: null });
    expect(agent.logs()).to.include('shutting down; instances keep running');
    expect(alive(pid), 'the instance outlives the agent').to.equal(true);
  });
});

/**
 * Instances belong to the node, not to the agent process: `kill -9` of the
 * agent leaves them running, a restarted agent re-adopts the very same
 * processes (by pid + start time + boot id, never by pid alone, so a stale
 * state file naming a recycled pid is not adopted), and a restart while the
 * apiserver is unreachable works from <data-dir>/workitems/ and the
 * persisted fencing term: healthy instances keep running within the term's
 * safe window, a crash is still restarted per policy, status is re-synced
 * once the apiserver is back; an outage that outlasts the window stops every
 * instance before the node lease expires (docs/fencing.md).
 */
import { expect } from 'chai';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { eventually, sleep } from '../../support/eventually.js';
import { alive, cmdline, copiesOf, killGroup, monitorJson, processesWith, type AgentProcess } from '../../support/agent-process.js';
import { tag, instanceWorkItem, readyCondition, renewMs, tickCommand, useAgentE2E } from './harness.js';

describe('cairn agent end to end: restarts and re-adoption', function () {
  this.timeout(60_000);
  const e2e = useAgentE2E();
  const ns = 'e2e-restart';
  const node = 'node-b';
  let dataDir: string;
  let agent: AgentProcess;
  let proxy: Awaited<ReturnType<typeof e2e.proxy>>;
  const pids: Record<string, number> = {};
  // A 12 s node lease: an 8 s safe window, room for a restart while the apiserver is away.
  const LEASE_SECONDS = 12;
  const start = () => e2e.startAgent({ cluster: ns, nodeName: node, dataDir, server: proxy.https, leaseDuration: `${LEASE_SECONDS}s` });
  const wi = (inst: string) => `${inst}.${node}`;
  const copies = (inst: string) => copiesOf(tag(e2e.marker, inst));
  const stateFile = (inst: string) => path.join(dataDir, 'instances', ns, inst, 'state.json');

  /** Creates the instance and waits until it runs; remembers its pid. */
  async function run(inst: string): Promise<number> {
    await e2e.client.create('WorkItem', instanceWorkItem(ns, node, inst, tickCommand(e2e.marker, inst), { fencing: { leaseName: `instance-${inst}` } }));
    const w = await e2e.waitWorkItem(ns, wi(inst), 'Done', (x) => x.status?.phase === 'Done' && !!x.status.instance?.pid);
    pids[inst] = w.status!.instance!.pid!;
    e2e.trackGroup(pids[inst]);
    return pids[inst]!;
  }

  before(async function () {
    this.timeout(40_000);
    await e2e.createCluster(ns);
    dataDir = e2e.tmp('restart');
    proxy = await e2e.proxy();
    agent = await start();
  });

  describe('kill -9 of the agent', () => {
    let recycled: number;
    after(() => killGroup(recycled));

    it('leaves its instances running', async () => {
      await Promise.all([run('keeper'), run('stale')]);
      await agent.kill9();
      await sleep(1_000);
      expect(alive(pids.keeper), 'keeper still runs').to.equal(true);
      expect(alive(pids.stale), 'stale still runs').to.equal(true);
      expect(copies('keeper')).to.have.length(1);
    });

    it('a restarted agent re-adopts the same pid without starting a second copy, and ignores a state file naming a recycled pid', async () => {
      // "stale": its process died while the agent was away and its pid now belongs to something else.
      killGroup(pids.stale);
      await eventually('stale instance gone', () => !alive(pids.stale), 5_000);
      const other = spawn('sleep', ['60'], { detached: true, stdio: 'ignore' });
      other.unref();
      recycled = other.pid!;
      const state = JSON.parse(fs.readFileSync(stateFile('stale'), 'utf8'));
      fs.writeFileSync(stateFile('stale'), JSON.stringify({ ...state, pid: recycled }));

      agent = await start();
      const fresh = await e2e.waitWorkItem(ns, wi('stale'), 'stale restarted under a new pid', (x) => x.status?.phase === 'Done' && !!x.status.instance?.pid && x.status.instance.pid !== recycled && x.status.instance.pid !== pids.stale);
      e2e.trackGroup(fresh.status!.instance!.pid);
      expect(alive(recycled), 'the unrelated process with the recycled pid is untouched').to.equal(true);
      expect(copies('stale')).to.have.length(1);

      const status = await monitorJson(agent, '/status');
      const keeper = status.instances.find((i: { name: string }) => i.name === 'keeper');
      expect(keeper, JSON.stringify(status.instances)).to.include({ pid: pids.keeper, state: 'Running' });
      const w = (await e2e.workItem(ns, wi('keeper')))!;
      expect(w.status!.instance!.pid).to.equal(pids.keeper);
      expect(readyCondition(w)?.status).to.equal('True');
      expect(alive(pids.keeper)).to.equal(true);
      expect(copies('keeper'), 'no second copy').to.have.length(1);
      // Only "stale" needed an operation: keeper was adopted, not started.
      const started = agent.logs().split('\n').filter((l) => l.includes('"operation started"'));
      expect(started.some((l) => l.includes(wi('keeper'))), started.join('\n')).to.equal(false);
    });
  });

  describe('restart while the apiserver is unreachable', () => {
    let cutAt: number;

    /** SIGKILLs the command of an instance (not its shim, which records the exit, nor the shim's watchdog, a fork with the shim's command line). */
    function crash(inst: string): void {
      const shim = cmdline(pids[inst]!);
      const cmd = processesWith(tag(e2e.marker, inst)).find((s) => cmdline(s.pid) !== shim);
      expect(cmd, `command process of ${inst}`).to.not.equal(undefined);
      process.kill(cmd!.pid, 'SIGKILL');
    }

    it('keeps healthy instances running (same pid) and restarts crashed ones per policy, within the persisted term', async function () {
      this.timeout(40_000);
      await run('crashy');
      pids.keeper = (await e2e.workItem(ns, wi('keeper')))!.status!.instance!.pid!;
      pids.stale = (await e2e.workItem(ns, wi('stale')))!.status!.instance!.pid!;
      await agent.kill9();
      // A command dies while no agent runs; the apiserver becomes unreachable.
      crash('crashy');
      proxy.cut();
      cutAt = Date.now();
      agent = await start();
      expect((await monitorJson(agent, '/status')).instances.length, '/status answers from the stored WorkItems').to.equal(3);

      await eventually('crashy restarted locally', () => copies('crashy').some((sid) => sid !== pids.crashy), 10_000, 50);
      const [newCrashy] = copies('crashy');
      e2e.trackGroup(newCrashy);
      pids.crashyNew = newCrashy!;
      expect(copies('crashy')).to.have.length(1);
      for (const inst of ['keeper', 'stale']) {
        expect(alive(pids[inst]), `${inst} still runs while the apiserver is away`).to.equal(true);
        expect(copies(inst)).to.have.length(1);
      }
      const status = await monitorJson(agent, '/status');
      expect(status.instances.find((i: { name: string }) => i.name === 'keeper')).to.include({ pid: pids.keeper });
    });

    it('re-syncs status once the apiserver is back, without restarting healthy instances', async function () {
      this.timeout(30_000);
      proxy.restore();
      const crashy = await e2e.waitWorkItem(ns, wi('crashy'), 'crashy status re-synced', (x) => x.status?.instance?.pid === pids.crashyNew && x.status.phase === 'Done', 20_000);
      expect(crashy.status!.instance!.restarts).to.equal(1);
      expect(crashy.status!.instance!.lastExitCode).to.equal(137);
      for (const inst of ['keeper', 'stale']) {
        const w = (await e2e.workItem(ns, wi(inst)))!;
        expect(w.status!.instance!.pid, `${inst} kept its pid`).to.equal(pids[inst]);
        expect(alive(pids[inst])).to.equal(true);
        expect(copies(inst)).to.have.length(1);
      }
      // Registration retries with backoff (up to 10 s between attempts) while the apiserver is away.
      await eventually('Node re-registered by the restarted agent', async () => Date.parse((await e2e.client.get('Node', ns, node))?.status?.agentStartTime ?? '') >= cutAt - 1_000, 15_000, 200);
      expect((await e2e.lease(ns, 'instance-keeper'))?.spec?.holderIdentity).to.equal(node);
    });

    it('an outage past the safe window stops every instance before the node lease expires; they run again, claimed anew, once it is over', async function () {
      this.timeout(50_000);
      const insts = ['keeper', 'stale', 'crashy'];
      pids.crashy = pids.crashyNew!;
      await agent.kill9(); // the agent is dead too: the instances' watchdogs must stop them by themselves
      proxy.cut();
      const lease = await e2e.lease(ns, `node-${node}`);
      const expiresAt = renewMs(lease) + LEASE_SECONDS * 1000;
      await eventually('every instance stopped', () => insts.every((i) => copies(i).length === 0), Math.max(1, expiresAt - Date.now()), 50).catch((err: Error) => {
        throw new Error(`${err.message}: ${insts.filter((i) => copies(i).length > 0).join(', ')} still running ${Date.now() - expiresAt} ms after the node lease expired`);
      });
      expect(renewMs(await e2e.lease(ns, `node-${node}`)), 'nobody renewed it meanwhile').to.equal(renewMs(lease));
      proxy.restore();
      agent = await start();
      for (const inst of insts) {
        const w = await e2e.waitWorkItem(ns, wi(inst), `${inst} running again`, (x) => x.status?.phase === 'Done' && !!x.status.instance?.pid && x.status.instance.pid !== pids[inst], 20_000);
        e2e.trackGroup(w.status!.instance!.pid);
        expect(copies(inst)).to.have.length(1);
        expect((await e2e.lease(ns, `instance-${inst}`))?.spec?.holderIdentity).to.equal(node);
      }
    });
  });
});

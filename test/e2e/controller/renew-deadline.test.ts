/**
 * A leading `cairn controller` that cannot renew its lease stops
 * reconciling within its renew deadline and exits non-zero, whether the
 * apiserver refuses it (a TCP proxy between them is cut: connections are
 * reset) or hangs (the apiserver process is SIGSTOPped: connections stay
 * open and nothing answers, as in a network partition that drops packets,
 * with requests of the controller in flight). A follower that still
 * reaches the apiserver takes over only after the cut-off leader stopped.
 * And SIGTERM of a controller whose apiserver hangs still ends it promptly.
 */
import { expect } from 'chai';
import type { Resources } from '../../../api/types.js';
import { eventually } from '../../support/eventually.js';
import { startTcpProxy, type TcpProxy } from '../../support/tcp-proxy.js';
import { startTestCluster, waitConverged, type TestCluster } from './cluster-fixture.js';
import { TIMINGS, instanceObject, killAllControllers, readLeaderLease, startController, type ControllerProcess } from './harness.js';

const NS = 'partition';
const NODES: Record<string, Resources> = {
  'n-1': { cpus: 40, memory: '8Gi', storage: '10Gi' },
  'n-2': { cpus: 40, memory: '8Gi', storage: '10Gi' },
};

/**
 * From losing the apiserver to "stopped leading": the renew deadline, plus
 * one retry period (the last renewal may have happened up to one retry
 * period before the cut) and 500 ms of timer and scheduling slack.
 */
const STOP_BOUND_MS = TIMINGS.renewDeadlineMs + TIMINGS.retryPeriodMs + 500;
/** From losing the apiserver to the process exit: the stop bound plus 1 s to shut the loops down. */
const EXIT_BOUND_MS = STOP_BOUND_MS + 1000;

describe('a controller that cannot renew its lease (e2e)', function () {
  this.timeout(60_000);
  let tc: TestCluster;
  let proxy: TcpProxy | undefined;
  let ctl: ControllerProcess | undefined;
  let follower: ControllerProcess | undefined;
  let frozen = false;

  before(async function () {
    this.timeout(40_000);
    tc = await startTestCluster(NS, NODES);
  });

  after(async () => {
    if (frozen) tc.server.child.kill('SIGCONT');
    await killAllControllers();
    await proxy?.close();
    await tc?.stop();
  });

  afterEach(function () {
    if (this.currentTest?.state !== 'failed') return;
    for (const p of new Set([ctl, follower])) if (p) process.stderr.write(`--- ${p.identity} ---\n${p.logs().split('\n').slice(-60).join('\n')}\n`);
  });

  /** Asserts that ctl stopped leading and exited 1 within the bounds after `lostAt`. */
  async function expectStopsAndExits(p: ControllerProcess, lostAt: number, label: string, checkEarliest: boolean): Promise<void> {
    const exit = await Promise.race([p.exited, new Promise<undefined>((r) => setTimeout(r, EXIT_BOUND_MS + 5000))]);
    expect(exit, `${p.identity} exited within ${EXIT_BOUND_MS + 5000} ms`).to.not.equal(undefined);
    const stopped = p.lines().find((l) => l.message.startsWith('stopped leading'));
    expect(stopped, 'logged "stopped leading"').to.not.equal(undefined);
    const stopMs = Date.parse(String(stopped!.timestamp)) - lostAt;
    const exitMs = exit!.at - lostAt;
    process.stdout.write(`      ${label}: stopped leading after ${stopMs} ms, exited ${exit!.code} after ${exitMs} ms (bounds ${STOP_BOUND_MS} / ${EXIT_BOUND_MS} ms)\n`);
    expect(exit!.code, 'exit code').to.equal(1);
    expect(stopMs, 'stopped leading').to.be.below(STOP_BOUND_MS);
    // The deadline runs from when the last successful renewal was sent, which precedes the cut by a retry
    // period plus the event loop's delays and the renewal in flight at the cut: up to a few hundred ms
    // under CI load (a stop 69 ms before a 100-ms slack was seen once). Under the write burst of the
    // SIGSTOP case it may be older still.
    if (checkEarliest) expect(stopMs, 'not before the renew deadline').to.be.at.least(TIMINGS.renewDeadlineMs - TIMINGS.retryPeriodMs - 300);
    expect(exitMs, 'exited').to.be.below(EXIT_BOUND_MS);
    expect(p.lines().some((l) => l.message.startsWith('lost leadership; exiting')), 'logged why it exits').to.equal(true);
  }

  it('apiserver unreachable (proxy cut): stops within the renew deadline and exits 1, before a follower takes over', async () => {
    const port = new URL(tc.server.url).port;
    proxy = await startTcpProxy(`http://127.0.0.1:${port}`);
    const server = proxy.url.replace('http:', 'https:');
    ctl = startController({ kubeconfig: tc.server.kubeconfig, identity: 'ctl-cut', server });
    await ctl.waitFor('became leader');
    // A follower that still reaches the apiserver.
    follower = startController({ kubeconfig: tc.server.kubeconfig, identity: 'ctl-follow' });
    await follower.waitFor('another controller leads');
    // The leader reconciles through the proxy.
    await Promise.all(Array.from({ length: 4 }, (_, i) => tc.client.create('Instance', instanceObject(NS, `a-${i}`))));
    await waitConverged(tc.client, NS, '4 Instances Running', 20_000);
    const cutAt = Date.now();
    proxy.cut();
    await expectStopsAndExits(ctl, cutAt, 'proxy cut', true);
    // renewDeadline < leaseDuration: the cut-off leader has stopped before the follower may take over.
    const became = await follower.waitFor('became leader', 10_000);
    const stopped = ctl.lines().find((l) => l.message.startsWith('stopped leading'))!;
    const gapMs = Date.parse(String(became.timestamp)) - Date.parse(String(stopped.timestamp));
    process.stdout.write(`      the follower led ${Date.parse(String(became.timestamp)) - cutAt} ms after the cut, ${gapMs} ms after the old leader stopped\n`);
    expect(gapMs, 'no overlap of the two leaderships').to.be.above(0);
    expect((await readLeaderLease(tc.kc))?.spec?.holderIdentity).to.equal('ctl-follow');
    proxy.restore();
  });

  it('apiserver hanging with requests in flight (SIGSTOP): stops within the renew deadline and exits 1', async () => {
    ctl = follower!;
    await waitConverged(tc.client, NS, 'Instances Running under the new leader', 20_000);
    // A burst of work, and freeze the apiserver as soon as the controller is writing WorkItems for it.
    const before = tc.monitor.list().length;
    const creates = Array.from({ length: 40 }, (_, i) => tc.client.create('Instance', instanceObject(NS, `b-${i}`)).catch(() => undefined));
    await eventually('the controller to start writing WorkItems', () => tc.monitor.list().length > before + 2, 10_000, 5);
    tc.server.child.kill('SIGSTOP');
    frozen = true;
    const frozenAt = Date.now();
    try {
      await expectStopsAndExits(ctl, frozenAt, 'apiserver SIGSTOPped', false);
    } finally {
      tc.server.child.kill('SIGCONT');
      frozen = false;
    }
    await Promise.all(creates);
  });

  /**
   * A leader that brought every Instance to Running. On a loaded machine the apiserver, just thawed
   * with a backlog, may answer a new leader's first renewals later than the 2-s renew deadline: that
   * leader then exits, as it should (seen once in CI), and a second one is started.
   */
  async function convergedLeader(): Promise<ControllerProcess> {
    for (let attempt = 1; ; attempt++) {
      // The identity of the controller that just exited, so it need not wait out that one's lease.
      const p = startController({ kubeconfig: tc.server.kubeconfig, identity: 'ctl-follow' });
      try {
        await p.waitFor('became leader', 20_000);
        await waitConverged(tc.client, NS, 'Instances Running under the restarted controller', 20_000);
        return p;
      } catch (err) {
        if (attempt === 2 || p.child.exitCode === null) throw err;
        process.stdout.write(`      the restarted leader exited (${p.child.exitCode}) before convergence; starting another\n`);
      }
    }
  }

  it('SIGTERM while the apiserver hangs: the controller still exits promptly', async () => {
    ctl = await convergedLeader();
    // Whatever the frozen leader had in flight when it died did not leave a duplicate or an overcommitted node behind.
    expect(tc.monitor.violations).to.deep.equal([]);
    tc.server.child.kill('SIGSTOP');
    frozen = true;
    const termAt = Date.now();
    try {
      ctl.child.kill('SIGTERM');
      const exit = await Promise.race([ctl.exited, new Promise<undefined>((r) => setTimeout(r, EXIT_BOUND_MS + 5000))]);
      expect(exit, `exited within ${EXIT_BOUND_MS + 5000} ms of SIGTERM`).to.not.equal(undefined);
      process.stdout.write(`      SIGTERM with the apiserver SIGSTOPped: exited ${exit!.code ?? exit!.signal} after ${exit!.at - termAt} ms\n`);
      expect(exit!.at - termAt, 'exit after SIGTERM').to.be.below(EXIT_BOUND_MS);
    } finally {
      tc.server.child.kill('SIGCONT');
      frozen = false;
    }
  });
});

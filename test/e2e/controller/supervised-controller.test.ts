/**
 * `cairn server` runs the controller as a supervised child process: it
 * leads, it is restarted when it dies, and `kill -9` of the server leaves
 * no orphaned controller behind (the child watches its IPC channel to the
 * server and shuts down when it disconnects) — also when the server dies
 * while the child is still starting.
 */
import { expect } from 'chai';
import { eventually } from '../../support/eventually.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';
import { serverControllerIdentity } from '../../../cli/run/server.js';
import { childrenOf, clientFor, pidAlive, readLeaderLease } from './harness.js';

/** How long an orphaned controller may take to notice and exit: IPC disconnect, lease release attempt (refused), exit. */
const ORPHAN_EXIT_BOUND_MS = 3000;
/** A child that is still loading its modules only looks at its IPC channel once it runs: 4 s more for that on a loaded 2-core machine. */
const STARTING_ORPHAN_EXIT_BOUND_MS = ORPHAN_EXIT_BOUND_MS + 4000;

function controllerChildren(serverPid: number): number[] {
  return childrenOf(serverPid)
    .filter((c) => c.cmdline.includes('controller'))
    .map((c) => c.pid);
}

describe('cairn server with its supervised controller (e2e)', function () {
  this.timeout(60_000);
  /** Every child of a server seen (controllers, the embedded etcd): SIGKILLed by pid in after() if still alive. */
  const seen = new Set<number>();
  const servers: ServerProcess[] = [];

  const startServer = async () => {
    // info, so the controller child's "controller started" line shows up in the server's stderr.
    const server = await startServerProcess({ controller: true, extraArgs: ['--log-level', 'info'] });
    servers.push(server);
    return server;
  };
  const remember = (serverPid: number) => {
    for (const c of childrenOf(serverPid)) seen.add(c.pid);
  };
  const startedLine = (server: ServerProcess, pid: number) => server.logs().split('\n').some((l) => l.includes('"controller started"') && l.includes(`"pid":${pid},`));

  /** Kills the server with SIGKILL and asserts that controller pid exits within the bound. */
  async function expectNoOrphan(server: ServerProcess, ctl: number, label: string, boundMs: number): Promise<void> {
    remember(server.child.pid!);
    const killedAt = Date.now();
    await server.kill9();
    await eventually(`controller pid ${ctl} to exit after the server died`, () => !pidAlive(ctl), boundMs + 5000, 20);
    const took = Date.now() - killedAt;
    process.stdout.write(`      ${label}: the controller child exited ${took} ms after kill -9 of the server (bound ${boundMs} ms)\n`);
    expect(took).to.be.below(boundMs);
  }

  after(async () => {
    for (const s of servers) {
      remember(s.child.pid!);
      await s.cleanup();
    }
    for (const pid of seen) if (pidAlive(pid)) process.kill(pid, 'SIGKILL');
  });

  describe('a running server', () => {
    let server: ServerProcess;
    let serverPid: number;
    before(async function () {
      this.timeout(40_000);
      server = await startServer();
      serverPid = server.child.pid!;
    });

    it('runs one controller child, which takes the leader lease under the identity of the server\'s data dir', async () => {
      await eventually('a controller child of the server', () => controllerChildren(serverPid).length === 1, 15_000, 50);
      remember(serverPid);
      const [pid] = controllerChildren(serverPid);
      const { kc } = clientFor(server.kubeconfig);
      try {
        await eventually('the child to start', () => startedLine(server, pid!), 15_000, 50);
        const identity = serverControllerIdentity(server.dataDir);
        await eventually('the child to hold the leader lease', async () => (await readLeaderLease(kc).catch(() => undefined))?.spec?.holderIdentity === identity, 20_000, 100);
        expect(controllerChildren(serverPid)).to.deep.equal([pid]);
      } finally {
        kc.destroyAgent();
      }
    });

    it('restarts the controller child after kill -9 of it', async () => {
      const [old] = controllerChildren(serverPid);
      process.kill(old!, 'SIGKILL');
      await eventually('a new controller child', () => controllerChildren(serverPid).some((p) => p !== old), 10_000, 50);
      remember(serverPid);
      const [fresh] = controllerChildren(serverPid);
      await eventually('the new child to start', () => startedLine(server, fresh!), 15_000, 50);
      expect(controllerChildren(serverPid)).to.deep.equal([fresh]);
    });

    it(`kill -9 of the server: the controller child exits within ${ORPHAN_EXIT_BOUND_MS} ms (no orphan)`, async () => {
      const [ctl] = controllerChildren(serverPid);
      expect(ctl).to.be.a('number');
      await expectNoOrphan(server, ctl!, 'started controller', ORPHAN_EXIT_BOUND_MS);
    });
  });

  it(`kill -9 of the server while its controller child is still starting: it exits within ${STARTING_ORPHAN_EXIT_BOUND_MS} ms`, async function () {
    this.timeout(50_000);
    const server = await startServer();
    const serverPid = server.child.pid!;
    await eventually('a controller child of the server', () => controllerChildren(serverPid).length === 1, 15_000, 5);
    const [ctl] = controllerChildren(serverPid);
    expect(startedLine(server, ctl!), 'the child has not started yet').to.equal(false);
    await expectNoOrphan(server, ctl!, 'starting controller', STARTING_ORPHAN_EXIT_BOUND_MS);
  });
});

/**
 * An API server out of file descriptors (EMFILE) goes on: it runs under
 * `prlimit --nofile`, is flooded with idle connections past that limit,
 * is asked for a list meanwhile (which may fail), and must still be alive
 * and serving once the connections close. (libuv sheds the connections it
 * cannot accept itself while it holds its reserve descriptor; only when it
 * cannot get that back does Node report an 'error' on the server, which the
 * API server logs: that case is not made here.)
 */
import fs from 'node:fs';
import net from 'node:net';
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { startThrowawayEtcd, type ThrowawayEtcd } from '../../hack/etcd.js';
import { eventually, sleep } from '../support/eventually.js';
import { cairnPath } from '../support/fixtures.js';
import { rawRequest } from '../support/http.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const NOFILE = 256;

describe('API server out of file descriptors (EMFILE)', function () {
  this.timeout(60_000);
  let etcd: ThrowawayEtcd;
  let server: ServerProcess | undefined;
  const sockets: net.Socket[] = [];

  before(async () => {
    etcd = await startThrowawayEtcd();
  });
  after(async () => {
    for (const s of sockets) s.destroy();
    await server?.cleanup();
    await etcd?.cleanup();
  });

  it('stays up while flooded past its descriptor limit, and serves once descriptors are free again', async () => {
    server = await startServerProcess({ etcdEndpoints: etcd.endpoint, launcher: ['prlimit', `--nofile=${NOFILE}:${NOFILE}`, '--'] });
    const pid = server.child.pid!; // prlimit execs the server: the same process
    const open = fs.readdirSync(`/proc/${pid}/fd`).length;
    expect(open, 'descriptors the server holds before the flood').to.be.below(NOFILE - 20);
    const port = Number(new URL(server.url).port);
    for (let i = 0; i < NOFILE - open + 40; i++) {
      const s = net.connect(port, '127.0.0.1');
      s.on('error', () => undefined); // refused or reset past the limit: expected
      sockets.push(s);
    }
    await eventually('the server holds every descriptor it may', () => fs.readdirSync(`/proc/${pid}/fd`).length >= NOFILE - 1, 15_000, 50);
    const kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfig);
    await rawRequest(kc, { path: cairnPath('clusters') }).catch(() => undefined); // answered or not: it must not end the server
    await sleep(300);
    expect(server.child.exitCode, `the server exited:\n${server.logs().slice(-2000)}`).to.equal(null);

    for (const s of sockets.splice(0)) s.destroy();
    await eventually('the server serves again', async () => (await rawRequest(kc, { path: cairnPath('clusters') }).catch(() => ({ status: 0 }))).status === 200, 15_000, 100);
    expect(server.child.exitCode).to.equal(null);
  });
});

/**
 * The embedded etcd of `cairn server` lives no longer than the server: a
 * kill -9 of the server alone (no chance to stop its child) still ends
 * etcd within seconds, instead of leaving it orphaned until the next start.
 * Where setpriv (which ties the two) is missing, the server still starts.
 */
import { expect } from 'chai';
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { alive, cmdline } from '../support/agent-process.js';
import { eventually } from '../support/eventually.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

describe('the embedded etcd of cairn server', function () {
  this.timeout(30_000);
  let server: ServerProcess | undefined;
  let etcdPid: number | undefined;

  afterEach(async () => {
    if (etcdPid && alive(etcdPid)) process.kill(etcdPid, 'SIGKILL'); // the orphan of a failed run
    await server?.cleanup();
  });

  it('exits within seconds when the server alone is killed with SIGKILL', async () => {
    server = await startServerProcess();
    etcdPid = Number(fs.readFileSync(path.join(server.dataDir, 'etcd.pid'), 'utf8').trim());
    expect(cmdline(etcdPid), 'the pid file names the running etcd').to.include(path.join(server.dataDir, 'etcd'));

    await server.kill9();
    await eventually(`etcd (pid ${etcdPid}) to exit after its server was killed`, () => !alive(etcdPid), 5000, 50);
  });

  it('still starts, bare, where setpriv is missing', async () => {
    const bin = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-path-'));
    try {
      fs.symlinkSync(execSync('command -v etcd', { shell: '/bin/sh' }).toString().trim(), path.join(bin, 'etcd'));
      server = await startServerProcess({ env: { ...process.env, PATH: bin } });
      etcdPid = Number(fs.readFileSync(path.join(server.dataDir, 'etcd.pid'), 'utf8').trim());
      expect(alive(etcdPid)).to.equal(true);
    } finally {
      fs.rmSync(bin, { recursive: true, force: true });
    }
  });
});

/**
 * `cairn server` supervises its embedded etcd: when etcd dies the API
 * answers 503 (504 for a write that reached it; never 500) and, once the supervisor has restarted etcd on the
 * same address, serves again, with watches opened before the crash carrying on.
 */
import { expect } from 'chai';
import * as k8s from '@kubernetes/client-node';
import { execSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { eventually } from '../support/eventually.js';
import { cairnPath, cluster, instance } from '../support/fixtures.js';
import { rawRequest } from '../support/http.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';
import { openWatch } from '../support/watch-stream.js';

/** What says why etcd did not come back: the supervisor's lines and the end of etcd's own log. */
function recoveryLogs(server: ServerProcess): { supervisor: string[]; etcd: string } {
  const supervisor = server.logs().split('\n').filter((l) => /etcd/.test(l)).slice(-8);
  const etcdLog = path.join(server.dataDir, 'etcd.log');
  return { supervisor, etcd: fs.existsSync(etcdLog) ? fs.readFileSync(etcdLog, 'utf8').slice(-1500) : '(no etcd.log)' };
}

describe('cairn server with its embedded etcd', function () {
  this.timeout(90_000);
  let server: ServerProcess;
  let kc: k8s.KubeConfig;

  before(async () => {
    server = await startServerProcess();
    kc = new k8s.KubeConfig();
    kc.loadFromFile(server.kubeconfig);
  });
  after(async () => server?.cleanup());

  it('answers 503 while etcd is down and recovers when the supervisor restarts it', async () => {
    expect((await rawRequest(kc, { method: 'POST', path: cairnPath('clusters'), body: JSON.stringify(cluster('crash')) })).status).to.equal(201);
    const path = cairnPath('instances', 'crash');
    const list = await rawRequest(kc, { path });
    const watch = await openWatch(kc, `${path}?watch=true&resourceVersion=${list.json.metadata.resourceVersion}`);

    const etcdPid = execSync(`pgrep -P ${server.child.pid} -x etcd`).toString().trim();
    process.kill(Number(etcdPid), 'SIGKILL');
    const during = await rawRequest(kc, { method: 'POST', path, body: JSON.stringify(instance('lost', 'crash')) });
    // 201 only if etcd was already back; 504 when the write went out to the dying etcd (it may have been applied).
    expect(during.status, during.text).to.be.oneOf([503, 504, 201]);
    const readyz = await rawRequest(kc, { path: '/readyz', authorization: null });
    expect(readyz.status, 'readyz while etcd is down (or just back)').to.be.oneOf([503, 200]);
    if (during.status !== 201) expect(during.json).to.include({ kind: 'Status', reason: during.status === 503 ? 'ServiceUnavailable' : 'Timeout' });

    let last = '';
    // A 504 leaves the write open (it reached etcd and may have been applied): once one was, the next attempt
    // finds the object there (409), which says the write went through as well as a 201 would.
    let ambiguous = false;
    await eventually('writes to succeed again', async () => {
      const r = await rawRequest(kc, { method: 'POST', path, body: JSON.stringify(instance('after', 'crash')) });
      last = `${r.status} ${r.text.slice(0, 300)}`;
      ambiguous ||= r.status === 504;
      return r.status === 201 || (ambiguous && r.status === 409);
    }, 30_000, 250, () => ({ last, ...recoveryLogs(server) }));
    await watch.until((evs) => evs.some((e) => e.type === 'ADDED' && e.object.metadata.name === 'after'));
    expect((await rawRequest(kc, { path: '/readyz', authorization: null })).status).to.equal(200);
    watch.close();
    expect(server.child.exitCode, 'the server kept running').to.equal(null);
    expect(server.logs()).to.not.match(/"message":"internal error"/);
  });
});

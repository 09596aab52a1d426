/**
 * Issue 18, item 2: the controller of a `cairn server` that crashed (kill -9)
 * and was started again on its data dir takes its leader lease back at once,
 * since the lease names its own identity, instead of waiting the old lease
 * out (15 s by default).
 */
import { expect } from 'chai';
import { loadKubeConfig } from '../../../api/client/kubeconfig.js';
import { cairnPath, cluster } from '../../support/fixtures.js';
import { eventually } from '../../support/eventually.js';
import { rawRequest } from '../../support/http.js';
import { startServerProcess, type ServerProcess } from '../../support/server-process.js';

describe('cairn server restarted after a crash: its controller leads again at once (e2e)', function () {
  this.timeout(120_000);
  let first: ServerProcess | undefined;
  let second: ServerProcess | undefined;

  after(async () => {
    await second?.cleanup();
    await first?.cleanup();
  });

  async function controllerActsOn(s: ServerProcess, name: string): Promise<number> {
    const kc = loadKubeConfig({ kubeconfig: s.kubeconfig });
    const t0 = Date.now();
    const body = { apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name }, spec: { cpus: 1, memory: '16Mi', process: { command: ['/bin/true'] } } };
    expect((await rawRequest(kc, { method: 'POST', path: cairnPath('instances', 'lead'), body: JSON.stringify(body) })).status).to.equal(201);
    // With no node, the controller reports the instance Pending (Unschedulable): proof that it leads.
    await eventually(`the controller reports ${name}`, async () => !!(await rawRequest(kc, { path: cairnPath('instances', 'lead', name) })).json.status?.phase, 60_000, 100);
    return Date.now() - t0;
  }

  it('reconciles within a few seconds of the restart (the lease is not waited out)', async () => {
    first = await startServerProcess({ controller: true });
    await rawRequest(loadKubeConfig({ kubeconfig: first.kubeconfig }), { method: 'POST', path: cairnPath('clusters'), body: JSON.stringify(cluster('lead')) });
    await controllerActsOn(first, 'before');
    await first.kill9();
    second = await startServerProcess({ controller: true, dataDir: first.dataDir });
    const ms = await controllerActsOn(second, 'after');
    expect(ms, 'ms from the create to the controller acting, after the restart').to.be.below(6000);
  });
});

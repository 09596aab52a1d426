/**
 * Issue 15, acceptance 1: the real Helm 3 binary, unchanged, against
 * `cairn server` and three agents. The example chart charts/cairn-app (a
 * replicated Volume and process Instances) is installed, upgraded with a
 * changed value, rolled back, listed in history and uninstalled, with
 * Helm's default Secrets driver; then with HELM_DRIVER=configmap and
 * --create-namespace. The agents' real processes show each step.
 */
import { expect } from 'chai';
import path from 'node:path';
import { copiesOf } from '../../support/agent-process.js';
import { startTestCluster, type TestCluster } from '../../support/cairn-cli.js';
import { eventually } from '../../support/eventually.js';
import { Helm } from '../../support/helm.js';
import { CHARTS_DIR } from '../../support/paths.js';

const CHART = path.join(CHARTS_DIR, 'cairn-app');
const HELLO = 'hello-from-helm';
const BYE = 'bye-from-helm';

describe('e2e: Helm releases of Cairn objects (real helm 3.17, three agents)', function () {
  this.timeout(240_000);
  let c: TestCluster;
  let helm: Helm;

  const phases = async (ns: string, release: string) =>
    (await c.kubectl.ok(['get', 'instances', '-n', ns, '-l', `app.kubernetes.io/instance=${release}`, '-o', 'jsonpath={range .items[*]}{.metadata.name}={.status.phase} {end}'])).trim();
  // Running copies (process sessions) of the chart's Instances that print `greeting`: greetings unique to this test.
  const greeters = (greeting: string) => copiesOf(`echo '${greeting}'`);
  const allRunning = (ns: string, release: string, n: number) =>
    eventually(`${n} instances of ${release} Running`, async () => {
      const got = await phases(ns, release);
      return got.split(' ').filter((p) => p.endsWith('=Running')).length === n;
    }, 90_000, 300);

  before(async () => {
    c = await startTestCluster({ agents: ['node-a', 'node-b', 'node-c'] });
    helm = new Helm(c.kubeconfig);
  });

  after(async () => {
    helm?.cleanup();
    await c?.cleanup();
  });

  it('helm install (Secrets driver) runs the chart: its Volume Ready, its Instances Running, the release in a helm.sh/release.v1 Secret', async () => {
    const out = await helm.ok(['install', 'app', CHART, '-n', 'demo', '--set', `greeting=${HELLO}`]);
    expect(out).to.include('STATUS: deployed');
    await allRunning('demo', 'app', 2);
    await eventually('Volume app-data Ready', async () => (await c.kubectl.ok(['get', 'volume', 'app-data', '-n', 'demo', '-o', 'jsonpath={.status.phase}'])) === 'Ready', 90_000, 300);
    const secrets = await c.kubectl.ok(['get', 'secrets', '-n', 'demo', '-l', 'owner=helm,name=app', '-o', 'jsonpath={range .items[*]}{.metadata.name}:{.type} {end}']);
    expect(secrets.trim()).to.equal('sh.helm.release.v1.app.v1:helm.sh/release.v1');
    await eventually('two copies print hello', async () => greeters(HELLO).length === 2, 30_000, 300);
    // Instances and Volumes are in kube's `all` category, so the usual look at a release works.
    expect((await c.kubectl.ok(['get', 'all', '-n', 'demo', '-o', 'name'])).trim().split('\n').sort()).to.deep.equal(['instance.cairn.dev/app-0', 'instance.cairn.dev/app-1', 'volume.cairn.dev/app-data']);
  });

  it('helm upgrade with a changed value changes the Instances; helm rollback restores them; helm history shows the three revisions', async () => {
    await helm.ok(['upgrade', 'app', CHART, '-n', 'demo', '--set', `greeting=${BYE}`]);
    await eventually('two copies print bye, none hello', async () => greeters(BYE).length === 2 && greeters(HELLO).length === 0, 60_000, 300);
    await allRunning('demo', 'app', 2);
    await helm.ok(['rollback', 'app', '1', '-n', 'demo']);
    await eventually('two copies print hello again, none bye', async () => greeters(HELLO).length === 2 && greeters(BYE).length === 0, 60_000, 300);
    const history = JSON.parse(await helm.ok(['history', 'app', '-n', 'demo', '-o', 'json'])) as { revision: number; status: string; description: string }[];
    expect(history.map((h) => [h.revision, h.status])).to.deep.equal([[1, 'superseded'], [2, 'superseded'], [3, 'deployed']]);
    expect(history[2]!.description).to.equal('Rollback to 1');
    const listed = JSON.parse(await helm.ok(['list', '-n', 'demo', '-o', 'json'])) as { name: string; revision: string; status: string }[];
    expect(listed.map((r) => [r.name, r.revision, r.status])).to.deep.equal([['app', '3', 'deployed']]);
    expect(await helm.ok(['status', 'app', '-n', 'demo'])).to.include('REVISION: 3');
  });

  it('helm uninstall removes every object, every process and the release Secrets', async () => {
    expect(await helm.ok(['uninstall', 'app', '-n', 'demo'])).to.include('release "app" uninstalled');
    await eventually('no Instance, Volume or release Secret left', async () => {
      const left = await c.kubectl.ok(['get', 'instances,volumes,secrets', '-n', 'demo', '-o', 'name']);
      return left.trim() === '';
    }, 60_000, 300);
    await eventually('no copy of the release left', async () => greeters(HELLO).length === 0, 30_000, 300);
  });

  it('HELM_DRIVER=configmap with --create-namespace: a new Cluster, the release in ConfigMaps, upgrade and uninstall', async () => {
    const env = { HELM_DRIVER: 'configmap' };
    await helm.ok(['install', 'cm', CHART, '-n', 'team', '--create-namespace', '--set', 'replicas=1', '--set', 'volume.enabled=false'], env);
    expect(await c.kubectl.ok(['get', 'cluster', 'team', '-o', 'name'])).to.include('cluster.cairn.dev/team');
    expect(await c.kubectl.ok(['get', 'instances', '-n', 'team', '-o', 'name'])).to.include('instance.cairn.dev/cm-0');
    await helm.ok(['upgrade', 'cm', CHART, '-n', 'team', '--set', 'replicas=2', '--set', 'volume.enabled=false'], env);
    expect((await c.kubectl.ok(['get', 'instances', '-n', 'team', '-o', 'name'])).trim().split('\n')).to.have.length(2);
    const maps = await c.kubectl.ok(['get', 'configmaps', '-n', 'team', '-l', 'owner=helm', '-o', 'name']);
    expect(maps.trim().split('\n').sort()).to.deep.equal(['configmap/sh.helm.release.v1.cm.v1', 'configmap/sh.helm.release.v1.cm.v2']);
    expect(await c.kubectl.ok(['get', 'secrets', '-n', 'team', '-o', 'name'])).to.equal('');
    await helm.ok(['uninstall', 'cm', '-n', 'team'], env);
    await eventually('team emptied', async () => (await c.kubectl.ok(['get', 'instances,configmaps', '-n', 'team', '-o', 'name'])).trim() === '', 30_000, 300);
  });
});

/**
 * `cairn apply`, `cairn diff` and `cairn delete` as a user runs them, against
 * a real `cairn server` with its controller and the Cluster `demo` (no
 * agents: Instances stay Pending, which is all these verbs need). The tests
 * of each suite build on the previous ones' state, in order.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { eventually } from '../../support/eventually.js';
import { runCairn, startTestCluster, type CliResult, type TestCluster } from '../../support/cairn-cli.js';

const instance = (name: string, cpus: number, labels = 'app: x') => `apiVersion: cairn.dev/v1alpha1
kind: Instance
metadata:
  name: ${name}
  labels: {${labels}}
spec:
  driver: process
  cpus: ${cpus}
  memory: 32Mi
  process: {command: ["/bin/sleep", "600"]}
`;

const volume = (name: string) => `apiVersion: cairn.dev/v1alpha1
kind: Volume
metadata:
  name: ${name}
  labels: {app: x}
spec:
  size: 64Mi
  replicas: 1
`;

const lines = (r: CliResult) => r.stdout.trim().split('\n').filter(Boolean);

describe('cairn apply, diff, delete (e2e)', function () {
  this.timeout(120_000);
  let cluster: TestCluster;
  let work: string;
  let manifests: string;
  // The cairn processes' TMPDIR: diff's LIVE-/MERGED- dirs land there, so a test can see that they are removed.
  let tmp: string;

  const write = (file: string, text: string) => fs.writeFileSync(path.join(manifests, file), text);
  const cairn = (args: string[], stdin?: string) => cluster.cairn(args, { stdin, env: { ...process.env, TMPDIR: tmp }, timeoutMs: 90_000 });
  const exists = async (kind: 'Instance' | 'Volume', name: string) => (await cluster.client.get(kind, 'demo', name)) !== undefined;

  before(async function () {
    cluster = await startTestCluster();
    work = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-apply-e2e-'));
    manifests = path.join(work, 'manifests');
    tmp = path.join(work, 'tmp');
    fs.mkdirSync(manifests);
    fs.mkdirSync(tmp);
    write('10-web.yaml', `${instance('web', 1)}---\n${volume('data')}`);
    write('20-api.yaml', instance('api', 1));
    write('30-plain.yaml', instance('plain', 1, 'tier: free'));
    write('README.md', 'not a manifest');
  });

  after(async () => {
    await cluster?.cleanup();
    if (work) fs.rmSync(work, { recursive: true, force: true });
  });

  describe('apply', () => {
    it('creates every object of a directory, in file order', async () => {
      const r = await cairn(['apply', '-f', manifests]);
      expect(r.stderr).to.equal('');
      expect(r.code).to.equal(0);
      expect(lines(r)).to.deep.equal(['instance.cairn.dev/web created', 'volume.cairn.dev/data created', 'instance.cairn.dev/api created', 'instance.cairn.dev/plain created']);
      expect((await cluster.client.get('Instance', 'demo', 'web'))?.spec.cpus).to.equal(1);
    });

    it('reports unchanged when applied again', async () => {
      const r = await cairn(['apply', '-f', manifests]);
      expect(r.code).to.equal(0);
      expect(lines(r)).to.deep.equal(['instance.cairn.dev/web unchanged', 'volume.cairn.dev/data unchanged', 'instance.cairn.dev/api unchanged', 'instance.cairn.dev/plain unchanged']);
    });

    it('reports configured for the object whose manifest changed', async () => {
      write('20-api.yaml', instance('api', 2));
      const r = await cairn(['apply', '-f', manifests]);
      expect(r.code).to.equal(0);
      expect(lines(r)).to.include('instance.cairn.dev/api configured').and.include('instance.cairn.dev/web unchanged');
      expect((await cluster.client.get('Instance', 'demo', 'api'))?.spec.cpus).to.equal(2);
    });

    it('changes nothing on the server with --dry-run=server', async () => {
      const before = await cluster.client.get('Instance', 'demo', 'api');
      const stdin = `${instance('api', 3)}---\n${instance('ghost', 1)}`;
      const r = await cairn(['apply', '-f', '-', '--dry-run=server'], stdin);
      expect(r.code).to.equal(0);
      expect(lines(r)).to.deep.equal(['instance.cairn.dev/api configured (server dry run)', 'instance.cairn.dev/ghost created (server dry run)']);
      const after = await cluster.client.get('Instance', 'demo', 'api');
      expect(after?.spec.cpus).to.equal(2);
      // The generation, not the resourceVersion: the controller and the agent may write status meanwhile.
      expect(after?.metadata.generation).to.equal(before?.metadata.generation);
      expect(await exists('Instance', 'ghost')).to.equal(false);
    });

    it('reports an invalid object with its file and field path, applies the others, and exits 1', async () => {
      const stdin = `${instance('bad', 0)}---\n${instance('after-bad', 1, 'batch: one')}`;
      const r = await cairn(['apply', '-f', '-'], stdin);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(/^Error from server \(Invalid\): error when applying "STDIN": Instance\.cairn\.dev "bad" is invalid: spec\.cpus: /);
      expect(lines(r)).to.deep.equal(['instance.cairn.dev/after-bad created']);
      expect(await exists('Instance', 'after-bad')).to.equal(true);
    });

    it("names the file and line of a YAML error and applies nothing", async () => {
      const r = await cairn(['apply', '-f', '-'], `${instance('never', 1)}---\nkind: [Instance\n`);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(/^error: error parsing "STDIN" \(line 1[23], column \d+\): /);
      expect(await exists('Instance', 'never')).to.equal(false);
    });

    it("refuses an unknown kind in kubectl's words", async () => {
      const r = await cairn(['apply', '-f', '-'], 'apiVersion: cairn.dev/v1alpha1\nkind: Foo\nmetadata: {name: x}\n');
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain('error: resource mapping not found for name: "x" namespace: "demo" from "STDIN": no matches for kind "Foo" in version "cairn.dev/v1alpha1"\nhint: the server serves the kinds ');
      expect(r.stderr).to.match(/in apiVersion cairn\.dev\/v1alpha1 \(besides the core ones\): check the apiVersion and kind of the manifest\n$/);
      for (const kind of ['Cluster', 'Node', 'Instance', 'Volume', 'WorkItem']) expect(r.stderr).to.match(new RegExp(`hint: .*\\b${kind}\\b`));
    });

    it('reports a field-manager conflict with --force-conflicts as the way out', async () => {
      await cluster.kubectl.ok(['apply', '--server-side', '-f', '-'], { stdin: instance('shared', 1, 'batch: one') });
      const conflicting = await cairn(['apply', '-f', '-'], instance('shared', 2, 'batch: one'));
      expect(conflicting.code).to.equal(1);
      expect(conflicting.stderr).to.contain('Error from server (Conflict): error when applying "STDIN": Apply failed with 1 conflict: conflict with "kubectl": .spec.cpus');
      expect(conflicting.stderr).to.contain('--force-conflicts');
      const forced = await cairn(['apply', '-f', '-', '--force-conflicts'], instance('shared', 2, 'batch: one'));
      expect(forced.code).to.equal(0);
      expect(lines(forced)).to.deep.equal(['instance.cairn.dev/shared configured']);
    });

    it('--field-manager applies as a manager of its own: what it set survives an apply of the manifests, and diff finds nothing', async () => {
      const grace = `apiVersion: cairn.dev/v1alpha1\nkind: Instance\nmetadata: {name: web}\nspec: {terminationGracePeriodSeconds: 42}\n`;
      const own = await cairn(['apply', '--field-manager', 'grace-setter', '-f', '-'], grace);
      expect([own.code, lines(own)], own.stderr).to.deep.equal([0, ['instance.cairn.dev/web configured']]);
      const again = await cairn(['apply', '-f', manifests]);
      expect(again.code, again.stderr).to.equal(0);
      expect(lines(again)).to.include('instance.cairn.dev/web unchanged');
      expect((await cluster.client.get('Instance', 'demo', 'web'))?.spec.terminationGracePeriodSeconds).to.equal(42);
      const live = (await cluster.client.get('Instance', 'demo', 'web')) as { metadata: { managedFields?: { manager: string }[] } } | undefined;
      const managers = live?.metadata.managedFields?.map((m) => m.manager);
      expect(managers).to.include.members(['cairn', 'grace-setter']);
      const diff = await cairn(['diff', '-f', manifests]);
      expect([diff.code, diff.stdout]).to.deep.equal([0, '']);
    });

  });

  describe('diff', () => {
    const leftovers = () => fs.readdirSync(tmp).filter((f) => /^(LIVE|MERGED)-/.test(f));

    it('exits 0 without output when nothing would change', async () => {
      const r = await cairn(['diff', '-f', manifests]);
      expect(r.stderr).to.equal('');
      expect(r.stdout).to.equal('');
      expect(r.code).to.equal(0);
      expect(leftovers()).to.deep.equal([]);
    });

    it('exits 1 with a unified diff of what would change, and removes its temp dirs', async () => {
      write('20-api.yaml', instance('api', 3));
      const r = await cairn(['diff', '-f', manifests]);
      expect(r.code).to.equal(1);
      expect(r.stdout).to.match(/^--- .*\/LIVE-[^/]+\/cairn\.dev\.v1alpha1\.Instance\.demo\.api\t/m);
      expect(r.stdout).to.match(/^\+\+\+ .*\/MERGED-[^/]+\/cairn\.dev\.v1alpha1\.Instance\.demo\.api\t/m);
      expect(r.stdout).to.contain('\n-  cpus: 2\n+  cpus: 3\n');
      expect(r.stdout).not.to.match(/managedFields|resourceVersion|status:/);
      expect(leftovers()).to.deep.equal([]);
      expect((await cluster.client.get('Instance', 'demo', 'api'))?.spec.cpus).to.equal(2);
    });

    it('shows a new object as all added, and honours CAIRN_EXTERNAL_DIFF', async () => {
      const r = await cluster.cairn(['diff', '-f', '-'], { stdin: instance('newcomer', 1), env: { ...process.env, TMPDIR: tmp, CAIRN_EXTERNAL_DIFF: 'diff -r' } });
      expect(r.code).to.equal(1);
      expect(r.stdout).to.match(/^Only in .*MERGED-[^:]+: cairn\.dev\.v1alpha1\.Instance\.demo\.newcomer$/m);
      expect(await exists('Instance', 'newcomer')).to.equal(false);
    });

    it('exits 2 on a file that does not exist or an unknown kind', async () => {
      const missing = await cairn(['diff', '-f', path.join(work, 'nope.yaml')]);
      expect(missing.code).to.equal(2);
      expect(missing.stderr).to.match(/^error: the path ".*nope\.yaml" does not exist/);
      const unknown = await cairn(['diff', '-f', '-'], 'apiVersion: cairn.dev/v1alpha1\nkind: Foo\nmetadata: {name: x}\n');
      expect(unknown.code).to.equal(2);
      expect(unknown.stderr).to.contain('no matches for kind "Foo"');
    });

    it('exits 2 when the input holds no object, or the selector matches none (not "in sync")', async () => {
      const empty = await cairn(['diff', '-f', '-'], '');
      expect(empty.code).to.equal(2);
      expect(empty.stderr).to.equal('error: no objects passed to diff\nhint: the files hold no objects\n');
      const typo = await cairn(['diff', '-f', '-', '-l', 'app=shpo'], instance('x', 1));
      expect(typo.code).to.equal(2);
      expect(typo.stderr).to.equal('error: no objects passed to diff\nhint: no object of the input has the labels app=shpo\n');
    });
  });

  describe('apply --prune', () => {
    it('refuses --prune without -l', async () => {
      const r = await cairn(['apply', '-f', manifests, '--prune']);
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(/^error: --prune needs a label selector \(-l\)/);
    });

    it('deletes the labelled object whose manifest was dropped, and keeps objects without the label', async () => {
      fs.rmSync(path.join(manifests, '20-api.yaml'));
      const r = await cairn(['apply', '-f', manifests, '--prune', '-l', 'app=x']);
      expect(r.stderr).to.equal('');
      expect(r.code).to.equal(0);
      // plain has no app=x label: -l leaves it out of the input, as kubectl does.
      expect(lines(r)).to.deep.equal(['instance.cairn.dev/web unchanged', 'volume.cairn.dev/data unchanged', 'instance.cairn.dev/api pruned']);
      await eventually('api to be gone (its finalizer done)', async () => !(await exists('Instance', 'api')), 30_000, 200);
      for (const name of ['web', 'plain', 'after-bad', 'shared']) expect(await exists('Instance', name), name).to.equal(true);
      expect(await exists('Volume', 'data')).to.equal(true);
    });

    it('prunes nothing more when run again', async () => {
      const r = await cairn(['apply', '-f', manifests, '--prune', '-l', 'app=x']);
      expect(r.code).to.equal(0);
      expect(r.stdout).not.to.contain('pruned');
    });
  });

  describe('delete', () => {
    it('deletes by name', async () => {
      const r = await cairn(['delete', 'instance', 'plain']);
      expect(r.code).to.equal(0);
      expect(r.stdout).to.equal('instance.cairn.dev "plain" deleted\n');
    });

    it('fails on a missing name with NotFound and exit 1, but not with --ignore-not-found', async () => {
      const missing = await cairn(['delete', 'instance', 'nope']);
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.equal('Error from server (NotFound): instances.cairn.dev "nope" not found\n');
      const ignored = await cairn(['delete', 'instance', 'nope', '--ignore-not-found']);
      expect(ignored.code).to.equal(0);
      expect(ignored.stdout + ignored.stderr).to.equal('');
    });

    it('deletes the objects a manifest names', async () => {
      const r = await cairn(['delete', '-f', path.join(manifests, '10-web.yaml')]);
      expect(r.code).to.equal(0);
      expect(lines(r)).to.deep.equal(['instance.cairn.dev "web" deleted', 'volume.cairn.dev "data" deleted']);
    });

    it('refuses an input that holds no object (nothing was deleted)', async () => {
      const r = await cairn(['delete', '-f', '-'], '');
      expect(r.code).to.equal(1);
      expect(r.stderr).to.equal('error: no objects passed to delete\nhint: the files hold no objects\n');
    });

    it('deletes by label selector', async () => {
      await cairn(['apply', '-f', '-'], `${instance('b1', 1, 'batch: one')}---\n${instance('b2', 1, 'batch: two')}`);
      const r = await cairn(['delete', 'instances', '-l', 'batch=one']);
      expect(r.code).to.equal(0);
      expect(lines(r).sort()).to.deep.equal(['instance.cairn.dev "after-bad" deleted', 'instance.cairn.dev "b1" deleted', 'instance.cairn.dev "shared" deleted']);
      expect(await exists('Instance', 'b2')).to.equal(true);
    });

    it("--wait returns once the object is gone, after the controller's finalizer ran", async () => {
      const held = async () => (await cluster.client.get('Instance', 'demo', 'b2'))?.metadata.finalizers?.includes('cairn.dev/controller') ?? false;
      await eventually("the controller's finalizer on b2", held, 30_000, 200);
      const r = await cairn(['delete', 'instance', 'b2', '--wait', '--timeout', '60s']);
      expect(r.code).to.equal(0);
      expect(r.stdout).to.equal('instance.cairn.dev "b2" deleted\n');
      expect(await exists('Instance', 'b2')).to.equal(false);
    });
  });

  describe('with stock kubectl', () => {
    it('kubectl apply --server-side and cairn apply take turns on the same files without errors', async () => {
      const shared = path.join(work, 'shared');
      fs.mkdirSync(shared);
      fs.writeFileSync(path.join(shared, 'both.yaml'), `${instance('both', 1)}---\n${volume('both-data')}`);
      expect((await cluster.kubectl.run(['apply', '--server-side', '-f', shared])).code).to.equal(0);
      const r = await cairn(['apply', '-f', shared]);
      expect(r.stderr).to.equal('');
      expect(r.code).to.equal(0);
      expect(lines(r)).to.deep.equal(['instance.cairn.dev/both unchanged', 'volume.cairn.dev/both-data unchanged']);
      expect((await cluster.kubectl.run(['apply', '--server-side', '-f', shared])).code).to.equal(0);
      expect((await cairn(['diff', '-f', shared])).code).to.equal(0);
    });
  });
});

describe('cairn apply, diff, delete --help', () => {
  for (const verb of ['apply', 'diff', 'delete']) {
    it(`${verb} --help shows examples`, async () => {
      const r = await runCairn([verb, '--help']);
      expect(r.code).to.equal(0);
      expect(r.stdout).to.contain('\nExamples:\n').and.contain(`cairn ${verb} `);
    });
  }
});

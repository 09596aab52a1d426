/**
 * `cairn get`, `describe` and `wait` as a user runs them, against a real
 * `cairn server` with its controller and one real agent, holding a Volume
 * and a process Instance that runs `sleep 600`. Tables are checked against
 * stock kubectl's `get` of the same objects. The tests build on each other
 * in order: the first waits for the instance to be Ready.
 */
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import YAML from 'yaml';
import { CAIRN_BIN } from '../../../hack/cairn-process.js';
import { startTestCluster, type CliResult, type TestCluster } from '../../support/cairn-cli.js';
import { eventually } from '../../support/eventually.js';

const lines = (text: string) => text.split('\n').filter(Boolean);
// A table row as words without its last column (AGE differs between two runs a second apart).
const withoutAge = (line: string) => line.trim().split(/\s+/).slice(0, -1).join(' ');

/** A long-running `cairn` child whose output the test reads as it arrives. */
function background(args: string[]) {
  const child = spawn(process.execPath, [CAIRN_BIN, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number>((resolve) => child.once('close', (code, signal) => resolve(code ?? (signal ? 128 : -1))));
  return { child, stdout: () => stdout, stderr: () => stderr, exited };
}

describe('cairn get, describe, wait (e2e)', function () {
  this.timeout(120_000);
  let cluster: TestCluster;
  const cairn = (...args: string[]): Promise<CliResult> => cluster.cairn(args, { timeoutMs: 90_000 });
  const running: ReturnType<typeof background>[] = [];

  before(async function () {
    cluster = await startTestCluster({ agents: ['node-a'] });
    await cluster.client.create('Volume', { metadata: { name: 'data', namespace: 'demo', labels: { app: 'db' } }, spec: { size: '16Mi', driver: 'file' } });
    await cluster.client.create('Instance', {
      metadata: { name: 'web', namespace: 'demo', labels: { app: 'web' } },
      spec: { driver: 'process', memory: '16Mi', process: { command: ['sleep', '600'] } },
    });
  });

  after(async () => {
    for (const p of running) if (p.child.exitCode === null && p.child.signalCode === null) p.child.kill('SIGKILL');
    await Promise.all(running.map((p) => p.exited));
    await cluster?.cleanup();
  });

  describe('wait', () => {
    it('returns once the instance is Ready', async () => {
      const r = await cairn('wait', 'instance', 'web', '--for=condition=Ready', '--timeout', '90s');
      expect(r.stderr).to.equal('');
      expect(r.code).to.equal(0);
      expect(r.stdout).to.equal('instance.cairn.dev/web condition met\n');
    });

    it('matches a JSONPath value, for every object with --all', async () => {
      const r = await cairn('wait', 'instances', '--all', '--for=jsonpath={.status.phase}=Running', '--timeout', '30s');
      expect(r.code).to.equal(0);
      expect(r.stdout).to.equal('instance.cairn.dev/web condition met\n');
    });

    it('times out in about --timeout on a condition that never comes, in kubectl\'s words', async () => {
      const started = Date.now();
      const r = await cairn('wait', 'instance', 'web', '--for=condition=Migrated', '--timeout', '3s');
      const elapsed = Date.now() - started;
      expect(r.code).to.equal(1);
      expect(r.stderr).to.contain('error: timed out waiting for the condition on instances/web');
      expect(elapsed).to.be.within(3000, 15_000);
    });

    it('waits for a deletion', async () => {
      await cluster.client.create('Instance', { metadata: { name: 'doomed', namespace: 'demo' }, spec: { runState: 'Stopped', memory: '16Mi', process: { command: ['sleep', '600'] } } });
      const waiting = background(['wait', 'instance', 'doomed', '--for=delete', '--timeout', '60s', '--kubeconfig', cluster.kubeconfig]);
      running.push(waiting);
      await new Promise((r) => setTimeout(r, 2000));
      expect(waiting.child.exitCode, 'wait returned before the deletion').to.equal(null);
      await cluster.client.delete('Instance', 'demo', 'doomed');
      expect(await waiting.exited, waiting.stderr()).to.equal(0);
      expect(waiting.stdout()).to.equal('instance.cairn.dev/doomed deleted\n');
    });
  });

  describe('get', () => {
    it('prints the server\'s table, the same as stock kubectl', async () => {
      const r = await cairn('get', 'instances');
      expect(r.code).to.equal(0);
      const [header, row, ...rest] = lines(r.stdout);
      expect(header).to.match(/^NAME +PHASE +NODE +DRIVER +ACCELERATOR +CPUS +MEMORY +READY +AGE$/);
      expect(withoutAge(row!)).to.equal('web Running node-a process 1 16Mi True');
      expect(rest).to.deep.equal([]);
      const kubectl = lines(await cluster.kubectl.ok(['get', 'instances']));
      expect(header).to.equal(kubectl[0]);
      expect(withoutAge(row!)).to.equal(withoutAge(kubectl[1]!));
    });

    it('shows every column with -o wide, as kubectl does', async () => {
      const header = lines((await cairn('get', 'instances', '-o', 'wide')).stdout)[0];
      expect(header).to.contain('RESTARTS').and.contain('RUN STATE');
      expect(header).to.equal(lines(await cluster.kubectl.ok(['get', 'instances', '-o', 'wide']))[0]);
    });

    it('prints one object as yaml, several as a json List, names with -o name', async () => {
      const one = YAML.parse((await cairn('get', 'instance', 'web', '-o', 'yaml')).stdout);
      expect([one.kind, one.metadata.name, one.spec.memory]).to.deep.equal(['Instance', 'web', '16Mi']);
      expect(one.metadata.creationTimestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      const list = JSON.parse((await cairn('get', 'instances,volumes', '-o', 'json')).stdout);
      expect([list.apiVersion, list.kind]).to.deep.equal(['v1', 'List']);
      expect(list.items.map((o: { kind: string }) => o.kind)).to.deep.equal(['Instance', 'Volume']);
      expect((await cairn('get', 'instances,volumes', '-o', 'name')).stdout).to.equal('instance.cairn.dev/web\nvolume.cairn.dev/data\n');
    });

    it('adds a NAMESPACE column with -A', async () => {
      const r = await cairn('get', 'instances', '-A');
      const [header, row] = lines(r.stdout);
      expect(header).to.match(/^NAMESPACE +NAME +PHASE/);
      expect(row).to.match(/^demo +web +Running/);
      expect(header).to.equal(lines(await cluster.kubectl.ok(['get', 'instances', '-A']))[0]);
    });

    it('filters with -l and says when nothing matches (exit 0)', async () => {
      const hit = await cairn('get', 'instances,volumes', '-l', 'app=db');
      expect(lines(hit.stdout).slice(1).map(withoutAge)).to.deep.equal(['volume.cairn.dev/data 16Mi 1 1 Ready']);
      const miss = await cairn('get', 'instances', '-l', 'app=nothing');
      expect([miss.code, miss.stdout, miss.stderr]).to.deep.equal([0, '', 'No resources found in demo namespace.\n']);
      const all = await cairn('get', 'instances', '-A', '-l', 'app=nothing');
      expect(all.stderr).to.equal('No resources found\n');
    });

    it('prints one block per kind for the category cairn, as kubectl get all', async () => {
      const r = await cairn('get', 'cairn');
      expect(r.code).to.equal(0);
      const blocks = r.stdout.trimEnd().split('\n\n');
      expect(blocks.map((b) => lines(b)[1]!.split(/\s+/)[0])).to.include.members(['cluster.cairn.dev/demo', 'instance.cairn.dev/web', 'node.cairn.dev/node-a', 'volume.cairn.dev/data']);
      const kubectl = (await cluster.kubectl.ok(['get', 'cairn'])).trimEnd().split('\n\n');
      expect(blocks.map((b) => lines(b)[0])).to.deep.equal(kubectl.map((b) => lines(b)[0]));
    });

    it('reports a missing name kubectl\'s way (exit 1) and still prints the others', async () => {
      const r = await cairn('get', 'instances', 'web', 'missing');
      expect(r.code).to.equal(1);
      expect(r.stderr).to.equal('Error from server (NotFound): instances.cairn.dev "missing" not found\n');
      expect(lines(r.stdout).map(withoutAge)[1]).to.equal('web Running node-a process 1 16Mi True');
    });

    it('refuses an unknown kind (exit 1)', async () => {
      const r = await cairn('get', 'widgets');
      expect(r.code).to.equal(1);
      expect(r.stderr).to.match(/^error: the server doesn't have a resource type "widgets"\n/);
    });

    it('-w prints the table, then a row per change, and ends with 130 on Ctrl-C', async () => {
      const watch = background(['get', 'instances', '-w', '--kubeconfig', cluster.kubeconfig]);
      running.push(watch);
      await eventually('the first table', () => lines(watch.stdout()).length >= 2, 30_000);
      await cluster.client.patch('Instance', 'demo', 'web', { metadata: { labels: { touched: 'yes' } } });
      await eventually('a row for the change', () => lines(watch.stdout()).length >= 3, 30_000);
      const rows = lines(watch.stdout());
      expect(rows[0]).to.match(/^NAME +PHASE/);
      expect(rows.slice(1).every((row) => /^web +Running +node-a/.test(row))).to.equal(true);
      watch.child.kill('SIGINT');
      expect(await watch.exited).to.equal(130);
      expect(watch.stderr()).to.equal('');
    });

    it('-w piped into head ends quietly when head exits (no EPIPE crash)', async () => {
      const script = `node ${CAIRN_BIN} get instances -w --kubeconfig ${cluster.kubeconfig} | head -1; echo "cairn=\${PIPESTATUS[0]}" >&2`;
      const pipe = spawn('bash', ['-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      pipe.stdout.on('data', (d) => (stdout += d));
      pipe.stderr.on('data', (d) => (stderr += d));
      const exited = new Promise((resolve) => pipe.once('close', resolve));
      await eventually('the header through head', () => stdout.includes('NAME'), 30_000);
      // head has exited; the next change makes cairn write into the closed pipe.
      for (let i = 0; i < 3 && !stderr.includes('cairn='); i++) {
        await cluster.client.patch('Instance', 'demo', 'web', { metadata: { labels: { touched: `again-${i}` } } });
        await new Promise((r) => setTimeout(r, 1000));
      }
      await exited;
      expect(stderr).to.equal('cairn=0\n');
    });
  });

  describe('describe', () => {
    it('shows the instance\'s fields, conditions and events', async () => {
      const r = await cairn('describe', 'instance', 'web');
      expect(r.code).to.equal(0);
      expect(r.stdout).to.match(/^Name: +web\nNamespace: +demo\n/);
      expect(r.stdout).to.match(/\nSpec:\n(.*\n)*  Memory: +16Mi\n/);
      expect(r.stdout).to.match(/\n  Process:\n    Command:\n      sleep\n      600\n/);
      expect(r.stdout).to.match(/\nStatus:\n(.*\n)*  Node Name: +node-a\n/);
      expect(r.stdout).to.match(/\nConditions:\n  Type +Status +Reason +Age +ObservedGeneration +Message\n/);
      expect(r.stdout).to.match(/\n  Ready +True +\w+ +\S+ +\d+ +.*\n/);
      expect(r.stdout).to.match(/\n  Scheduled +True +Scheduled +\S+ +\d+ +placed on node node-a\n/);
      // A first placement is recorded in the Scheduled condition only (docs/throughput.md); one
      // after FailedScheduling (the instance may come before the node) has its Event.
      const events = r.stdout.slice(r.stdout.indexOf('\nEvents:'));
      expect(events, r.stdout).to.match(/^\nEvents:( +<none>|\n.*\n.*\n(  Warning +FailedScheduling .*\n)+  Normal +Scheduled +\S+ +cairn-controller +placed on node node-a)\n$/);
    });

    it('shows the events the controller recorded for an instance', async () => {
      await cluster.client.create('Instance', { metadata: { name: 'huge', namespace: 'demo' }, spec: { driver: 'process', memory: '64Ti', process: { command: ['sleep', '600'] } } });
      try {
        let r: CliResult | undefined;
        await eventually('a FailedScheduling event', async () => (r = await cairn('describe', 'instance', 'huge')).stdout.includes('FailedScheduling'), 30_000, 500);
        expect(r!.stdout).to.match(/\nEvents:\n  Type +Reason +Age +From +Message\n  -+ +-+ +-+ +-+ +-+\n  Warning +FailedScheduling +\S+ +cairn-controller +0\/1 nodes are available: 1 insufficient memory\./);
      } finally {
        await cluster.client.delete('Instance', 'demo', 'huge');
      }
    });

    it('describes every object of a kind, and reports a missing one (exit 1)', async () => {
      const all = await cairn('describe', 'volumes');
      expect(all.code).to.equal(0);
      expect(all.stdout).to.match(/^Name: +data\n/);
      const missing = await cairn('describe', 'instance', 'missing');
      expect(missing.code).to.equal(1);
      expect(missing.stderr).to.equal('Error from server (NotFound): instances.cairn.dev "missing" not found\n');
    });
  });

  it('every read verb has --help with examples', async () => {
    for (const verb of ['get', 'describe', 'wait']) {
      const r = await cairn(verb, '--help');
      expect(r.code).to.equal(0);
      expect(r.stdout).to.contain('Examples:');
    }
  });
});

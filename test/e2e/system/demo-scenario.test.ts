/**
 * The local cluster demo, driven the way the README's tour drives it: the
 * examples applied with `cairn apply` onto `cairn server` and three real
 * agents, then a machine failure (kill -9 of an agent), its return, a
 * drain, `cairn diff`, `cairn apply --prune` and deleting everything —
 * checked with `cairn`, stock kubectl, and the real processes on this
 * machine (never two running copies of an instance).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import YAML from 'yaml';
import { cmdline, copiesOf, processesWith } from '../../support/agent-process.js';
import { startTestCluster, type TestCluster } from '../../support/cairn-cli.js';
import { eventually, sleep } from '../../support/eventually.js';
import { EXAMPLES_DIR } from '../../support/paths.js';

const NODES = ['node-a', 'node-b', 'node-c'];
const INSTANCES = ['ticker', 'writer'];
/** The examples' failure detection is tuned for people watching; the test wants seconds. */
const FAST_FAILURE_DETECTION = { heartbeatIntervalSeconds: 1, nodeLeaseDurationSeconds: 3, failoverGracePeriodSeconds: 1 };

describe('system: the demo scenario through cairn and kubectl', function () {
  this.timeout(180_000);
  let c: TestCluster;
  let manifests: string;

  /** The shim of each running copy carries its instance dir in its command line. */
  const copies = (instance: string) => copiesOf(`/instances/${c.name}/${instance}/`);
  const ok = async (args: string[], timeoutMs = 60_000) => {
    const r = await c.cairn(args, { timeoutMs });
    expect(r.code, `cairn ${args.join(' ')}\n${r.stderr}${r.stdout}`).to.equal(0);
    return r.stdout;
  };
  const getJson = async (kind: string, name: string) => JSON.parse(await ok(['get', kind, name, '-o', 'json']));
  const nodeOf = async (instance: string): Promise<string> => (await getJson('instance', instance)).status?.nodeName;

  before(async () => {
    // The agents join with join tokens: the whole scenario runs with node credentials, as the demo does.
    c = await startTestCluster({ agents: NODES, join: true });
    manifests = path.join(c.dir, 'manifests');
    fs.mkdirSync(manifests);
    for (const file of fs.readdirSync(EXAMPLES_DIR).filter((f) => f.endsWith('.yaml'))) {
      const docs = YAML.parseAllDocuments(fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8')).map((d) => d.toJS());
      for (const doc of docs) if (doc.kind === 'Cluster') doc.spec.failureDetection = FAST_FAILURE_DETECTION;
      fs.writeFileSync(path.join(manifests, file), docs.map((d) => YAML.stringify(d)).join('---\n'));
    }
  });

  after(async () => {
    await c?.cleanup();
  });

  it('converges: cairn apply -f creates the examples, cairn status --watch --until-converged exits 0, kubectl agrees', async () => {
    const applied = await ok(['apply', '-f', manifests]);
    for (const line of ['volume.cairn.dev/data created', 'instance.cairn.dev/ticker created', 'instance.cairn.dev/writer created']) expect(applied).to.contain(line);
    await ok(['status', '--watch', '--until-converged', '--timeout', '90s'], 120_000);
    const phases = await c.kubectl.ok(['get', 'instances', '-o', 'jsonpath={range .items[*]}{.metadata.name}={.status.phase} {end}']);
    expect(phases.trim().split(' ').sort()).to.deep.equal(['ticker=Running', 'writer=Running']);
    for (const i of INSTANCES) expect(copies(i), i).to.have.length(1);
  });

  it('kill -9 of an agent: its node turns Unreachable and its instances run elsewhere, never two copies at once', async () => {
    const lost = await nodeOf('ticker');
    const moved = [];
    for (const i of INSTANCES) if ((await nodeOf(i)) === lost) moved.push(i);
    await c.agents.get(lost)!.kill9();
    let most = 0;
    const sampler = setInterval(() => (most = Math.max(most, ...INSTANCES.map((i) => copies(i).length))), 100);
    try {
      await eventually(`node ${lost} Unreachable`, async () => (await getJson('node', lost)).status?.phase === 'Unreachable', 30_000, 300);
      for (const i of moved) {
        await eventually(`${i} Running off ${lost}`, async () => {
          const obj = await getJson('instance', i);
          return obj.status?.phase === 'Running' && obj.status?.nodeName !== lost;
        }, 60_000, 300);
      }
    } finally {
      clearInterval(sampler);
    }
    expect(most, 'running copies of an instance at any sampled moment').to.equal(1);
    for (const i of INSTANCES) expect(copies(i), i).to.have.length(1);
    for (const i of moved) expect(processesWith(`/agents/${lost}/instances/${c.name}/${i}/`), `${i} left running on the lost node`).to.have.length(0);
    expect(await c.kubectl.ok(['get', 'nodes.cairn.dev', lost, '--no-headers'])).to.match(/Unreachable/);
  });

  it('the agent returns: its node is Ready again and no instance runs twice', async () => {
    const lost = [...c.agents].find(([, a]) => a.child.exitCode !== null || a.child.signalCode !== null)![0];
    await c.startAgent(lost);
    await eventually(`node ${lost} Ready`, async () => (await getJson('node', lost)).status?.phase === 'Ready', 30_000, 300);
    await sleep(2000);
    for (const i of INSTANCES) expect(copies(i), i).to.have.length(1);
  });

  it('cairn drain --wait empties a node; cairn uncordon makes it schedulable again', async () => {
    // node-a also runs the examples' hand-written WorkItem, which no controller moves.
    const target = (await nodeOf('ticker')) !== 'node-a' ? await nodeOf('ticker') : 'node-b';
    expect(await ok(['drain', target, '--wait', '--timeout', '90s'], 120_000)).to.contain(`node.cairn.dev/${target} drained`);
    expect(processesWith(`/agents/${target}/instances/`)).to.have.length(0);
    for (const i of INSTANCES) {
      expect(await nodeOf(i)).to.not.equal(target);
      expect(copies(i), i).to.have.length(1);
    }
    expect(await ok(['uncordon', target])).to.contain(`node.cairn.dev/${target} uncordoned`);
    expect((await getJson('node', target)).spec).to.include({ unschedulable: false, drain: false });
  });

  it('cairn diff exits 0 when the cluster matches, 1 with a diff when it does not, and above 1 on a bad file', async () => {
    expect((await c.cairn(['diff', '-f', manifests])).code).to.equal(0);
    const changed = path.join(c.dir, 'changed.yaml');
    fs.writeFileSync(changed, fs.readFileSync(path.join(manifests, '25-instances.yaml'), 'utf8').replace('memory: 32Mi', 'memory: 48Mi'));
    const diff = await c.cairn(['diff', '-f', changed]);
    expect(diff.code, diff.stderr).to.equal(1);
    expect(diff.stdout).to.match(/^-\s+memory: 32Mi$/m).and.to.match(/^\+\s+memory: 48Mi$/m);
    fs.writeFileSync(path.join(c.dir, 'bad.yaml'), 'kind: [');
    expect((await c.cairn(['diff', '-f', path.join(c.dir, 'bad.yaml')])).code).to.be.greaterThan(1);
  });

  it('cairn apply --prune -l deletes the object whose manifest was dropped, and its process', async () => {
    const extra = path.join(c.dir, 'extra.yaml');
    fs.writeFileSync(extra, YAML.stringify({
      apiVersion: 'cairn.dev/v1alpha1',
      kind: 'Instance',
      metadata: { name: 'extra', labels: { app: 'demo' } },
      spec: { memory: '16Mi', terminationGracePeriodSeconds: 1, process: { command: ['sleep', '600'] } },
    }));
    expect(await ok(['apply', '-f', manifests, '-f', extra])).to.contain('instance.cairn.dev/extra created');
    await eventually('extra running', async () => copies('extra').length === 1, 30_000, 200);
    const pruned = await ok(['apply', '-f', manifests, '--prune', '-l', 'app=demo']);
    expect(pruned).to.contain('instance.cairn.dev/extra pruned');
    expect(pruned).to.not.match(/(ticker|writer) pruned/);
    await eventually('extra gone with its process', async () => copies('extra').length === 0 && (await c.cairn(['get', 'instance', 'extra'])).code === 1, 30_000, 200);
  });

  it('deleting everything leaves no process, file or WorkItem behind', async () => {
    const deleted = await c.cairn(['delete', '-f', manifests, '--wait', '--ignore-not-found', '--timeout', '90s'], { timeoutMs: 120_000 });
    if (deleted.code !== 0) {
      const left = await c.cairn(['get', 'cairn,leases', '-A', '-o', 'yaml']);
      expect.fail(`cairn delete exited ${deleted.code}:\n${deleted.stderr}${deleted.stdout}\nleft:\n${left.stdout}${left.stderr}`);
    }
    await eventually('every instance process gone', () => c.instanceProcesses().length === 0, 30_000, 200).catch(async (err: Error) => {
      const left = c.instanceProcesses().map((pid) => `${pid}: ${cmdline(pid)}`);
      const items = await c.cairn(['get', 'workitems', '-A', '-o', 'wide']);
      throw new Error(`${err.message}:\n${left.join('\n')}\n${items.stdout}${items.stderr}`);
    });
    const left = await c.kubectl.run(['get', 'workitems', '-A', '--no-headers']);
    expect(left.stdout.trim()).to.equal('');
    for (const node of NODES) {
      for (const sub of ['instances', 'volumes', 'fencing']) {
        const dir = path.join(c.dir, 'agents', node, sub, c.name);
        const files = fs.existsSync(dir) ? fs.readdirSync(dir) : [];
        expect(files, `${node} ${sub}`).to.deep.equal([]);
      }
    }
  });
});

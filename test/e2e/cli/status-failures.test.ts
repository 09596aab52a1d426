/**
 * `cairn status` and `cairn failures` against a real cluster (two agents
 * offering 4 cpus, 4Gi and 10Gi each) holding an instance that runs, an
 * instance that asks for more cpus than any node has, and a volume bigger
 * than any node's storage (acceptance 4 of issue 5). `status` is checked
 * piped (plain lines, never an escape code) and in a pseudo-terminal
 * (util-linux `script`: redrawn in place, cursor restored on Ctrl-C).
 */
import { spawn } from 'node:child_process';
import { expect } from 'chai';
import YAML from 'yaml';
import type { Instance } from '../../../api/instance.js';
import { CAIRN_BIN } from '../../../hack/cairn-process.js';
import { startTestCluster, type TestCluster } from '../../support/cairn-cli.js';
import { eventually } from '../../support/eventually.js';

const ESCAPE = /\x1b/;
const CURSOR_UP = /\x1b\[\d+F/;
const SHOW_CURSOR = '\x1b[?25h';

function sleeper(name: string): Instance {
  return { metadata: { name, namespace: 'demo' }, spec: { cpus: 1, memory: '32Mi', process: { command: ['/bin/sleep', '600'] } } };
}

/** A `cairn` child whose output the test reads as it arrives. */
function background(command: string, args: string[]) {
  const child = spawn(command, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (d) => (stdout += d));
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<number>((resolve) => child.once('close', (code, signal) => resolve(code ?? (signal ? 128 : -1))));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
  };
}

function shellQuote(arg: string): string {
  return `'${arg.replace(/'/g, `'\\''`)}'`;
}

describe('cairn status and failures (e2e)', function () {
  this.timeout(120_000);
  let c: TestCluster;
  const running: Array<ReturnType<typeof background>> = [];

  const cairnArgs = (args: string[]) => [CAIRN_BIN, ...args, '--kubeconfig', c.kubeconfig];
  const start = (args: string[]) => {
    const b = background(process.execPath, cairnArgs(args));
    running.push(b);
    return b;
  };
  /** `cairn args` in a 160x60 pseudo-terminal; its stdin is the terminal's keyboard. */
  const startInTerminal = (args: string[]) => {
    // exec: no shell stays in the terminal's process group, where dash (SHELL unset) would die of the Ctrl-C; -e returns cairn's code.
    const cmd = `stty cols 160 rows 60 && exec ${[process.execPath, ...cairnArgs(args)].map(shellQuote).join(' ')}`;
    const b = background('script', ['-qfec', cmd, '/dev/null']);
    running.push(b);
    return b;
  };
  const phaseOf = async (name: string) => (await c.client.get('Instance', 'demo', name))?.status?.phase;
  const scheduledFalse = async (kind: 'Instance' | 'Volume', name: string) =>
    !!(await c.client.get(kind, 'demo', name))?.status?.conditions?.some((x) => x.type === 'Scheduled' && x.status === 'False');

  before(async function () {
    this.timeout(120_000);
    c = await startTestCluster({ agents: ['node-a', 'node-b'], join: true, agentArgs: ['--cpus', '4', '--memory', '4Gi', '--storage', '10Gi'] });
    await c.client.create('Instance', sleeper('web'));
    await c.client.create('Instance', { ...sleeper('big'), spec: { ...sleeper('big').spec, cpus: 64 } });
    await c.client.create('Volume', { metadata: { name: 'huge', namespace: 'demo' }, spec: { size: '100Ti' } });
    await eventually('web Running', async () => (await phaseOf('web')) === 'Running', 60_000, 200);
    await eventually('big and huge unschedulable', async () => (await scheduledFalse('Instance', 'big')) && (await scheduledFalse('Volume', 'huge')), 30_000, 200);
  });

  after(async () => {
    for (const b of running) await b.stop();
    await c?.cleanup();
  });

  it('status (piped): nodes with allocation bars, phases, convergence and the failing items, no escape codes, exit 0', async () => {
    const r = await c.cairn(['status']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^Cluster demo \(\w+\) +server https:\/\/127\.0\.0\.1:\d+ /);
    expect(r.stdout).to.contain('NODES 2 (2 Ready)');
    expect(r.stdout).to.match(/node-a +Ready +cpu \[[#-]{10}\] [01]\/4 +memory \[[#-]{10}\] \w+\/4Gi +instances [01]/);
    expect(r.stdout).to.match(/node-b +Ready +cpu /);
    expect(r.stdout).to.contain('INSTANCES 2   Pending 1  Running 1');
    expect(r.stdout).to.contain('VOLUMES 1   Pending 1');
    expect(r.stdout).to.contain('converged [######----] 3/5');
    expect(r.stdout).to.contain('FAILING 2');
    expect(r.stdout).to.match(/instance demo\/big +Unschedulable: 0\/2 nodes are available: 2 insufficient cpu\./);
    expect(r.stdout).to.match(/volume demo\/huge +Unschedulable: 0\/2 nodes are available: 2 insufficient storage\./);
    expect(r.stdout).not.to.match(ESCAPE);
  });

  it('status -o json: the summary as a document', async () => {
    const r = await c.cairn(['status', '-o', 'json']);
    expect(r.code, r.stderr).to.equal(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.kind).to.equal('StatusSummary');
    expect(doc.convergence).to.deep.include({ converged: 3, total: 5 });
    expect(doc.failures.map((f: { name: string }) => f.name)).to.deep.equal(['big', 'huge']);
  });

  it('failures: lists the unschedulable instance and the too-big volume, each with reason, message and hint', async () => {
    const r = await c.cairn(['failures']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.match(/^2 failures in namespace demo\n\nUnschedulable \(2\)\n/);
    expect(r.stdout).to.match(/  instance demo\/big\n    condition: Scheduled=False, Ready=False\n.*\n    message: +0\/2 nodes are available: 2 insufficient cpu\.\n    hint: +lower spec\.cpus/);
    expect(r.stdout).to.match(/  volume demo\/huge\n    condition: Scheduled=False\n.*\n    message: +0\/2 nodes are available: 2 insufficient storage\. 1 of 1 replicas is still missing\.\n    hint: +lower spec\.size/);
  });

  it('failures -o json and -o yaml: the report as a document', async () => {
    const json = await c.cairn(['failures', '-o', 'json']);
    expect(json.code, json.stderr).to.equal(0);
    const report = JSON.parse(json.stdout);
    expect(report).to.deep.include({ kind: 'FailureReport', namespace: 'demo', count: 2 });
    expect(report.groups).to.have.length(1);
    const [big, huge] = report.groups[0].failures;
    expect(big).to.deep.include({ kind: 'Instance', name: 'big', reason: 'Unschedulable' });
    expect(huge).to.deep.include({ kind: 'Volume', name: 'huge', reason: 'Unschedulable' });
    for (const f of [big, huge]) expect(f.hint).to.be.a('string').and.not.be.empty;
    const yaml = await c.cairn(['failures', '-o', 'yaml']);
    expect(YAML.parse(yaml.stdout)).to.deep.equal(report);
  });

  it('failures --exit-code exits 1 when something fails; a bad -o exits 1 naming the formats', async () => {
    expect((await c.cairn(['failures', '--exit-code'])).code).to.equal(1);
    const bad = await c.cairn(['failures', '-o', 'wide']);
    expect(bad.code).to.equal(1);
    expect(bad.stderr).to.contain('"wide" is not an output format of failures; use text, json or yaml');
  });

  it('status --until-converged exits 1 after --timeout with the failures listed', async () => {
    const r = await c.cairn(['status', '--until-converged', '--timeout', '3s'], { timeoutMs: 30_000 });
    expect(r.code).to.equal(1);
    expect(r.stdout).to.contain('FAILING 2');
    expect(r.stderr).to.match(/^error: not converged after 3s: 3\/5 converged, 2 failing; not converged: instance demo\/big Pending \(Unschedulable\), volume demo\/huge Pending \(Unschedulable\)\nhint: cairn failures/);
  });

  it('status --until-converged stopped before it converged exits 130 on SIGINT, 143 on SIGTERM (a script must not read it as converged)', async () => {
    for (const [signal, code] of [['SIGINT', 130], ['SIGTERM', 143]] as const) {
      const wait = start(['status', '--until-converged', '--timeout', '90s']);
      await eventually('the first summary', () => wait.stdout().includes('converged ['), 30_000, 100);
      wait.child.kill(signal);
      expect(await wait.exited, signal).to.equal(code);
    }
  });

  it('status --watch (piped): the block once, then a line per change, never an escape code; SIGINT exits 0', async () => {
    const watch = start(['status', '--watch']);
    await eventually('the first summary', () => watch.stdout().includes('converged ['), 30_000, 100);
    await c.client.create('Instance', sleeper('extra'));
    await eventually('a change line for extra', () => /\d\d:\d\d:\d\d instance demo\/extra created: \w+/.test(watch.stdout()), 30_000, 100);
    await eventually('extra Running', () => /instance demo\/extra \w+ → Running/.test(watch.stdout()), 60_000, 100);
    watch.child.kill('SIGINT');
    expect(await watch.exited).to.equal(0);
    expect(watch.stdout().match(/^Cluster demo/gm)).to.have.length(1);
    expect(watch.stdout()).to.match(/\d\d:\d\d:\d\d converged \[[#-]{10}\] \d+\/6, 2 failing/);
    expect(watch.stdout()).not.to.match(ESCAPE);
  });

  it('status --watch in a terminal: draws with escape codes, redraws in place on a change, Ctrl-C exits 0 with the cursor back', async () => {
    const tty = startInTerminal(['status', '--watch']);
    await eventually('the first drawing', () => tty.stdout().includes('converged ['), 30_000, 100);
    expect(tty.stdout()).to.contain('\x1b[?25l');
    expect(tty.stdout()).not.to.match(CURSOR_UP);
    await c.client.delete('Instance', 'demo', 'extra');
    await eventually('a redraw over the first drawing', () => CURSOR_UP.test(tty.stdout()), 30_000, 100);
    const lastDrawing = () => tty.stdout().split(CURSOR_UP).pop()!;
    await eventually('extra gone from the latest drawing', () => lastDrawing().includes('INSTANCES 2 '), 60_000, 100);
    tty.child.stdin.write('\x03');
    expect(await tty.exited).to.equal(0);
    expect(tty.stdout().lastIndexOf(SHOW_CURSOR)).to.be.greaterThan(tty.stdout().lastIndexOf('\x1b[?25l'));
  });

  it('status --watch --until-converged exits 0 once the failing objects are gone and everything converged', async () => {
    const wait = start(['status', '--watch', '--until-converged', '--timeout', '90s']);
    await eventually('the first summary', () => wait.stdout().includes('converged ['), 30_000, 100);
    expect(wait.child.exitCode).to.equal(null);
    await c.client.delete('Instance', 'demo', 'big');
    await c.client.delete('Volume', 'demo', 'huge');
    expect(await wait.exited, wait.stderr()).to.equal(0);
    const final = wait.stdout().slice(wait.stdout().lastIndexOf('Cluster demo'));
    expect(final).to.match(/converged \[##########\] 3\/3/);
    expect(final).not.to.contain('FAILING');
  });

  it('failures on a healthy cluster: "No failures in namespace demo.", --exit-code exits 0', async () => {
    const r = await c.cairn(['failures', '--exit-code']);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal('No failures in namespace demo.\n');
  });

  it('status and failures in a namespace without a Cluster say which Clusters there are (on stderr, exit 0)', async () => {
    for (const verb of ['status', 'failures']) {
      const r = await c.cairn([verb, '-n', 'nothere']);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stderr).to.match(/^hint: no Cluster "nothere"; the Clusters? (is|are) .*demo.*: use -n NAME or -A\n$/);
    }
  });

  it('--help of both has examples', async () => {
    for (const verb of ['status', 'failures']) {
      const r = await c.cairn([verb, '--help']);
      expect(r.code).to.equal(0);
      expect(r.stdout).to.contain('Examples:');
      expect(r.stdout).to.contain(`cairn ${verb}`);
    }
  });
});

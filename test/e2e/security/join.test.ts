/**
 * Issue 7, acceptance 1: an agent joined with a join token works end to end
 * as its node alone; the join token cannot be reused past its limit; an
 * expired one is refused; the node credential is kept 0600 and renewed.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { runCairn, startTestCluster, type TestCluster } from '../../support/cairn-cli.js';
import { eventually } from '../../support/eventually.js';

const sleeper = (name: string, node: string) => ({
  metadata: { name, namespace: 'demo' },
  spec: { driver: 'process' as const, runState: 'Running' as const, cpus: 1, memory: '64Mi', process: { command: ['sleep', '3600'] }, placement: { nodeName: node } },
});

describe('joining nodes with join tokens (e2e)', function () {
  this.timeout(180_000);
  let c: TestCluster;
  const ca = () => path.join(c.server.dataDir, 'pki', 'ca.crt');
  const phaseOf = async (kind: 'Node' | 'Instance', name: string) => (await c.client.get(kind, 'demo', name))?.status?.phase;
  const joinWith = (token: string, node: string, timeoutMs = 20_000) =>
    runCairn(['agent', '--server', c.server.url, '--certificate-authority', ca(), '--join-token', token, '--cluster', 'demo', '--node-name', node, '--data-dir', path.join(c.dir, 'agents', node), '--monitor-port', '0'], { timeoutMs });

  before(async () => {
    c = await startTestCluster({ join: true, serverArgs: ['--node-credential-ttl', '9s'] });
  });
  after(async () => c?.cleanup());

  it('an agent started with a join token registers its node and runs an instance, as system:node:demo:<node>', async () => {
    const agent = await c.startAgent('node-a');
    await eventually('node-a Ready', async () => (await phaseOf('Node', 'node-a')) === 'Ready', 30_000, 200);
    await c.client.create('Instance', sleeper('web', 'node-a'));
    await eventually('web Running', async () => (await phaseOf('Instance', 'web')) === 'Running', 60_000, 200);
    const credFile = path.join(c.dir, 'agents', 'node-a', 'node-credential.json');
    expect(fs.statSync(credFile).mode & 0o777).to.equal(0o600);
    const cred = JSON.parse(fs.readFileSync(credFile, 'utf8'));
    expect(cred).to.include({ cluster: 'demo', nodeName: 'node-a', server: c.server.url });
    const admin = fs.readFileSync(path.join(c.server.dataDir, 'admin.token'), 'utf8').trim();
    expect(fs.readFileSync(`/proc/${agent.pid}/cmdline`, 'utf8')).not.to.contain(admin);
    const tokens = await c.cairn(['get', 'tokens', '-o', 'json']);
    const nodeTokens = JSON.parse(tokens.stdout).items.filter((t: { spec: { type: string; nodeName?: string } }) => t.spec.type === 'node' && t.spec.nodeName === 'node-a');
    expect(nodeTokens.length).to.be.greaterThan(0);
    expect(agent.logs()).not.to.match(/forbidden/i);
  });

  it('renews its credential before it expires and keeps working (TTL 9 s: renewed every 6 s)', async () => {
    const agent = c.agents.get('node-a')!;
    await eventually('two renewals', () => (agent.logs().match(/node credential renewed/g) ?? []).length >= 2, 30_000, 200);
    // Past the renewed-out credential's end: the tunnel, opened with it, goes on (its consoles and log follows with it).
    await new Promise((r) => setTimeout(r, 9_000));
    expect(await phaseOf('Node', 'node-a')).to.equal('Ready');
    expect(await phaseOf('Instance', 'web')).to.equal('Running');
    expect(agent.logs()).not.to.match(/forbidden|Unauthorized/);
    expect(agent.logs(), 'the tunnel was never closed').not.to.match(/tunnel closed; reopening/);
  });

  it('a restarted agent uses the credential in its data dir, with no join token', async () => {
    await c.agents.get('node-a')!.kill9();
    const again = await c.startAgent('node-a');
    await eventually('node-a Ready again', async () => (await phaseOf('Node', 'node-a')) === 'Ready', 30_000, 200);
    expect(fs.readFileSync(`/proc/${again.pid}/cmdline`, 'utf8')).not.to.contain('--join-token');
    expect(await phaseOf('Instance', 'web')).to.equal('Running');
  });

  it('a join token is refused past its uses, and an expired one is refused, each with the reason', async () => {
    const once = await c.cairn(['token', 'create', '--cluster', 'demo', '--uses', '1']);
    expect(once.code, once.stderr).to.equal(0);
    expect(once.stderr).to.match(/join token \w+ for cluster demo: 1 use, expires/);
    const token = once.stdout.trim();
    const first = await joinWith(token, 'node-b', 6000);
    expect(first.stderr, 'still running when the timeout ended it').not.to.match(/^error:/m);
    expect(fs.existsSync(path.join(c.dir, 'agents', 'node-b', 'node-credential.json'))).to.equal(true);
    const second = await joinWith(token, 'node-c');
    expect(second.code).to.equal(1);
    expect(second.stderr).to.match(/has been used 1 of 1 times; create a new one with: cairn token create --cluster demo/);
    const short = (await c.cairn(['token', 'create', '--cluster', 'demo', '--ttl', '1s'])).stdout.trim();
    await new Promise((r) => setTimeout(r, 1500));
    const late = await joinWith(short, 'node-d');
    expect(late.code).to.equal(1);
    expect(late.stderr).to.match(/expired at .*create a new one with: cairn token create --cluster demo/);
  });

  it('an agent given the server but never joined, and no join token, exits saying how to join (not retrying unauthenticated)', async () => {
    const dataDir = path.join(c.dir, 'agents', 'node-e');
    const r = await runCairn(['agent', '--server', c.server.url, '--certificate-authority', ca(), '--cluster', 'demo', '--node-name', 'node-e', '--data-dir', dataDir, '--monitor-port', '0'], { timeoutMs: 20_000 });
    expect(r.code, r.stderr).to.equal(1);
    expect(r.stderr).to.include(`error: there is no node credential in ${dataDir}; join the node with a join token: cairn token create --cluster demo`);
  });
});

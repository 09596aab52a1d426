/**
 * Issue 7, acceptance 3 through the CLI: `cairn user create` issues a
 * token and a kubeconfig for a built-in role, cluster-wide or in one
 * Cluster; kubectl auth can-i agrees with what the server enforces; and
 * `cairn token revoke` ends a user's access at once.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { runCairn, startTestCluster, type TestCluster } from '../../support/cairn-cli.js';
import { Kubectl } from '../../support/kubectl.js';

const sleeper = (name: string, ns: string) => `apiVersion: cairn.dev/v1alpha1
kind: Instance
metadata: {name: ${name}, namespace: ${ns}}
spec: {driver: process, runState: Stopped, cpus: 1, memory: 64Mi, process: {command: [sleep, '60']}}
`;

describe('users and roles through cairn user create, cairn and kubectl (e2e)', function () {
  this.timeout(120_000);
  let c: TestCluster;
  const kubectls: Kubectl[] = [];
  const kubeconfigOf = (user: string) => path.join(c.dir, `${user}.kubeconfig`);
  const kubectlAs = (user: string) => {
    const k = new Kubectl(kubeconfigOf(user));
    kubectls.push(k);
    return k;
  };
  const cairnAs = (user: string, args: string[], stdin?: string) => runCairn([...args, '--kubeconfig', kubeconfigOf(user)], { stdin });

  before(async () => {
    c = await startTestCluster();
    await c.client.create('Cluster', { metadata: { name: 'other' }, spec: {} });
    for (const [user, role, cluster] of [['alice', 'operator', 'demo'], ['vic', 'viewer', undefined]] as const) {
      const r = await c.cairn(['user', 'create', user, '--role', role, ...(cluster ? ['--cluster', cluster] : []), '-o', kubeconfigOf(user)]);
      expect(r.code, r.stderr).to.equal(0);
      expect(r.stdout).to.match(new RegExp(`^user ${user} created: token \\w{10}, (cluster)?rolebinding\\.rbac\\.authorization\\.k8s\\.io/user:${user}:${role}`));
    }
  });
  after(async () => {
    for (const k of kubectls) k.cleanup();
    await c?.cleanup();
  });

  it('writes a 0600 kubeconfig whose context namespace is the Cluster the role is granted in', () => {
    expect(fs.statSync(kubeconfigOf('alice')).mode & 0o777).to.equal(0o600);
    expect(fs.readFileSync(kubeconfigOf('alice'), 'utf8')).to.match(/namespace: demo/);
  });

  it('an operator of demo writes in demo, is refused in other and on RBAC and tokens; kubectl auth can-i says the same', async () => {
    const k = kubectlAs('alice');
    const applied = await cairnAs('alice', ['apply', '-f', '-'], sleeper('mine', 'demo'));
    expect(applied.code, applied.stderr).to.equal(0);
    const refused = await cairnAs('alice', ['apply', '-f', '-'], sleeper('theirs', 'other'));
    expect(refused.code).to.equal(1);
    expect(refused.stderr).to.contain('Error from server (Forbidden)');
    expect(refused.stderr).to.contain('User "alice" cannot');
    const cases: [string[], boolean][] = [
      [['create', 'instances', '-n', 'demo'], true],
      [['delete', 'volumes', '-n', 'demo'], true],
      [['create', 'instances', '-n', 'other'], false],
      [['get', 'instances', '-n', 'other'], false],
      [['create', 'rolebindings', '-n', 'demo'], false],
      [['list', 'tokens'], false],
    ];
    for (const [args, allowed] of cases) {
      const r = await k.run(['auth', 'can-i', ...args]);
      expect(r.stdout.trim(), args.join(' ')).to.match(allowed ? /^yes$/ : /^no\b/);
      expect(r.code).to.equal(allowed ? 0 : 1);
    }
    const tokens = await k.run(['get', 'tokens']);
    expect(tokens.code).to.equal(1);
    expect(tokens.stderr).to.match(/tokens\.auth\.cairn\.dev is forbidden: User "alice" cannot list resource "tokens"/);
  });

  it('a cluster-wide viewer reads everywhere and every write is refused', async () => {
    const k = kubectlAs('vic');
    expect((await cairnAs('vic', ['get', 'instances', '-A'])).stdout).to.contain('mine');
    const del = await cairnAs('vic', ['delete', 'instance', 'mine', '-n', 'demo']);
    expect(del.code).to.equal(1);
    expect(del.stderr).to.contain('User "vic" cannot delete resource "instances"');
    expect((await k.run(['auth', 'can-i', 'watch', 'instances', '-n', 'other'])).stdout.trim()).to.equal('yes');
    expect((await k.run(['auth', 'can-i', 'patch', 'nodes', '-n', 'demo'])).stdout.trim()).to.match(/^no\b/);
  });

  it('cairn token revoke ends a user at its next request, with the reason', async () => {
    const id = /token: "?([a-z0-9]{10})\./.exec(fs.readFileSync(kubeconfigOf('vic'), 'utf8'))![1]!;
    const r = await c.cairn(['token', 'revoke', id]);
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.equal(`token.auth.cairn.dev/${id} revoked\n`);
    const after = await cairnAs('vic', ['get', 'instances', '-n', 'demo']);
    expect(after.code).to.equal(1);
    expect(after.stderr).to.match(new RegExp(`token ${id} was revoked`));
  });

  it('refuses to overwrite an existing kubeconfig (before any token is made) unless --force', async () => {
    const before = fs.readFileSync(kubeconfigOf('alice'), 'utf8');
    const tokens = async () => (await c.cairn(['get', 'tokens', '-o', 'name'])).stdout.trim().split('\n').length;
    const count = await tokens();
    const r = await c.cairn(['user', 'create', 'alice2', '--role', 'viewer', '-o', kubeconfigOf('alice')]);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.include(`${kubeconfigOf('alice')} exists; user create does not overwrite a file (it may hold other contexts)\nhint: pass -o with a new path, or --force to replace it`);
    expect(fs.readFileSync(kubeconfigOf('alice'), 'utf8')).to.equal(before);
    expect(await tokens(), 'no token was made').to.equal(count);
    const forced = await c.cairn(['user', 'create', 'alice2', '--role', 'viewer', '-o', kubeconfigOf('alice2'), '--force']);
    expect(forced.code, forced.stderr).to.equal(0);
    const again = await c.cairn(['user', 'create', 'alice2', '--role', 'viewer', '-o', kubeconfigOf('alice2'), '--force']);
    expect(again.code, again.stderr).to.equal(0);
  });

  it('an unknown role is refused with the roles there are', async () => {
    const r = await c.cairn(['user', 'create', 'bob', '--role', 'root']);
    expect(r.code).to.equal(1);
    expect(r.stderr).to.match(/"root" is not a built-in role\nhint: use one of admin, operator, viewer/);
  });
});

/**
 * Issue 15, acceptance 4 (garbage collection): ownerReferences honoured by
 * the controller's garbage collector, driven with stock kubectl against
 * `cairn server` (controller included): a dependent deleted once its
 * owner is (background, across kinds), `kubectl delete --cascade=foreground`
 * waiting for a blocking dependent, and `--cascade=orphan` leaving the
 * dependent without the reference.
 */
import { expect } from 'chai';
import { eventually } from '../support/eventually.js';
import { Kubectl } from '../support/kubectl.js';
import { startServerProcess, type ServerProcess } from '../support/server-process.js';

const HOLD = 'test.cairn.dev/hold';

describe('e2e: garbage collection by ownerReferences (cairn server with its controller, kubectl)', function () {
  this.timeout(90_000);
  let server: ServerProcess;
  let kubectl: Kubectl;

  const ok = (args: string[], stdin?: string) => kubectl.ok(args, stdin === undefined ? {} : { stdin });
  const exists = async (ref: string) => (await kubectl.run(['get', ref, '-n', 'gc', '-o', 'name'])).code === 0;
  const uidOf = async (ref: string) => (await ok(['get', ref, '-n', 'gc', '-o', 'jsonpath={.metadata.uid}'])).trim();
  const owned = (kind: string, name: string, owner: string, uid: string, extra = '') =>
    `apiVersion: ${kind === 'Instance' ? 'cairn.dev/v1alpha1' : 'v1'}\nkind: ${kind}\nmetadata:\n  name: ${name}\n  namespace: gc\n${extra}  ownerReferences:\n    - {apiVersion: v1, kind: ConfigMap, name: ${owner}, uid: ${uid}, blockOwnerDeletion: true}\n` +
    (kind === 'Instance' ? 'spec:\n  runState: Stopped\n  process:\n    command: ["/bin/true"]\n' : 'data:\n  a: b\n');
  const owner = async (name: string) => {
    await ok(['create', 'configmap', name, '-n', 'gc', '--from-literal=role=owner']);
    return uidOf(`configmap/${name}`);
  };

  before(async () => {
    server = await startServerProcess({ controller: true });
    kubectl = new Kubectl(server.kubeconfig);
    await ok(['create', 'namespace', 'gc']);
  });
  after(async () => {
    kubectl?.cleanup();
    await server?.cleanup();
  });

  it('background (the default): deleting the owner deletes its dependents, of any kind', async () => {
    const uid = await owner('owner-bg');
    await ok(['apply', '-f', '-'], owned('ConfigMap', 'dep-bg', 'owner-bg', uid));
    await ok(['apply', '-f', '-'], owned('Instance', 'inst-bg', 'owner-bg', uid));
    await ok(['delete', 'configmap', 'owner-bg', '-n', 'gc']);
    await eventually('the dependents collected', async () => !(await exists('configmap/dep-bg')) && !(await exists('instance/inst-bg')), 30_000, 200);
  });

  it('a dependent with an owner left is kept; one whose owner never existed (by uid) is collected', async () => {
    const uid = await owner('owner-keep');
    await ok(['apply', '-f', '-'], owned('ConfigMap', 'dep-keep', 'owner-keep', uid));
    await ok(['apply', '-f', '-'], owned('ConfigMap', 'dep-stray', 'owner-keep', '00000000-0000-0000-0000-000000000000'));
    await eventually('the stray collected', async () => !(await exists('configmap/dep-stray')), 30_000, 200);
    expect(await exists('configmap/dep-keep')).to.equal(true);
  });

  it('delete --cascade=foreground waits for a blocking dependent, then the owner goes', async () => {
    const uid = await owner('owner-fg');
    await ok(['apply', '-f', '-'], owned('ConfigMap', 'dep-fg', 'owner-fg', uid, `  finalizers: [${HOLD}]\n`));
    const deleting = kubectl.run(['delete', 'configmap', 'owner-fg', '-n', 'gc', '--cascade=foreground', '--timeout=60s'], { timeoutMs: 70_000 });
    await eventually('the dependent marked for deletion', async () => (await ok(['get', 'configmap/dep-fg', '-n', 'gc', '-o', 'jsonpath={.metadata.deletionTimestamp}'])).trim() !== '', 30_000, 200);
    const held = JSON.parse(await ok(['get', 'configmap/owner-fg', '-n', 'gc', '-o', 'json']));
    expect(held.metadata.finalizers).to.deep.equal(['foregroundDeletion']);
    expect(held.metadata.deletionTimestamp).to.be.a('string');
    let done = false;
    void deleting.then(() => (done = true));
    await new Promise((r) => setTimeout(r, 1500));
    expect(done, 'kubectl still waits while the blocking dependent exists').to.equal(false);
    await ok(['patch', 'configmap', 'dep-fg', '-n', 'gc', '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]']);
    const r = await deleting;
    expect(r.code, r.stderr).to.equal(0);
    expect(await exists('configmap/owner-fg')).to.equal(false);
    expect(await exists('configmap/dep-fg')).to.equal(false);
  });

  it('delete --cascade=orphan keeps the dependent, without the reference to the owner', async () => {
    const uid = await owner('owner-or');
    await ok(['apply', '-f', '-'], owned('ConfigMap', 'dep-or', 'owner-or', uid));
    await ok(['delete', 'configmap', 'owner-or', '-n', 'gc', '--cascade=orphan', '--timeout=30s']);
    expect(await exists('configmap/owner-or')).to.equal(false);
    expect((await ok(['get', 'configmap/dep-or', '-n', 'gc', '-o', 'jsonpath={.metadata.ownerReferences}'])).trim()).to.equal('');
  });
});

/**
 * Issue 15, acceptance 4: what GitOps pipelines ask of stock kubectl,
 * against a real `cairn server`. Its two ways of deleting what a manifest
 * set no longer names: `apply --prune -l` with kubectl's default allowlist
 * (which looks up Pods, Deployments, Services, ... — served as always-empty
 * kinds whose writes are refused with what to use instead), and ApplySet
 * pruning with a Secret as the set's parent. The round trip `get -o yaml
 * | apply -f -` of a List, which kubectl validates with /openapi/v2. And
 * drift: a field changed by `kubectl patch` belongs to kubectl-patch, so a
 * server-side apply setting it back conflicts, as in kube.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { useKubectlEnv } from '../support/kubectl-env.js';

const instance = (name: string, labels: Record<string, string>) => `apiVersion: cairn.dev/v1alpha1
kind: Instance
metadata:
  name: ${name}
  namespace: demo
  labels: ${JSON.stringify(labels)}
spec:
  runState: Stopped
  driver: process
  process:
    command: ["/bin/true"]
`;

describe('e2e: kubectl for GitOps (prune, ApplySets, get | apply) against cairn server', function () {
  this.timeout(60_000);
  const env = useKubectlEnv('cairn-prune-', { applyDemoCluster: true });
  const names = async (selector: string) => (await env.kubectl.ok(['get', 'instances', '-n', 'demo', '-l', selector, '-o', 'name'])).trim().split('\n').filter(Boolean).sort();
  const write = (dir: string, files: Record<string, string>) => {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
    for (const [f, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, f), text);
    return dir;
  };

  it('apply --prune -l runs with the default allowlist (the kinds Cairn does not run are found, and empty), and prunes Instances when allowlisted', async () => {
    const dir = path.join(env.tmp, 'prune');
    const labels = { set: 'prune' };
    await env.kubectl.ok(['apply', '--prune', '-l', 'set=prune', '-n', 'demo', '-f', write(dir, { 'a.yaml': instance('prune-a', labels), 'b.yaml': instance('prune-b', labels) })]);
    expect(await names('set=prune')).to.deep.equal(['instance.cairn.dev/prune-a', 'instance.cairn.dev/prune-b']);
    write(dir, { 'a.yaml': instance('prune-a', labels) });
    const defaults = await env.kubectl.run(['apply', '--prune', '-l', 'set=prune', '-n', 'demo', '-f', dir]);
    expect(defaults.code, defaults.stderr).to.equal(0);
    expect(await names('set=prune'), 'kube prunes only allowlisted kinds: Instances are not in the default list').to.have.length(2);
    const out = await env.kubectl.ok(['apply', '--prune', '-l', 'set=prune', '-n', 'demo', '--prune-allowlist=cairn.dev/v1alpha1/Instance', '-f', dir]);
    expect(out).to.include('instance.cairn.dev/prune-b pruned');
    expect(await names('set=prune')).to.deep.equal(['instance.cairn.dev/prune-a']);
  });

  it('ApplySet pruning with a Secret parent: the set is recorded on the Secret, and an Instance dropped from it is pruned', async () => {
    const dir = path.join(env.tmp, 'applyset');
    const run = (args: string[]) => env.kubectl.run(args, { env: { KUBECTL_APPLYSET: 'true' } });
    const apply = () => run(['apply', '-n', 'demo', '--prune', '--applyset=secret/web-set', '-f', dir]);
    write(dir, { 'a.yaml': instance('set-a', { app: 'set' }), 'b.yaml': instance('set-b', { app: 'set' }) });
    const first = await apply();
    expect(first.code, first.stderr).to.equal(0);
    const parent = JSON.parse(await env.kubectl.ok(['get', 'secret', 'web-set', '-n', 'demo', '-o', 'json']));
    expect(parent.metadata.annotations['applyset.kubernetes.io/contains-group-kinds']).to.equal('Instance.cairn.dev');
    const id = parent.metadata.labels['applyset.kubernetes.io/id'];
    expect(await names(`applyset.kubernetes.io/part-of=${id}`)).to.deep.equal(['instance.cairn.dev/set-a', 'instance.cairn.dev/set-b']);
    write(dir, { 'a.yaml': instance('set-a', { app: 'set' }) });
    const second = await apply();
    expect(second.code, second.stderr).to.equal(0);
    expect(second.stdout).to.include('instance.cairn.dev/set-b pruned');
    expect(await names('app=set')).to.deep.equal(['instance.cairn.dev/set-a']);
  });

  it('writing a kind Cairn does not run is refused with what to use instead', async () => {
    const r = await env.kubectl.run(['create', 'deployment', 'web', '--image=nginx', '-n', 'demo']);
    expect(r.code).to.not.equal(0);
    expect(r.stderr).to.include('Deployment is not served: Cairn runs no Pods or workload controllers: describe the program as an Instance');
    expect((await env.kubectl.ok(['get', 'pods,deploy,svc,pvc', '-n', 'demo', '-o', 'name'])).trim()).to.equal('');
  });

  it('get -o yaml | apply -f - of a List: validated through /openapi/v2, applied, and refused by the server with the field path when wrong', async () => {
    await env.kubectl.ok(['apply', '-f', '-'], { stdin: instance('trip', { app: 'trip' }) });
    const listed = await env.kubectl.ok(['get', 'instances', '-n', 'demo', '-l', 'app=trip', '-o', 'yaml']);
    expect(YAML_LIST.test(listed)).to.equal(true);
    const again = await env.kubectl.run(['apply', '-f', '-'], { stdin: listed });
    expect(again.code, again.stderr).to.equal(0);
    expect(again.stdout).to.match(/instance\.cairn\.dev\/trip (unchanged|configured)/);
    const relisted = await env.kubectl.ok(['get', 'instances', '-n', 'demo', '-l', 'app=trip', '-o', 'yaml']);
    const bad = await env.kubectl.run(['apply', '-f', '-'], { stdin: relisted.replace('runState: Stopped', 'runState: Sideways') });
    expect(bad.code).to.not.equal(0);
    expect(bad.stderr).to.include('spec.runState');
    const replaced = await env.kubectl.ok(['replace', '-f', '-'], { stdin: await env.kubectl.ok(['get', 'instances', '-n', 'demo', '-l', 'app=trip', '-o', 'json']) });
    expect(replaced).to.include('instance.cairn.dev/trip replaced');
  });

  it('apply --server-side conflicts after kubectl patch changed a field it applied, names the patcher, and takes it with --force-conflicts', async () => {
    const manifest = instance('drift', { app: 'drift' });
    await env.kubectl.ok(['apply', '--server-side', '-f', '-'], { stdin: manifest });
    await env.kubectl.ok(['patch', 'instance', 'drift', '-n', 'demo', '--type=merge', '-p', '{"spec":{"runState":"Running"}}']);
    const owners = JSON.parse(await env.kubectl.ok(['get', 'instance', 'drift', '-n', 'demo', '-o', 'json', '--show-managed-fields'])).metadata.managedFields;
    expect(owners.map((m: { manager: string; operation: string }) => `${m.manager}/${m.operation}`)).to.deep.equal(['kubectl/Apply', 'kubectl-patch/Update']);
    const conflicted = await env.kubectl.run(['apply', '--server-side', '-f', '-'], { stdin: manifest });
    expect(conflicted.code).to.not.equal(0);
    expect(conflicted.stderr).to.include('conflict with "kubectl-patch": .spec.runState');
    await env.kubectl.ok(['apply', '--server-side', '--force-conflicts', '-f', '-'], { stdin: manifest });
    expect(await env.kubectl.ok(['get', 'instance', 'drift', '-n', 'demo', '-o', 'jsonpath={.spec.runState}'])).to.equal('Stopped');
  });

  it('apply --server-side merges an associative list (x-kubernetes-list-map-keys) item by item between field managers', async () => {
    const withEnv = (name: string, value: string) => `${instance('shared-env', { app: 'env' })}    env:\n      - {name: ${name}, value: ${value}}\n`;
    await env.kubectl.ok(['apply', '--server-side', '--field-manager=team-a', '-f', '-'], { stdin: withEnv('A', 'one') });
    await env.kubectl.ok(['apply', '--server-side', '--field-manager=team-b', '-f', '-'], { stdin: withEnv('B', 'two') });
    const envs = JSON.parse(await env.kubectl.ok(['get', 'instance', 'shared-env', '-n', 'demo', '-o', 'jsonpath={.spec.process.env}']));
    expect(envs).to.deep.equal([{ name: 'A', value: 'one' }, { name: 'B', value: 'two' }]);
    const clash = await env.kubectl.run(['apply', '--server-side', '--field-manager=team-b', '-f', '-'], { stdin: withEnv('A', 'three') });
    expect(clash.stderr).to.include('conflict with "team-a"');
  });
});

const YAML_LIST = /^apiVersion: v1\nitems:\n/;

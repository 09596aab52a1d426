/**
 * Acceptance 1 of issue 2, second part: stock kubectl's editing verbs against
 * a real `cairn server` — label, annotate, merge / JSON / status patches and
 * their effect on `metadata.generation`, server-side apply (create, re-apply,
 * pruning of a field the manifest stopped sending), `delete` waiting until
 * the object is gone, and finalizers holding a deleted object.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import YAML from 'yaml';
import { eventually, sleep } from '../support/eventually.js';
import { useKubectlEnv } from '../support/kubectl-env.js';

const instance = (name: string, spec: Record<string, unknown> = {}, metadata: Record<string, unknown> = {}) => ({
  apiVersion: 'cairn.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name, namespace: 'demo', ...metadata },
  spec: { cpus: 1, memory: '32Mi', process: { command: ['/bin/sleep', '3600'] }, ...spec },
});

describe('kubectl e2e: label, annotate, patch, server-side apply, delete, finalizers', function () {
  this.timeout(60_000);
  const env = useKubectlEnv('cairn-kubectl-edit-', { applyDemoCluster: true });

  const write = (obj: { metadata: { name: string } }, suffix = '') => {
    const p = path.join(env.tmp, `${obj.metadata.name}${suffix}.yaml`);
    fs.writeFileSync(p, YAML.stringify(obj));
    return p;
  };
  const jsonpath = (name: string, expr: string) => env.kubectl.ok(['get', 'instance', name, '-n', 'demo', '-o', `jsonpath={${expr}}`]);
  const generation = (name: string) => jsonpath(name, '.metadata.generation');
  const onInstance = (verb: string, name: string, ...args: string[]) => env.kubectl.ok([verb, 'instance', name, '-n', 'demo', ...args]);
  async function expectGone(name: string): Promise<void> {
    const r = await env.kubectl.run(['get', 'instance', name, '-n', 'demo']);
    expect(r.code, `get ${name}: ${r.stdout}`).to.equal(1);
    expect(r.stderr).to.contain('NotFound');
  }
  const removeFinalizers = (name: string) => onInstance('patch', name, '--type=json', '-p', '[{"op":"remove","path":"/metadata/finalizers"}]');

  it('kubectl label, annotate, patch --type=merge|json and --subresource=status work; only spec changes bump generation', async () => {
    const name = 'patch-1';
    await env.kubectl.ok(['create', '-f', write(instance(name))]);
    expect(await generation(name)).to.equal('1');

    expect(await onInstance('label', name, 'tier=web')).to.contain(`instance.cairn.dev/${name} labeled`);
    expect(await jsonpath(name, '.metadata.labels.tier')).to.equal('web');
    expect(await generation(name), 'label must not bump generation').to.equal('1');

    expect(await onInstance('annotate', name, 'example.com/note=hello')).to.contain(`instance.cairn.dev/${name} annotated`);
    expect(await jsonpath(name, '.metadata.annotations.example\\.com/note')).to.equal('hello');
    expect(await generation(name), 'annotate must not bump generation').to.equal('1');

    expect(await onInstance('patch', name, '--type=merge', '-p', '{"spec":{"memory":"64Mi"}}')).to.contain(`instance.cairn.dev/${name} patched`);
    expect(await jsonpath(name, '.spec.memory')).to.equal('64Mi');
    expect(await generation(name)).to.equal('2');

    await onInstance('patch', name, '--type=json', '-p', '[{"op":"replace","path":"/spec/cpus","value":3},{"op":"add","path":"/metadata/labels/json","value":"yes"}]');
    expect(await jsonpath(name, '.spec.cpus')).to.equal('3');
    expect(await jsonpath(name, '.metadata.labels.json')).to.equal('yes');
    expect(await generation(name)).to.equal('3');

    const status = '{"status":{"phase":"Running","restarts":2}}';
    expect(await onInstance('patch', name, '--subresource=status', '--type=merge', '-p', status)).to.contain(`instance.cairn.dev/${name} patched`);
    expect(await jsonpath(name, '.status.phase')).to.equal('Running');
    expect(await jsonpath(name, '.status.restarts')).to.equal('2');
    expect(await generation(name), 'a status write must not bump generation').to.equal('3');

    expect(await onInstance('label', name, 'tier-')).to.contain(`instance.cairn.dev/${name} unlabeled`);
    expect(await jsonpath(name, '.metadata.labels')).not.to.contain('tier');
    expect(await generation(name)).to.equal('3');
  });

  it('kubectl apply --server-side creates, re-applies, and prunes fields removed from the manifest', async () => {
    const name = 'ssa-1';
    const full = instance(name, { cpus: 2, placement: { antiAffinityGroup: 'g1' } }, { labels: { team: 'a', extra: 'x' } });
    expect(await env.kubectl.ok(['apply', '--server-side', '-f', write(full)])).to.contain(`instance.cairn.dev/${name} serverside-applied`);
    expect(await jsonpath(name, '.spec.placement.antiAffinityGroup')).to.equal('g1');
    expect(await jsonpath(name, '.metadata.labels.extra')).to.equal('x');
    expect(await generation(name)).to.equal('1');

    expect(await env.kubectl.ok(['apply', '--server-side', '-f', write(full)])).to.contain(`instance.cairn.dev/${name} serverside-applied`);
    expect(await generation(name), 'an identical re-apply changes nothing').to.equal('1');

    const trimmed = instance(name, { cpus: 2 }, { labels: { team: 'a' } });
    expect(await env.kubectl.ok(['apply', '--server-side', '-f', write(trimmed, '-trimmed')])).to.contain(`instance.cairn.dev/${name} serverside-applied`);
    expect(await jsonpath(name, '.metadata.labels.extra'), 'label dropped from the manifest').to.equal('');
    expect(await jsonpath(name, '.metadata.labels.team')).to.equal('a');
    expect(await jsonpath(name, '.spec.placement.antiAffinityGroup'), 'field dropped from the manifest').to.equal('');
    // kube-apiserver (structured-merge-diff) also removes the struct no manager owns any more.
    expect(await jsonpath(name, '.spec.placement'), 'spec.placement is owned by nobody after the re-apply').to.equal('');
    expect(await jsonpath(name, '.spec.cpus')).to.equal('2');
    expect(await generation(name)).to.equal('2');
  });

  it('kubectl delete waits until the object is gone', async () => {
    await env.kubectl.ok(['create', '-f', write(instance('del-1'))]);
    expect(await onInstance('delete', 'del-1')).to.contain('instance.cairn.dev "del-1" deleted');
    await expectGone('del-1');

    // With a finalizer holding the object, delete must keep waiting until it is removed.
    await env.kubectl.ok(['create', '-f', write(instance('del-2', {}, { finalizers: ['example.com/hold'] }))]);
    let settled = false;
    const deletion = env.kubectl.run(['delete', 'instance', 'del-2', '-n', 'demo', '--timeout=50s']).finally(() => (settled = true));
    await eventually('del-2 to get a deletionTimestamp', async () => (await jsonpath('del-2', '.metadata.deletionTimestamp')) !== '');
    await sleep(1000);
    expect(settled, 'kubectl delete returned while a finalizer still held the object').to.equal(false);
    await removeFinalizers('del-2');
    const r = await deletion;
    expect(r.code, r.stderr).to.equal(0);
    expect(r.stdout).to.contain('instance.cairn.dev "del-2" deleted');
    await expectGone('del-2');
  });

  it('an object with a finalizer stays, with deletionTimestamp, until the finalizer is removed', async () => {
    const name = 'fin-1';
    await env.kubectl.ok(['create', '-f', write(instance(name, {}, { finalizers: ['example.com/hold'] }))]);
    expect(await onInstance('delete', name, '--wait=false')).to.contain(`instance.cairn.dev "${name}" deleted`);

    expect(await jsonpath(name, '.metadata.deletionTimestamp')).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(await jsonpath(name, '.metadata.deletionGracePeriodSeconds')).to.equal('0');
    expect(JSON.parse(await jsonpath(name, '.metadata.finalizers'))).to.deep.equal(['example.com/hold']);

    expect(await removeFinalizers(name)).to.contain(`instance.cairn.dev/${name} patched`);
    await eventually(`${name} to disappear`, async () => (await env.kubectl.run(['get', 'instance', name, '-n', 'demo'])).code === 1);
    await expectGone(name);
  });
});

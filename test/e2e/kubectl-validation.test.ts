/**
 * Acceptance 2 of issue 2: stock kubectl `apply` of an invalid manifest is
 * rejected with a message naming the field path, and nothing is written.
 * kubectl leaves validation to the server (the OpenAPI v3 patch operation
 * declares `fieldValidation`), so these messages are the apiserver's
 * `Invalid` / `BadRequest` Status as kubectl prints it.
 */
import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import YAML from 'yaml';
import { CRD_DIR } from '../support/paths.js';
import { useKubectlEnv } from '../support/kubectl-env.js';

const instance = (name: string, spec?: Record<string, unknown>) => ({
  apiVersion: 'cairn.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name, namespace: 'demo' },
  ...(spec ? { spec } : {}),
});
const sleeper = { command: ['/bin/sleep', '3600'] };

describe('kubectl e2e: invalid manifests are rejected by kubectl apply', function () {
  this.timeout(60_000);
  const env = useKubectlEnv('cairn-kubectl-invalid-', { applyDemoCluster: true });

  /** Applies one object; expects exit 1 with every fragment in stderr and the object absent afterwards. */
  async function rejected(obj: ReturnType<typeof instance>, ...fragments: string[]): Promise<string> {
    const file = path.join(env.tmp, `${obj.metadata.name}.yaml`);
    fs.writeFileSync(file, YAML.stringify(obj));
    const r = await env.kubectl.run(['apply', '-f', file]);
    expect(r.code, `kubectl apply should fail:\n${r.stdout}${r.stderr}`).to.equal(1);
    expect(r.stdout).not.to.contain('created');
    for (const f of fragments) expect(r.stderr).to.contain(f);
    const get = await env.kubectl.run(['get', 'instance', obj.metadata.name, '-n', 'demo']);
    expect(get.code, `${obj.metadata.name} should not exist:\n${get.stdout}`).to.equal(1);
    expect(get.stderr).to.contain('NotFound');
    return r.stderr;
  }

  it('wrong type: spec.cpus "two" is Invalid at spec.cpus', async () => {
    await rejected(instance('bad-type', { cpus: 'two', process: sleeper }), 'The Instance "bad-type" is invalid', 'spec.cpus', 'integer');
  });

  it('missing required field: spec.process.command is a Required value', async () => {
    const spec = YAML.parse(fs.readFileSync(path.join(CRD_DIR, 'instance.yaml'), 'utf8')).spec.versions[0].schema.openAPIV3Schema.properties.spec;
    expect(spec.properties.process.required).to.include('command');
    await rejected(instance('bad-required', { process: { args: ['x'] } }), 'The Instance "bad-required" is invalid', 'spec.process.command: Required value');
  });

  it('missing required field: an Instance without spec is Invalid at spec', async () => {
    await rejected(instance('bad-nospec'), 'The Instance "bad-nospec" is invalid', 'spec: Required value');
  });

  it('unknown field: spec.bogus is rejected as unknown field "spec.bogus"', async () => {
    await rejected(instance('bad-unknown', { bogus: 1, process: sleeper }), 'unknown field "spec.bogus"');
  });

  it('bad name: Bad_Name is Invalid at metadata.name', async () => {
    await rejected(instance('Bad_Name', { process: sleeper }), 'The Instance "Bad_Name" is invalid', 'metadata.name', 'Invalid value: "Bad_Name"');
  });
});

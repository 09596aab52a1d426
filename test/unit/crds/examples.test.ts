/**
 * examples/*.yaml is what the README tells users to `kubectl apply -f`: every
 * object in it must be admitted, under fieldValidation=Strict, by the
 * definition crds/ gives its kind, and must read the same to kubectl as to Cairn.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { loadCrds } from '../../../apiserver/crd-loader.js';
import { ApiError } from '../../../apiserver/errors.js';
import { groupVersion, type ResourceDefinition } from '../../../apiserver/resources.js';
import type { KubeObject } from '../../../apiserver/storage/codec.js';
import { compileValidator, createAjv } from '../../../apiserver/validation/schema-validator.js';
import { admitObject } from '../../../apiserver/validation/validate-object.js';
import { CRD_DIR, EXAMPLES_DIR } from '../../support/paths.js';
import { parseYaml, yamlReadingViolations, type Violation } from './crd-rules.js';

/** Why `obj` would not be created as written: wrong apiVersion or namespace for its kind, or not admitted under Strict. */
function admissionProblems(obj: KubeObject, defs: ResourceDefinition[]): Violation[] {
  const def = defs.find((d) => d.kind === obj.kind);
  if (!def) return [`no CRD in crds/ defines kind ${JSON.stringify(obj.kind)}`];
  const problems: Violation[] = [];
  if (obj.apiVersion !== groupVersion(def)) problems.push(`apiVersion: ${JSON.stringify(obj.apiVersion)}, want ${groupVersion(def)}`);
  if (def.namespaced && !obj.metadata?.namespace) problems.push(`metadata.namespace: unset, but ${def.kind} is namespaced`);
  if (!def.namespaced && obj.metadata?.namespace) problems.push(`metadata.namespace: set, but ${def.kind} is cluster-scoped`);
  try {
    problems.push(...admitObject(def, compileValidator(createAjv(), def.schema), structuredClone(obj), 'Strict'));
  } catch (err) {
    if (!(err instanceof ApiError)) throw err;
    problems.push(`${err.code} ${err.reason}: ${err.message}`, ...(err.details?.causes ?? []).map((c) => `  ${c.field ?? ''}: ${c.message}`));
  }
  return problems;
}

function expectNone(problems: Violation[]): void {
  if (problems.length > 0) expect.fail(`${problems.length} problem(s):\n      ${problems.join('\n      ')}`);
}

function name(obj: KubeObject): string {
  return [obj.metadata?.namespace, obj.metadata?.name].filter(Boolean).join('/');
}

describe('examples/', () => {
  let defs: ResourceDefinition[];
  before(() => {
    defs = loadCrds(CRD_DIR);
  });

  const files = fs.readdirSync(EXAMPLES_DIR).filter((f) => /\.ya?ml$/.test(f)).sort();
  for (const file of files) {
    describe(`examples/${file}`, () => {
      const text = fs.readFileSync(path.join(EXAMPLES_DIR, file), 'utf8');
      it('parses, and kubectl (YAML 1.1) reads it as Cairn (YAML 1.2) does', () => expectNone(yamlReadingViolations(text)));

      for (const obj of parseYaml(text).docs as KubeObject[]) {
        it(`${obj.kind} ${name(obj)} is admitted under fieldValidation=Strict`, () => expectNone(admissionProblems(obj, defs)));
      }
    });
  }

  it('holds objects to check', () => {
    const count = files.reduce((n, f) => n + parseYaml(fs.readFileSync(path.join(EXAMPLES_DIR, f), 'utf8')).docs.length, 0);
    expect(count).to.be.greaterThan(0);
  });

  describe('the admission check rejects broken objects', () => {
    const cases: [name: string, obj: KubeObject, problems: (string | RegExp)[]][] = [
      [
        'an unknown field',
        { apiVersion: 'cairn.dev/v1alpha1', kind: 'Volume', metadata: { name: 'data', namespace: 'demo' }, spec: { size: '1Gi', sise: '2Gi' } },
        [/^400 BadRequest: Volume in version "v1alpha1" cannot be handled as a Volume: strict decoding error: unknown field "spec\.sise"$/, '  spec.sise: unknown field "spec.sise"'],
      ],
      [
        'an invalid value',
        { apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name: 'web', namespace: 'demo' }, spec: { cpus: 0 } },
        [/^422 Invalid: Instance\.cairn\.dev "web" is invalid: spec\.cpus: /, /^ {2}spec\.cpus: Invalid value: 0: /],
      ],
      [
        'a namespaced kind without a namespace, under the wrong apiVersion',
        { apiVersion: 'cairn.dev/v1', kind: 'Node', metadata: { name: 'node-a' } },
        ['apiVersion: "cairn.dev/v1", want cairn.dev/v1alpha1', 'metadata.namespace: unset, but Node is namespaced'],
      ],
      ['a cluster-scoped kind in a namespace', { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: 'demo', namespace: 'demo' } }, ['metadata.namespace: set, but Cluster is cluster-scoped']],
      ['an unknown kind', { apiVersion: 'cairn.dev/v1alpha1', kind: 'Widget', metadata: { name: 'w' } }, ['no CRD in crds/ defines kind "Widget"']],
    ];
    for (const [caseName, obj, expected] of cases) {
      it(caseName, () => {
        const problems = admissionProblems(obj, defs);
        const matches = problems.length === expected.length && expected.every((e, i) => (typeof e === 'string' ? e === problems[i] : e.test(problems[i]!)));
        if (!matches) expect(problems).to.deep.equal(expected);
      });
    }
  });
});

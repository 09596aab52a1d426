/**
 * crds/*.yaml must install unchanged into a real Kubernetes cluster: kube's
 * structural-schema and CRD validation rules, checked here without a
 * kube-apiserver, plus Cairn's own. One test per CRD per rule group, so a
 * failure names the file, the rule and every offending field path; and one
 * test per rule group feeding a hand-made broken input to the same check.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import path from 'node:path';
import { crdToDefinitions, loadCrds } from '../../../apiserver/crd-loader.js';
import type { JSONSchemaProps, PrinterColumn, ResourceDefinition } from '../../../apiserver/resources.js';
import { CRD_DIR } from '../../support/paths.js';
import {
  crdFromYaml,
  defaultAndPatternViolations,
  identityViolations,
  listItemDefaultViolations,
  listTypeViolations,
  printerColumnViolations,
  selectableFieldViolations,
  structureViolations,
  typeViolations,
  yamlReadingViolations,
  type RawCrd,
  type Violation,
} from './crd-rules.js';

/** One file of crds/, read once. */
interface CrdFile {
  file: string;
  text: string;
  crd?: RawCrd;
  problems: Violation[];
}

/** A served version: its definition (as the apiserver loads it) and what the definition drops. */
interface Served {
  def: ResourceDefinition;
  selectableFields?: { jsonPath: string }[];
}

const KINDS = ['Cluster', 'Instance', 'Node', 'Volume', 'WorkItem'];

const GROUPS: [group: string, check: (c: CrdFile) => Violation[]][] = [
  ['YAML: kubectl (YAML 1.1) reads it as Cairn (YAML 1.2) does', (c) => yamlReadingViolations(c.text)],
  ['identity: <plural>.cairn.dev, one served and stored v1alpha1, status subresource, category cairn, short names, scope', (c) => [...c.problems, ...(c.crd ? identityViolations(c.crd) : [])]],
  ['types: every field has a type and a description; metadata declares only name/generateName', perVersion(({ def }) => typeViolations(def.schema))],
  ['structure: properties xor additionalProperties, required, enum types, items and properties where they belong', perVersion(({ def }) => structureViolations(def.schema))],
  ['list types: map lists keyed by required scalar item fields, sets of scalars', perVersion(({ def }) => listTypeViolations(def.schema))],
  ['defaults and patterns: patterns compile, every default validates against its schema', perVersion(({ def }) => defaultAndPatternViolations(def.schema))],
  ['no default inside list items', perVersion(({ def }) => listItemDefaultViolations(def.schema))],
  ['printer columns: described, resolve to a field of their type, Age last', perVersion(({ def }) => printerColumnViolations(def.printerColumns, def.schema))],
  ['selectable fields: resolve to string, integer or boolean fields', perVersion(({ def, selectableFields }) => selectableFieldViolations(selectableFields, def.schema))],
];

/** Runs a check on every served version (prefixing the version when there are several). */
function perVersion(check: (v: Served) => Violation[]): (c: CrdFile) => Violation[] {
  return (c) => {
    if (!c.crd) return ['no CustomResourceDefinition to check (see the identity test)'];
    const raw = c.crd.spec.versions.filter((v) => v.served);
    const served = crdToDefinitions(c.crd).map((def, i) => ({ def, selectableFields: raw[i]?.selectableFields }));
    return served.flatMap((v) => check(v).map((violation) => (served.length > 1 ? `${v.def.version}: ${violation}` : violation)));
  };
}

function readCrdFiles(): CrdFile[] {
  return fs
    .readdirSync(CRD_DIR)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .map((file) => {
      const text = fs.readFileSync(path.join(CRD_DIR, file), 'utf8');
      return { file, text, ...crdFromYaml(text) };
    });
}

/** Fails listing every violation, one per line. */
function expectNone(violations: Violation[]): void {
  if (violations.length > 0) expect.fail(`${violations.length} violation(s):\n      ${violations.join('\n      ')}`);
}

describe('crds/', () => {
  it(`defines exactly ${KINDS.join(', ')}`, () => {
    expect(loadCrds(CRD_DIR).map((d) => d.kind).sort()).to.deep.equal(KINDS);
  });

  for (const c of readCrdFiles()) {
    describe(`crds/${c.file} (${c.crd?.spec.names.kind ?? 'not a CRD'})`, () => {
      for (const [group, check] of GROUPS) {
        it(group, () => expectNone(check(c)));
      }
    });
  }
});

describe('the CRD checks reject broken input', () => {
  const str = (extra: JSONSchemaProps = {}): JSONSchemaProps => ({ type: 'string', description: 'd', ...extra });
  const obj = (properties: Record<string, JSONSchemaProps>, extra: JSONSchemaProps = {}): JSONSchemaProps => ({ type: 'object', description: 'd', properties, ...extra });
  const arr = (items: JSONSchemaProps, extra: JSONSchemaProps = {}): JSONSchemaProps => ({ type: 'array', description: 'd', items, ...extra });

  const schemaCases: [group: string, check: (s: JSONSchemaProps) => Violation[], schema: JSONSchemaProps, violations: (string | RegExp)[]][] = [
    [
      'types',
      typeViolations,
      {
        type: 'object',
        properties: {
          metadata: { type: 'object', description: 'not allowed', properties: { name: { type: 'string' }, labels: { type: 'object' } } },
          spec: obj({ untyped: { description: 'd' }, bare: { type: 'string' }, port: { type: 'string', description: 'd', 'x-kubernetes-int-or-string': true } }),
          items: arr({ type: 'null', description: 'd' }),
        },
      },
      [
        '<root>: no description',
        'metadata: may only have type and properties, not description',
        'metadata.labels: only name and generateName may be declared',
        'spec.untyped: no type (nor x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields)',
        'spec.bare: no description',
        'spec.port: x-kubernetes-int-or-string must not have a type',
        'items[*]: type "null" is not one of object, array, string, integer, number, boolean',
      ],
    ],
    [
      'structure',
      structureViolations,
      obj(
        {
          both: obj({ a: str() }, { additionalProperties: str() }),
          closed: { type: 'object', description: 'd', additionalProperties: false },
          list: { type: 'array', description: 'd' },
          word: str({ enum: ['a', 1], items: str(), uniqueItems: true, $ref: '#/definitions/x' }),
          count: { type: 'integer', description: 'd', enum: [1, 1.5], properties: {} },
        },
        { required: ['both', 'missing'] },
      ),
      [
        '<root>: requires "missing", which is not a property',
        'both: has both properties and additionalProperties',
        'closed: additionalProperties cannot be false',
        'list: array without items',
        'word: $ref is not supported in a CRD schema',
        'word: uniqueItems cannot be true',
        'word: enum value 1 is not of type string',
        'word: items on type "string", only arrays have items',
        'count: enum value 1.5 is not of type integer',
        'count: properties on type "integer", only objects have properties',
      ],
    ],
    [
      'list types',
      listTypeViolations,
      obj({
        env: arr(obj({ name: str(), value: str(), nested: obj({}) }, { required: ['name', 'nested'] }), {
          'x-kubernetes-list-type': 'map',
          'x-kubernetes-list-map-keys': ['name', 'value', 'nested', 'gone', 'name'],
        }),
        keyless: arr(obj({ name: str() }), { 'x-kubernetes-list-type': 'map' }),
        scalars: arr(str(), { 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['name'] }),
        tags: arr(obj({}), { 'x-kubernetes-list-type': 'set' }),
        bag: arr(str(), { 'x-kubernetes-list-type': 'bag' }),
        keys: arr(str(), { 'x-kubernetes-list-map-keys': ['a'] }),
        word: str({ 'x-kubernetes-list-type': 'atomic' }),
      }),
      [
        'env: map key "value" is neither required nor defaulted',
        'env: map key "nested" is not a scalar but "object"',
        'env: map key "gone" is not a property of the items',
        'env: map key "name" is listed twice',
        'keyless: x-kubernetes-list-type map without x-kubernetes-list-map-keys',
        'scalars: x-kubernetes-list-type map needs object items, not "string"',
        'tags: a set holds scalars, not "object" items',
        'bag: x-kubernetes-list-type "bag" is not one of atomic, set, map',
        'keys: x-kubernetes-list-map-keys without x-kubernetes-list-type map',
        'word: x-kubernetes-list-type on type "string", only arrays have one',
      ],
    ],
    [
      'defaults and patterns',
      defaultAndPatternViolations,
      obj({
        memory: str({ pattern: '^[0-9]+(Mi|Gi)$', default: 'lots' }),
        cpus: { type: 'integer', description: 'd', minimum: 1, default: 0 },
        mode: str({ enum: ['A', 'B'], default: 'C' }),
        options: obj({ a: str() }, { default: { a: 'x', extra: 1 } }),
        // kube validates a default as written: nested defaults do not fill in required fields
        nested: obj({ a: str({ default: 'x' }) }, { required: ['a'], default: {} }),
        unclosed: str({ pattern: '(ab' }),
        lookahead: str({ pattern: '^(?!x)' }),
      }),
      [
        /^<root>: the apiserver's validator cannot compile the schema: .*\(ab/,
        'memory: default "lots" is invalid: Invalid value: "lots": memory in body should match \'^[0-9]+(Mi|Gi)$\'',
        'cpus: default 0 is invalid: Invalid value: 0: cpus in body should be greater than or equal to 1',
        'mode: default "C" is invalid: Unsupported value: "C": supported values: "A", "B"',
        'options: default {"a":"x","extra":1} has unknown fields options.extra',
        'nested: default {} is invalid: nested.a: Required value',
        /^unclosed: pattern "\(ab" does not compile: /,
        'lookahead: pattern "^(?!x)" uses lookaround or backreferences, which Go\'s RE2 (kube) lacks',
      ],
    ],
    [
      'no default inside list items',
      listItemDefaultViolations,
      obj({
        volumes: arr(obj({ readOnly: { type: 'boolean', description: 'd', default: false } }, { default: {} }), { default: [] }),
        matrix: arr(arr(str({ default: 'x' }))),
        // defaults outside list items are fine
        settings: obj({ mode: str({ default: 'x' }) }, { default: {} }),
      }),
      [
        'volumes[*]: default {} inside the list items volumes[*] (client-side kubectl apply would report every re-apply as configured)',
        'volumes[*].readOnly: default false inside the list items volumes[*] (client-side kubectl apply would report every re-apply as configured)',
        'matrix[*][*]: default "x" inside the list items matrix[*][*] (client-side kubectl apply would report every re-apply as configured)',
      ],
    ],
  ];
  for (const [group, check, schema, violations] of schemaCases) {
    it(group, () => expectViolations(check(schema), violations));
  }

  const status = obj({
    phase: str(),
    count: { type: 'integer', description: 'd' },
    ratio: { type: 'number', description: 'd' },
    tags: arr(str()),
    conditions: arr(obj({ type: str(), status: str() })),
  });
  const schema = obj({ spec: obj({ name: str(), ratio: { type: 'number', description: 'd' }, tags: arr(str()) }), status });

  it('printer columns', () => {
    const columns: PrinterColumn[] = [
      { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
      { name: 'Count', type: 'string', jsonPath: '.status.count', description: 'd' },
      { name: 'Ready', type: 'string', jsonPath: '.status.conditions[?(@.kind=="Ready")].status', description: 'd' },
      { name: 'First', type: 'string', jsonPath: '.status.phase[0]', description: 'd' },
      { name: 'Gone', type: 'string', jsonPath: '.spec.gone', description: 'd' },
      { name: 'Created', type: 'date', jsonPath: '.metadata.creationTimestamp', description: 'd' },
      { name: 'Named', type: 'date', jsonPath: '.metadata.name', description: 'd' },
    ];
    expectViolations(printerColumnViolations(columns, schema), [
      'additionalPrinterColumns: the last column is Named (.metadata.name, date), want Age (.metadata.creationTimestamp, date)',
      'additionalPrinterColumns[0] (Phase): no description',
      'additionalPrinterColumns[1] (Count): type string, but .status.count is integer',
      'additionalPrinterColumns[2] (Ready): jsonPath .status.conditions[?(@.kind=="Ready")].status does not resolve: .status.conditions items have no field "kind" to filter on',
      'additionalPrinterColumns[3] (First): jsonPath .status.phase[0] does not resolve: .status.phase is not a list',
      'additionalPrinterColumns[4] (Gone): jsonPath .spec.gone does not resolve: .spec has no field "gone"',
      'additionalPrinterColumns[6] (Named): type date, but .metadata.name is string',
    ]);
  });

  it('selectable fields', () => {
    const fields = ['.spec.name', '.spec.tags', '.spec.ratio', '.status.conditions[0].type', '.spec.nope', 'spec.name', '.spec.name'];
    expectViolations(selectableFieldViolations(fields.map((jsonPath) => ({ jsonPath })), schema), [
      'selectableFields[1] (.spec.tags): is array, want string, integer or boolean',
      'selectableFields[2] (.spec.ratio): is number, want string, integer or boolean',
      'selectableFields[3] (.status.conditions[0].type): must be a simple path, without list indexing',
      'selectableFields[4] (.spec.nope): does not resolve: .spec has no field "nope"',
      'selectableFields[5] (spec.name): does not resolve: does not start with "."',
      'selectableFields[6] (.spec.name): listed twice',
    ]);
    expectViolations(selectableFieldViolations(Array.from({ length: 9 }, (_, i) => ({ jsonPath: `.spec.f${i}` })), obj({ spec: obj({}, { additionalProperties: str() }) })), [
      'selectableFields: 9 entries, kube allows at most 8',
    ]);
  });

  it('identity', () => {
    const version = (name: string, served: boolean, storage: boolean, subresources?: object) => ({ name, served, storage, subresources, schema: { openAPIV3Schema: schema } });
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1beta1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widget.cairn.dev' },
      spec: {
        group: 'example.com',
        scope: 'Cluster',
        names: { kind: 'Widget', plural: 'widgets', shortNames: [], categories: ['all'] },
        versions: [version('v1', true, false, { status: {}, scale: { specReplicasPath: '.spec.replicas', statusReplicasPath: '.status.replicas' } }), version('v1alpha1', false, true)],
      },
    } as RawCrd;
    expectViolations(identityViolations(crd), [
      'apiVersion: "apiextensions.k8s.io/v1beta1", want apiextensions.k8s.io/v1',
      'metadata.name: "widget.cairn.dev", want <plural>.<group> "widgets.example.com"',
      'spec.group: "example.com", want cairn.dev',
      'spec.scope: "Cluster", want Namespaced (Cluster is cluster-scoped, every other kind Namespaced)',
      'spec.names.categories: ["all"] does not include cairn',
      'spec.names.shortNames: none',
      'spec.versions: ["v1","v1alpha1"], want exactly one version, v1alpha1',
      'spec.versions[0].name: "v1", want v1alpha1',
      'spec.versions[0].storage: false, want true',
      'spec.versions[0].subresources: {"status":{},"scale":{"specReplicasPath":".spec.replicas","statusReplicasPath":".status.replicas"}}, want {"status":{}}',
      'spec.versions[1].served: false, want true',
      'spec.versions[1].subresources: undefined, want {"status":{}}',
    ]);
  });

  it('YAML', () => {
    const text = 'spec:\n  enum: [Yes, "no", off]\n  mode: 0755\n  when: 2025-01-01\n  ok: true\n';
    expectViolations(yamlReadingViolations(text), [
      'spec.enum[0]: "Yes" for Cairn (YAML 1.2) but true for kubectl (YAML 1.1); quote it',
      'spec.enum[2]: "off" for Cairn (YAML 1.2) but false for kubectl (YAML 1.1); quote it',
      'spec.mode: 755 for Cairn (YAML 1.2) but 493 for kubectl (YAML 1.1); quote it',
    ]);
    expectViolations(crdFromYaml('a: 1\n---\nb: 2\n').problems, ['2 YAML documents, want exactly one CustomResourceDefinition']);
    expectViolations(crdFromYaml('a: [1\n').problems, [/^document 1: /]);
  });
});

/** `actual` is exactly `expected`, in order; a RegExp matches one violation. */
function expectViolations(actual: Violation[], expected: (string | RegExp)[]): void {
  const matches = actual.length === expected.length && expected.every((e, i) => (typeof e === 'string' ? e === actual[i] : e.test(actual[i]!)));
  if (!matches) expect(actual).to.deep.equal(expected);
}

import { expect } from 'chai';
import { loadCrds } from '../../../../apiserver/crd-loader.js';
import type { StatusCause } from '../../../../apiserver/errors.js';
import { compileValidator, createAjv, fieldPath, type ObjectValidator } from '../../../../apiserver/validation/schema-validator.js';
import { CRD_DIR } from '../../../support/paths.js';

describe('fieldPath', () => {
  const cases: [instancePath: string, field: string][] = [
    ['/spec/volumes/0/name', 'spec.volumes[0].name'],
    ['/spec/cpus', 'spec.cpus'],
    ['/spec', 'spec'],
    ['', ''],
    ['/status/conditions/12/type', 'status.conditions[12].type'],
    ['/spec/process/command/0', 'spec.process.command[0]'],
    ['/metadata/labels/cairn.dev~1role', 'metadata.labels.cairn.dev/role'],
    ['/spec/a~0b', 'spec.a~b'],
  ];
  for (const [instancePath, field] of cases) {
    it(`${JSON.stringify(instancePath)} → ${JSON.stringify(field)}`, () => {
      expect(fieldPath(instancePath)).to.equal(field);
    });
  }
});

describe('compileValidator on the Instance CRD', () => {
  let validate: ObjectValidator;
  before(() => {
    validate = compileValidator(createAjv(), loadCrds(CRD_DIR).find((d) => d.kind === 'Instance')!.schema);
  });

  const instance = (spec: Record<string, unknown>, status?: Record<string, unknown>) => ({
    apiVersion: 'cairn.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'web', namespace: 'default' },
    spec,
    ...(status ? { status } : {}),
  });

  it('refuses a second item with the same key in a list-type map (env by name, conditions by type), as kube does', () => {
    const causes = validate(
      instance(
        { cpus: 1, memory: '1Gi', process: { command: ['/bin/true'], env: [{ name: 'A', value: '1' }, { name: 'B', value: '2' }, { name: 'A', value: '3' }] } },
        { conditions: [{ type: 'Ready', status: 'True', reason: 'R', message: 'm', lastTransitionTime: '2026-11-27T00:00:00Z' }, { type: 'Ready', status: 'False', reason: 'R', message: 'm', lastTransitionTime: '2026-11-27T00:00:00Z' }] },
      ),
    );
    expect(causes).to.deep.equal([
      { reason: 'FieldValueDuplicate', message: 'Duplicate value: {"name":"A"}', field: 'spec.process.env[2]' },
      { reason: 'FieldValueDuplicate', message: 'Duplicate value: {"type":"Ready"}', field: 'status.conditions[1]' },
    ]);
  });

  it('accepts a valid object', () => {
    expect(validate(instance({ cpus: 2, memory: '1Gi', process: { command: ['/bin/sleep', '60'] } }))).to.deep.equal([]);
  });

  it('applies schema defaults in place, including inside defaulted objects', () => {
    const obj = instance({ qemu: {} });
    expect(validate(obj)).to.deep.equal([]);
    expect(obj.spec).to.deep.equal({
      runState: 'Running',
      driver: 'process',
      cpus: 1,
      memory: '128Mi',
      restartPolicy: 'Always',
      terminationGracePeriodSeconds: 10,
      failoverPolicy: 'Automatic',
      qemu: { network: 'none', readinessTimeoutSeconds: 120, migration: { mode: 'Live', maxDowntimeMs: 300, bandwidthMiBps: 0, timeoutSeconds: 300 } },
    });
  });

  it('does not override values the client set', () => {
    const obj = instance({ runState: 'Stopped', cpus: 8 });
    validate(obj);
    expect(obj.spec).to.include({ runState: 'Stopped', cpus: 8 });
  });

  const cases: [name: string, obj: unknown, cause: StatusCause][] = [
    [
      'wrong type',
      instance({ cpus: 'two' }),
      { reason: 'FieldValueTypeInvalid', field: 'spec.cpus', message: 'Invalid value: "two": spec.cpus in body must be of type integer: "two"' },
    ],
    ['missing spec', { apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name: 'web' } }, { reason: 'FieldValueRequired', field: 'spec', message: 'Required value' }],
    ['missing nested required field', instance({ process: {} }), { reason: 'FieldValueRequired', field: 'spec.process.command', message: 'Required value' }],
    ['missing required field of a list item', instance({ volumes: [{ name: 'data' }] }), { reason: 'FieldValueRequired', field: 'spec.volumes[0].volumeName', message: 'Required value' }],
    [
      'enum violation',
      instance({ runState: 'Paused' }),
      { reason: 'FieldValueNotSupported', field: 'spec.runState', message: 'Unsupported value: "Paused": supported values: "Running", "Stopped"' },
    ],
    ['below minimum', instance({ cpus: 0 }), { reason: 'FieldValueInvalid', field: 'spec.cpus', message: 'Invalid value: 0: spec.cpus in body should be greater than or equal to 1' }],
    ['above maximum', instance({ cpus: 257 }), { reason: 'FieldValueInvalid', field: 'spec.cpus', message: 'Invalid value: 257: spec.cpus in body should be less than or equal to 256' }],
    [
      'pattern mismatch',
      instance({ memory: 'lots' }),
      { reason: 'FieldValueInvalid', field: 'spec.memory', message: 'Invalid value: "lots": spec.memory in body should match \'^[0-9]+(Ki|Mi|Gi|Ti)?$\'' },
    ],
    [
      'too long',
      instance({ volumes: [{ name: 'a'.repeat(64), volumeName: 'v' }] }),
      { reason: 'FieldValueInvalid', field: 'spec.volumes[0].name', message: `Invalid value: "${'a'.repeat(64)}": spec.volumes[0].name in body may not be longer than 63` },
    ],
    ['too few items', instance({ process: { command: [] } }), { reason: 'FieldValueInvalid', field: 'spec.process.command', message: 'Invalid value: []: spec.process.command in body should have at least 1 items' }],
    [
      'bad date-time',
      instance({}, { startedAt: 'yesterday' }),
      { reason: 'FieldValueInvalid', field: 'status.startedAt', message: 'Invalid value: "yesterday": status.startedAt in body must be of type date-time' },
    ],
  ];
  for (const [name, obj, cause] of cases) {
    it(`reports ${name} as a field error`, () => {
      expect(validate(obj)).to.deep.equal([cause]);
    });
  }

  it('reports every invalid field at once', () => {
    const fields = validate(instance({ cpus: 0, memory: 'lots', driver: 'docker' })).map((c) => c.field);
    expect(fields).to.have.members(['spec.cpus', 'spec.memory', 'spec.driver']);
  });
});

describe('compileValidator with x-kubernetes-int-or-string', () => {
  const validate = compileValidator(createAjv(), {
    type: 'object',
    properties: { port: { 'x-kubernetes-int-or-string': true }, ports: { type: 'array', items: { 'x-kubernetes-int-or-string': true } } },
  });
  for (const [value, ok] of [[80, true], ['http', true], [1.5, false], [true, false], [{}, false]] as const) {
    it(`${JSON.stringify(value)} is ${ok ? 'accepted' : 'rejected'}`, () => {
      expect(validate({ port: value, ports: [value] }).length === 0).to.equal(ok);
    });
  }
});

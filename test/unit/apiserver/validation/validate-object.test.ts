import { expect } from 'chai';
import { loadCrds } from '../../../../apiserver/crd-loader.js';
import type { ResourceDefinition } from '../../../../apiserver/resources.js';
import type { KubeObject } from '../../../../apiserver/storage/codec.js';
import { compileValidator, createAjv, type ObjectValidator } from '../../../../apiserver/validation/schema-validator.js';
import { admitObject, parseFieldValidation, type FieldValidation } from '../../../../apiserver/validation/validate-object.js';
import { CRD_DIR } from '../../../support/paths.js';
import { catchApiError } from '../helpers.js';

describe('parseFieldValidation', () => {
  const ok: [value: unknown, mode: FieldValidation][] = [
    [undefined, 'Warn'],
    ['', 'Warn'],
    ['Strict', 'Strict'],
    ['Warn', 'Warn'],
    ['Ignore', 'Ignore'],
  ];
  for (const [value, mode] of ok) {
    it(`${JSON.stringify(value)} → ${mode}`, () => expect(parseFieldValidation(value)).to.equal(mode));
  }
  for (const value of ['strict', 'None', ['Strict']]) {
    it(`${JSON.stringify(value)} → 400`, () => expect(catchApiError(() => parseFieldValidation(value)).code).to.equal(400));
  }
});

describe('admitObject', () => {
  let defs: ResourceDefinition[];
  let instanceDef: ResourceDefinition;
  let validator: ObjectValidator;
  before(() => {
    defs = loadCrds(CRD_DIR);
    instanceDef = defs.find((d) => d.kind === 'Instance')!;
    validator = compileValidator(createAjv(), instanceDef.schema);
  });

  const instance = (spec: Record<string, unknown>, metadata: Record<string, unknown> = {}): KubeObject => ({
    apiVersion: 'cairn.dev/v1alpha1',
    kind: 'Instance',
    metadata: { name: 'web', namespace: 'default', ...metadata },
    spec: { process: { command: ['/bin/sleep', '60'] }, ...spec },
  });
  const admit = (obj: KubeObject, mode: FieldValidation = 'Strict') => admitObject(instanceDef, validator, obj, mode);

  it('accepts a valid object, applying defaults such as runState', () => {
    const obj = instance({ cpus: 2 });
    expect(admit(obj)).to.deep.equal([]);
    expect(obj.spec).to.include({ cpus: 2, runState: 'Running', driver: 'process', memory: '128Mi' });
  });

  describe('unknown fields', () => {
    it('are a 400 under Strict, naming every field', () => {
      const err = catchApiError(() => admit(instance({ foo: 1 }, { bogus: true })));
      expect(err.code).to.equal(400);
      expect(err.reason).to.equal('BadRequest');
      expect(err.message).to.equal('Instance in version "v1alpha1" cannot be handled as a Instance: strict decoding error: unknown field "spec.foo", unknown field "metadata.bogus"');
      expect(err.details?.causes?.map((c) => c.field)).to.deep.equal(['spec.foo', 'metadata.bogus']);
    });

    const pruningModes: [mode: FieldValidation, warnings: string[]][] = [
      ['Warn', ['unknown field "spec.foo"', 'unknown field "extra"', 'unknown field "metadata.bogus"']],
      ['Ignore', []],
    ];
    for (const [mode, warnings] of pruningModes) {
      it(`are pruned under ${mode}${warnings.length ? ' with a warning each' : ' silently'}`, () => {
        const obj: KubeObject = { ...instance({ foo: 1 }, { bogus: true }), extra: 'x' };
        expect(admit(obj, mode)).to.have.members(warnings);
        expect(obj.spec).to.not.have.property('foo');
        expect(obj.metadata).to.not.have.property('bogus');
        expect(obj).to.not.have.property('extra');
      });
    }

    it('keep every ObjectMeta field', () => {
      const metadata = {
        generateName: 'web-', uid: 'u', resourceVersion: '1', generation: 1, creationTimestamp: '2025-01-01T00:00:00Z',
        labels: { a: 'b' }, annotations: { c: 'd' }, ownerReferences: [], finalizers: ['cairn.dev/x'], managedFields: [], selfLink: '',
      };
      const obj = instance({}, metadata);
      expect(admit(obj)).to.deep.equal([]);
      expect(obj.metadata).to.include.all.keys(Object.keys(metadata));
    });
  });

  describe('invalid content is a 422 Invalid with field causes', () => {
    const cases: [name: string, obj: () => KubeObject, field: string, message: RegExp][] = [
      ['a wrong type', () => instance({ cpus: 'two' }), 'spec.cpus', /^Invalid value: "two": spec\.cpus in body must be of type integer/],
      ['a missing required field', () => instance({ process: {} }), 'spec.process.command', /^Required value$/],
      ['an enum violation', () => instance({ runState: 'Paused' }), 'spec.runState', /^Unsupported value: "Paused": supported values: "Running", "Stopped"$/],
      ['a bad metadata.name', () => instance({}, { name: 'Bad_Name' }), 'metadata.name', /^Invalid value: "Bad_Name": a lowercase RFC 1123 subdomain/],
      ['a missing name', () => instance({}, { name: undefined }), 'metadata.name', /^Required value: name or generateName is required$/],
      ['a bad label', () => instance({}, { labels: { 'bad key!': 'v' } }), 'metadata.labels', /^Invalid value: "bad key!"/],
      // The value goes into qemu's -machine option string, where a comma adds options (accel= among them).
      ['a qemu machine type carrying options', () => instance({ qemu: { kernel: '/k', machine: 'q35,accel=tcg' } }), 'spec.qemu.machine', /^Invalid value: "q35,accel=tcg": spec\.qemu\.machine in body should match/],
    ];
    for (const [name, obj, field, message] of cases) {
      it(name, () => {
        const err = catchApiError(() => admit(obj()));
        expect(err.code).to.equal(422);
        expect(err.reason).to.equal('Invalid');
        expect(err.details).to.include({ kind: 'Instance', group: 'cairn.dev' });
        const causes = err.details?.causes ?? [];
        expect(causes).to.have.length(1);
        expect(causes[0]!.field).to.equal(field);
        expect(causes[0]!.message).to.match(message);
        expect(err.message).to.equal(`Instance.cairn.dev "${obj().metadata.name ?? ''}" is invalid: ${field}: ${causes[0]!.message}`);
      });
    }

    it('lists several causes in one message', () => {
      const err = catchApiError(() => admit(instance({ cpus: 0, memory: 'lots' })));
      expect(err.details?.causes?.map((c) => c.field)).to.have.members(['spec.cpus', 'spec.memory']);
      expect(err.message).to.match(/^Instance\.cairn\.dev "web" is invalid: \[spec\.(cpus|memory): .*, spec\.(cpus|memory): .*\]$/);
    });

    it('names a generateName-only object by its generateName', () => {
      const err = catchApiError(() => admit(instance({ cpus: 0 }, { name: undefined, generateName: 'web-' })));
      expect(err.details?.name).to.equal('web-');
    });

    it('reports a field that both the schema and the metadata rules reject only once (Cluster names)', () => {
      const clusterDef = defs.find((d) => d.kind === 'Cluster')!;
      const cluster: KubeObject = { apiVersion: 'cairn.dev/v1alpha1', kind: 'Cluster', metadata: { name: 'Bad.Name' } };
      const err = catchApiError(() => admitObject(clusterDef, compileValidator(createAjv(), clusterDef.schema), cluster, 'Strict'));
      expect(err.details?.causes?.filter((c) => c.field === 'metadata.name')).to.have.length(1);
    });
  });

  describe('kind rules beyond the schema (Volume)', () => {
    const volumeDef = () => defs.find((d) => d.kind === 'Volume')!;
    const vol = (spec: Record<string, unknown>): KubeObject => ({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Volume', metadata: { name: 'data', namespace: 'default' }, spec: { size: '1Gi', ...spec } });
    const admitVolume = (obj: KubeObject, old?: KubeObject) => admitObject(volumeDef(), compileValidator(createAjv(), volumeDef().schema), obj, 'Strict', old);

    it('defaults driver to gluster, and refuses a replicated file volume with 422 naming the field, the value and what to use', () => {
      const obj = vol({ replicas: 3 });
      admitVolume(obj);
      expect(obj.spec).to.include({ driver: 'gluster', state: 'Started', arbiter: false });
      const err = catchApiError(() => admitVolume(vol({ driver: 'file', replicas: 2 })));
      expect(err.code).to.equal(422);
      expect(err.details?.causes).to.deep.equal([{ reason: 'FieldValueInvalid', field: 'spec.replicas', message: err.details!.causes![0]!.message }]);
      expect(err.message).to.match(/^Volume\.cairn\.dev "data" is invalid: spec\.replicas: Invalid value: 2: driver file keeps one unreplicated copy/).and.match(/use driver gluster/);
    });

    it('quotes a bad option\'s value under its key, and lets an update leave a stored legacy spec alone', () => {
      const err = catchApiError(() => admitVolume(vol({ options: { 'network.ping-timeout': 'soon' } })));
      expect(err.message).to.include('spec.options[network.ping-timeout]: Invalid value: "soon": "soon" is not valid for network.ping-timeout');
      const legacy = vol({ driver: 'file', replicas: 2 });
      expect(admitVolume(vol({ driver: 'file', replicas: 2, nodeSelector: { disk: 'ssd' } }), legacy)).to.deep.equal([]);
    });
  });

  // Regression (was a bug): apiserver/validation/validate-object.ts admitObject (with prune.ts) keeps explicit nulls, so
  // `spec.placement: null` (what YAML `placement:` with no value decodes to) fails with 422
  // "spec.placement: Invalid value: null: ... must be of type object" and `spec.runState: null` with
  // 422 instead of being defaulted. kube (apiextensions, since 1.20) prunes nulls of non-nullable
  // fields before defaulting and then applies the default ("Defaulting and Nullable" in the CRD docs).
  describe('explicit nulls in non-nullable fields', () => {
    it('are dropped, as kube prunes them', () => {
      const obj = instance({ placement: null, migrateTo: null });
      expect(admit(obj)).to.deep.equal([]);
      expect(obj.spec).to.not.have.any.keys('placement', 'migrateTo');
    });

    it('are replaced by the default when the field has one', () => {
      const obj = instance({ runState: null });
      admit(obj);
      expect(obj.spec.runState).to.equal('Running');
    });
  });
});

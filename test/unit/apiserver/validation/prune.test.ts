import { expect } from 'chai';
import { loadCrds } from '../../../../apiserver/crd-loader.js';
import type { JSONSchemaProps } from '../../../../apiserver/resources.js';
import { pruneUnknown } from '../../../../apiserver/validation/prune.js';
import { CRD_DIR } from '../../../support/paths.js';

describe('pruneUnknown', () => {
  describe('against the Instance CRD schema', () => {
    const schema = loadCrds(CRD_DIR).find((d) => d.kind === 'Instance')!.schema;

    const cases: [name: string, body: Record<string, unknown>, unknown: string[], pruned: Record<string, unknown>][] = [
      ['keeps a fully declared body', { spec: { cpus: 2, process: { command: ['/bin/true'] } } }, [], { spec: { cpus: 2, process: { command: ['/bin/true'] } } }],
      ['removes an unknown spec field', { spec: { cpus: 2, foo: 1 } }, ['spec.foo'], { spec: { cpus: 2 } }],
      ['removes fields named like members of every object (they were taken for declared ones)', { spec: { cpus: 2, constructor: 'x', toString: 1, hasOwnProperty: {} } }, ['spec.constructor', 'spec.toString', 'spec.hasOwnProperty'], { spec: { cpus: 2 } }],
      ['removes an unknown top-level field', { spec: {}, extra: { a: 1 } }, ['extra'], { spec: {} }],
      ['removes unknown fields at depth', { spec: { qemu: { migration: { mode: 'Live', speed: 9 } } } }, ['spec.qemu.migration.speed'], { spec: { qemu: { migration: { mode: 'Live' } } } }],
      [
        'names list items by index',
        { spec: { volumes: [{ name: 'a', volumeName: 'v' }, { name: 'b', volumeName: 'w', bar: true }] } },
        ['spec.volumes[1].bar'],
        { spec: { volumes: [{ name: 'a', volumeName: 'v' }, { name: 'b', volumeName: 'w' }] } },
      ],
      ['keeps any key of an additionalProperties map', { spec: { placement: { nodeSelector: { 'cairn.dev/zone': 'a', x: 'y' } } } }, [], { spec: { placement: { nodeSelector: { 'cairn.dev/zone': 'a', x: 'y' } } } }],
      ['prunes under status too', { status: { phase: 'Running', secret: 'x' } }, ['status.secret'], { status: { phase: 'Running' } }],
      ['reports several fields', { spec: { a: 1, b: 2 }, c: 3 }, ['spec.a', 'spec.b', 'c'], { spec: {} }],
    ];
    for (const [name, body, unknown, pruned] of cases) {
      it(name, () => {
        expect(pruneUnknown(body, schema)).to.have.members(unknown);
        expect(body).to.deep.equal(pruned);
      });
    }
  });

  describe('schema extensions', () => {
    const cases: [name: string, schema: JSONSchemaProps, body: Record<string, unknown>, unknown: string[], pruned: Record<string, unknown>][] = [
      [
        'x-kubernetes-preserve-unknown-fields without properties keeps everything',
        { type: 'object', properties: { data: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
        { data: { any: { thing: [1] } } },
        [],
        { data: { any: { thing: [1] } } },
      ],
      [
        'x-kubernetes-preserve-unknown-fields with properties keeps unknown keys but prunes inside known ones',
        { type: 'object', 'x-kubernetes-preserve-unknown-fields': true, properties: { known: { type: 'object', properties: { a: { type: 'string' } } } } },
        { other: 1, known: { a: 'x', b: 'y' } },
        ['known.b'],
        { other: 1, known: { a: 'x' } },
      ],
      [
        'x-kubernetes-embedded-resource keeps apiVersion, kind and metadata',
        { type: 'object', properties: { template: { type: 'object', 'x-kubernetes-embedded-resource': true, properties: { spec: { type: 'object' } } } } },
        { template: { apiVersion: 'v1', kind: 'X', metadata: { name: 'n' }, spec: {}, junk: 1 } },
        ['template.junk'],
        { template: { apiVersion: 'v1', kind: 'X', metadata: { name: 'n' }, spec: {} } },
      ],
      [
        // kube's pruning does the same: additionalProperties without a schema has no fields to keep
        'additionalProperties: true keeps any key, but (as in kube) nothing inside object values',
        { type: 'object', properties: { m: { type: 'object', additionalProperties: true } } },
        { m: { a: 'x', b: { deep: 1 } } },
        ['m.b.deep'],
        { m: { a: 'x', b: {} } },
      ],
      [
        'a list without an items schema is left alone',
        { type: 'object', properties: { l: { type: 'array' } } },
        { l: [{ x: 1 }] },
        [],
        { l: [{ x: 1 }] },
      ],
    ];
    for (const [name, schema, body, unknown, pruned] of cases) {
      it(name, () => {
        expect(pruneUnknown(body, schema)).to.have.members(unknown);
        expect(body).to.deep.equal(pruned);
      });
    }
  });

  it('ignores scalars and null', () => {
    for (const v of [null, 1, 'x', true]) expect(pruneUnknown(v, { type: 'object', properties: {} })).to.deep.equal([]);
  });
});

/** Registry: the served kinds and their validators, compiled when first asked for — pure. */
import { expect } from 'chai';
import { Registry } from '../../../apiserver/registry.js';
import type { ResourceDefinition } from '../../../apiserver/resources.js';
import { servedDefinitions } from '../../../apiserver/server.js';
import { CRD_DIR } from '../../support/paths.js';

describe('Registry', () => {
  it('compiles the validator of every kind served (a broken schema fails here, not on its first write)', () => {
    const registry = new Registry(servedDefinitions(CRD_DIR));
    for (const def of registry.defs) expect(registry.validator(def), `${def.kind}`).to.be.a('function');
  });

  it('validates a kind by its own registry\'s schema when two registries serve it with different ones', () => {
    const kind = (maximum: number): ResourceDefinition => {
      const lease = servedDefinitions(CRD_DIR).find((d) => d.kind === 'Lease')!;
      return { ...lease, schema: { type: 'object', properties: { spec: { type: 'object', properties: { n: { type: 'integer', maximum } } } } } };
    };
    const [strict, loose] = [kind(1), kind(10)].map((d) => ({ def: d, registry: new Registry([d]) }));
    const five = { spec: { n: 5 } };
    expect(strict!.registry.validator(strict!.def)(structuredClone(five)).map((c) => c.field)).to.deep.equal(['spec.n']);
    expect(loose!.registry.validator(loose!.def)(structuredClone(five))).to.deep.equal([]);
    expect(strict!.registry.validator(strict!.def), 'compiled once per registry').to.equal(strict!.registry.validator(strict!.def));
  });
});

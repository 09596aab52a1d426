import { expect } from 'chai';
import {
  DEFAULT_INSTANCE_CPUS,
  InvalidQuantityError,
  instanceRequest,
  nodeCapacity,
} from '../../../../controller/scheduler/index.js';
import { cluster, instance, node } from './builders.js';

const GI = 2 ** 30;
const MI = 2 ** 20;

describe('scheduler: node capacity', () => {
  it('uses capacity when the node reports no allocatable part', () => {
    expect(nodeCapacity(node('a', { cpus: 4, memory: '8Gi', storage: '100Gi' }), undefined)).to.deep.equal({
      cpus: 4,
      memoryBytes: 8 * GI,
      storageBytes: 100 * GI,
    });
  });

  it('prefers allocatable, falling back to capacity per resource', () => {
    const n = node('a', { cpus: 4, memory: '8Gi', storage: '100Gi', allocatable: { cpus: 3, memory: '6Gi' } });
    expect(nodeCapacity(n, undefined)).to.deep.equal({ cpus: 3, memoryBytes: 6 * GI, storageBytes: 100 * GI });
  });

  it('counts a resource the node does not report as zero', () => {
    expect(nodeCapacity({ metadata: { name: 'a' }, status: { capacity: { cpus: 2 } } }, undefined)).to.deep.equal({
      cpus: 2,
      memoryBytes: 0,
      storageBytes: 0,
    });
    expect(nodeCapacity({ metadata: { name: 'a' } }, undefined)).to.deep.equal({ cpus: 0, memoryBytes: 0, storageBytes: 0 });
  });

  it('multiplies by the overcommit ratios and rounds down', () => {
    const c = cluster({ overcommit: { cpu: 1.5, memory: 2, storage: 0.5 } });
    expect(nodeCapacity(node('a', { cpus: 3, memory: '8Gi', storage: '3' }), c)).to.deep.equal({
      cpus: 4,
      memoryBytes: 16 * GI,
      storageBytes: 1,
    });
  });

  it('is not fooled by float error in the product (100 × 0.29 is 29 cpus)', () => {
    expect(nodeCapacity(node('a', { cpus: 100 }), cluster({ overcommit: { cpu: 0.29 } })).cpus).to.equal(29);
  });

  it('names the node and field of a quantity too large to be exact', () => {
    const n = node('big', { allocatable: { memory: '99999999999Ti' } });
    expect(() => nodeCapacity(n, undefined))
      .to.throw(InvalidQuantityError, /^Node c1\/big status\.allocatable\.memory: quantity "99999999999Ti" is too large$/)
      .with.property('field', 'Node c1/big status.allocatable.memory');
  });
});

describe('scheduler: instance requests', () => {
  it('applies the CRD defaults: 1 cpu, 128Mi', () => {
    expect(instanceRequest(instance('a'))).to.deep.equal({ cpus: DEFAULT_INSTANCE_CPUS, memoryBytes: 128 * MI });
  });

  it('reads spec.cpus and spec.memory', () => {
    expect(instanceRequest(instance('a', { cpus: 3, memory: '1Gi' }))).to.deep.equal({ cpus: 3, memoryBytes: GI });
  });

  it('names the instance and field of a malformed memory, keeping the cause', () => {
    const err = (() => {
      try {
        instanceRequest(instance('a', { memory: '1GB' }));
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).to.be.instanceOf(InvalidQuantityError);
    expect((err as Error).message).to.match(/^Instance c1\/a spec\.memory: invalid quantity "1GB"/);
    expect((err as Error).cause).to.be.instanceOf(Error);
  });
});

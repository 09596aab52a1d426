import { expect } from 'chai';
import { resourceInfo } from './resource-fixtures.js';
import { collectionPath, objectPath, qualifiedName, ResourceCatalog } from '../../../cli/client/catalog.js';
import { CliError } from '../../../cli/client/errors.js';

const res = resourceInfo;

// As discover() sorts them: Cairn's group first, then core, then the rest.
const catalog = new ResourceCatalog([
  res('cairn.dev', 'instances', 'Instance', { shortNames: ['inst'], categories: ['cairn'] }),
  res('cairn.dev', 'nodes', 'Node', { shortNames: ['cn'], categories: ['cairn'] }),
  res('cairn.dev', 'clusters', 'Cluster', { namespaced: false, categories: ['cairn'] }),
  res('', 'events', 'Event', { shortNames: ['ev'] }),
  res('', 'nodes', 'Node', { namespaced: false }),
  res('coordination.k8s.io', 'leases', 'Lease'),
]);

describe('ResourceCatalog.resolve', () => {
  for (const word of ['instances', 'instance', 'inst', 'Instance', 'INSTANCES', 'instances.cairn.dev', 'instance.v1alpha1.cairn.dev']) {
    it(`"${word}" names Cairn's instances`, () => {
      expect(catalog.resolve(word).map(qualifiedName)).to.deep.equal(['instances.cairn.dev']);
    });
  }

  it("prefers Cairn's nodes to core nodes", () => {
    expect(catalog.resolveOne('nodes').group).to.equal('cairn.dev');
  });

  it('resolves core and other groups', () => {
    expect(catalog.resolveOne('ev').plural).to.equal('events');
    expect(catalog.resolveOne('leases.coordination.k8s.io').kind).to.equal('Lease');
  });

  it('expands a category to every member', () => {
    expect(catalog.resolve('cairn').map((r) => r.plural)).to.deep.equal(['instances', 'nodes', 'clusters']);
    expect(() => catalog.resolveOne('cairn')).to.throw(CliError, /names 3 resource types/);
  });

  it("refuses an unknown word the way kubectl does, listing Cairn's kinds", () => {
    expect(() => catalog.resolve('pods')).to.throw(CliError, `the server doesn't have a resource type "pods"`);
    try {
      catalog.resolve('pods');
    } catch (err) {
      expect((err as CliError).hint).to.contain('instances, nodes, clusters');
    }
  });

  it('finds a manifest kind by apiVersion', () => {
    expect(catalog.forKind('cairn.dev/v1alpha1', 'Instance')?.plural).to.equal('instances');
    expect(catalog.forKind('v1', 'Event')?.plural).to.equal('events');
    expect(catalog.forKind('cairn.dev/v1', 'Instance')).to.equal(undefined);
  });
});

describe('resource paths', () => {
  const inst = catalog.resolveOne('instances');
  const cluster = catalog.resolveOne('clusters');
  const ev = catalog.resolveOne('events');
  it('builds namespaced, all-namespace and cluster-scoped paths', () => {
    expect(collectionPath(inst, 'demo')).to.equal('/apis/cairn.dev/v1alpha1/namespaces/demo/instances');
    expect(collectionPath(inst)).to.equal('/apis/cairn.dev/v1alpha1/instances');
    expect(objectPath(cluster, 'demo', 'demo')).to.equal('/apis/cairn.dev/v1alpha1/clusters/demo');
    expect(objectPath(ev, 'demo', 'a b')).to.equal('/api/v1/namespaces/demo/events/a%20b');
  });
});

import { expect } from 'chai';
import { pruneScope, selectPrune, type LiveObject } from '../../../cli/client/prune.js';
import { objectKey } from '../../../cli/client/targets.js';
import { cairn, catalog, object, target } from './apply-fixtures.js';

const liveObject = (kind: string, name: string, namespace?: string, metadata: Record<string, unknown> = {}): LiveObject => ({ r: cairn(kind), obj: object(kind, name, namespace, metadata) });

describe('pruneScope', () => {
  it('looks at every namespaced Cairn kind in the namespaces the input touches', () => {
    const scope = pruneScope([target('Instance', 'a', 'demo'), target('Volume', 'v', 'prod')], catalog);
    expect(scope.resources.map((r) => r.kind)).to.deep.equal(['Node', 'Instance', 'Volume', 'WorkItem']);
    expect(scope.namespaces).to.deep.equal(['demo', 'prod']);
  });

  it('adds Clusters only when the input declares one, and that Cluster’s namespace', () => {
    const scope = pruneScope([target('Cluster', 'shop'), target('Instance', 'a', 'demo')], catalog);
    expect(scope.resources.map((r) => r.kind)).to.deep.equal(['Cluster', 'Node', 'Instance', 'Volume', 'WorkItem']);
    expect(scope.namespaces).to.deep.equal(['demo', 'shop']);
  });

  it('adds an explicit -n', () => {
    expect(pruneScope([target('Cluster', 'shop')], catalog, 'demo').namespaces).to.deep.equal(['demo', 'shop']);
  });
});

describe('selectPrune', () => {
  const applied = new Set([objectKey(cairn('Instance'), 'demo', 'keep'), objectKey(cairn('Cluster'), undefined, 'demo')]);

  it('deletes what is live but no longer applied', () => {
    const live = [liveObject('Instance', 'keep', 'demo'), liveObject('Instance', 'old', 'demo'), liveObject('Cluster', 'demo'), liveObject('Cluster', 'gone')];
    expect(selectPrune(live, applied).map((l) => `${l.r.kind}/${l.obj.metadata.name}`)).to.deep.equal(['Instance/old', 'Cluster/gone']);
  });

  it('tells objects of the same name apart by kind and namespace', () => {
    const live = [liveObject('Volume', 'keep', 'demo'), liveObject('Instance', 'keep', 'prod')];
    expect(selectPrune(live, applied)).to.have.length(2);
  });

  it('never deletes objects owned by a controller, nor objects already being deleted', () => {
    const owner = { apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', name: 'keep', uid: 'u1' };
    const live = [
      liveObject('WorkItem', 'keep-x', 'demo', { ownerReferences: [{ ...owner, controller: true }] }),
      liveObject('WorkItem', 'manual', 'demo', { ownerReferences: [{ ...owner, controller: false }] }),
      liveObject('Instance', 'going', 'demo', { deletionTimestamp: '2024-01-01T00:00:00Z' }),
    ];
    expect(selectPrune(live, applied).map((l) => l.obj.metadata.name)).to.deep.equal(['manual']);
  });
});

import { expect } from 'chai';
import { managerName, recordUpdate } from '../../../../apiserver/rest/managed-fields.js';
import { serverSideApply, type ManagedFieldsEntry } from '../../../../apiserver/rest/apply.js';
import { ownedPaths } from '../../../../apiserver/rest/field-paths.js';
import { ApiError } from '../../../../apiserver/errors.js';
import type { KubeObject } from '../../../../apiserver/storage/codec.js';

const NOW = '2026-11-26T00:00:00Z';
const GV = 'cairn.dev/v1alpha1';
const inst = (spec: Record<string, unknown>, meta: Record<string, unknown> = {}): KubeObject => ({ apiVersion: GV, kind: 'Instance', metadata: { name: 'web', ...meta }, spec });
const entries = (o: KubeObject) => o.metadata.managedFields as unknown as ManagedFieldsEntry[];
const summary = (o: KubeObject) => entries(o).map((e) => `${e.manager}/${e.operation}:${JSON.stringify(e.fieldsV1)}`);

describe('managedFields of Update writes (create, PUT, patch)', () => {
  it('a create gives its manager every field it set', () => {
    const created = recordUpdate(undefined, inst({ cpus: 1, driver: 'process' }, { labels: { app: 'a' } }), 'kubectl-create', GV, NOW);
    expect(summary(created)).to.deep.equal(['kubectl-create/Update:{"f:metadata":{"f:labels":{"f:app":{}}},"f:spec":{"f:cpus":{},"f:driver":{}}}']);
  });

  it('a create owns what the request set, not what the schema defaulted', () => {
    const stored = inst({ cpus: 1, driver: 'process', restartPolicy: 'Always' });
    const created = recordUpdate(undefined, stored, 'cairn', GV, NOW, undefined, ownedPaths(inst({ cpus: 1 })));
    expect(summary(created)).to.deep.equal(['cairn/Update:{"f:spec":{"f:cpus":{}}}']);
    expect(() => serverSideApply(created, inst({ cpus: 1, restartPolicy: 'Never' }), 'kubectl', false, NOW), 'a defaulted field is free to apply').to.not.throw();
  });

  it('an update takes what it changed from every other manager, Apply or Update, and keeps what it had', () => {
    const applied = serverSideApply(inst({}), inst({ cpus: 1, driver: 'process' }), 'gitops', false, NOW);
    const patched = recordUpdate(applied, { ...applied, spec: { cpus: 2, driver: 'process' } }, 'kubectl-patch', GV, NOW);
    expect(summary(patched)).to.deep.equal(['gitops/Apply:{"f:spec":{"f:driver":{}}}', 'kubectl-patch/Update:{"f:spec":{"f:cpus":{}}}']);
    const labelled = recordUpdate(patched, { ...patched, metadata: { ...patched.metadata, labels: { x: 'y' } } }, 'kubectl-patch', GV, NOW);
    expect(summary(labelled)[1]).to.equal('kubectl-patch/Update:{"f:spec":{"f:cpus":{}},"f:metadata":{"f:labels":{"f:x":{}}}}');
  });

  it('a removed field leaves every manager; a write that changes nothing leaves managedFields as they were', () => {
    const created = recordUpdate(undefined, inst({ cpus: 1, migrateTo: 'b' }), 'a', GV, NOW);
    const cleared = recordUpdate(created, { ...created, spec: { cpus: 1 } }, 'controller', GV, '2027-01-01T00:00:00Z');
    expect(summary(cleared)).to.deep.equal(['a/Update:{"f:spec":{"f:cpus":{}}}']);
    const same = { ...cleared, spec: { cpus: 1 } };
    expect(recordUpdate(cleared, same, 'other', GV, '2028-01-01T00:00:00Z')).to.equal(same);
  });

  it('server-side apply then conflicts with the Update manager, until forced', () => {
    const applied = serverSideApply(inst({}), inst({ cpus: 1 }), 'gitops', false, NOW);
    const patched = recordUpdate(applied, { ...applied, spec: { cpus: 2 } }, 'kubectl-patch', GV, NOW);
    expect(() => serverSideApply(patched, inst({ cpus: 1 }), 'gitops', false, NOW)).to.throw(ApiError, 'conflict with "kubectl-patch": .spec.cpus');
    const forced = serverSideApply(patched, inst({ cpus: 1 }), 'gitops', true, NOW);
    expect(forced.spec).to.deep.equal({ cpus: 1 });
    expect(summary(forced)).to.deep.equal(['gitops/Apply:{"f:spec":{"f:cpus":{}}}']);
  });

  it('names the manager by fieldManager, or else by the User-Agent up to its first /', () => {
    expect(managerName('kubectl-edit', 'kubectl/v1.32')).to.equal('kubectl-edit');
    expect(managerName(undefined, 'helm/v3.17.1 (linux/amd64)')).to.equal('helm');
    expect(managerName('', undefined)).to.equal('');
  });
});

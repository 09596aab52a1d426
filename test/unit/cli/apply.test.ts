import { expect } from 'chai';
import { ApiStatusError } from '../../../api/client/errors.js';
import { applyErrorText, applyOutcome, summaryLine } from '../../../cli/client/apply.js';
import { CliError } from '../../../cli/client/errors.js';
import type { ApiObject } from '../../../cli/client/watch.js';
import { target } from './apply-fixtures.js';

const live = (rv: string, spec: Record<string, unknown>, extra: Partial<ApiObject> = {}): ApiObject => ({
  apiVersion: 'cairn.dev/v1alpha1',
  kind: 'Instance',
  metadata: { name: 'web', namespace: 'demo', resourceVersion: rv, generation: 1, managedFields: [{ manager: 'cairn', time: `t${rv}` }] },
  spec,
  ...extra,
});

describe('applyOutcome', () => {
  it('is created when the object did not exist before', () => {
    expect(applyOutcome(undefined, live('5', { cpus: 1 }))).to.equal('created');
  });

  it('is unchanged when the resourceVersion stayed', () => {
    expect(applyOutcome(live('5', { cpus: 1 }), live('5', { cpus: 1 }))).to.equal('unchanged');
  });

  it('is unchanged when only managedFields, resourceVersion or status moved (a no-op apply restamps managedFields)', () => {
    expect(applyOutcome(live('5', { cpus: 1 }, { status: { phase: 'Pending' } }), live('9', { cpus: 1 }, { status: { phase: 'Running' } }))).to.equal('unchanged');
  });

  it('is unchanged when only a finalizer came meanwhile (the controller adds its own, maybe between the read and the apply)', () => {
    const finalized = live('9', { cpus: 1 });
    finalized.metadata.finalizers = ['cairn.dev/instance'];
    expect(applyOutcome(live('5', { cpus: 1 }), finalized)).to.equal('unchanged');
  });

  it('is unchanged for a dry run that returns the would-be object without a resourceVersion', () => {
    const dry = live('5', { cpus: 1 });
    delete dry.metadata.resourceVersion;
    expect(applyOutcome(live('5', { cpus: 1 }), dry)).to.equal('unchanged');
  });

  it('is configured when the spec or the labels changed', () => {
    expect(applyOutcome(live('5', { cpus: 1 }), { ...live('6', { cpus: 2 }), metadata: { ...live('6', {}).metadata, generation: 2 } })).to.equal('configured');
    const labelled = live('6', { cpus: 1 });
    labelled.metadata.labels = { app: 'x' };
    expect(applyOutcome(live('5', { cpus: 1 }), labelled)).to.equal('configured');
  });
});

describe('summaryLine', () => {
  it("prints kubectl's line, with the dry-run suffix", () => {
    expect(summaryLine(target('Instance', 'web', 'demo'), 'created', false)).to.equal('instance.cairn.dev/web created');
    expect(summaryLine(target('Cluster', 'demo'), 'unchanged', true)).to.equal('cluster.cairn.dev/demo unchanged (server dry run)');
    expect(summaryLine(target('Volume', 'old', 'demo'), 'pruned', false)).to.equal('volume.cairn.dev/old pruned');
  });
});

describe('applyErrorText', () => {
  it('names the file of an API error', () => {
    const err = new ApiStatusError(422, 'Invalid', 'Instance.cairn.dev "bad" is invalid: spec.cpus: Invalid value: 0');
    expect(applyErrorText(err, 'dir/bad.yaml')).to.equal('Error from server (Invalid): error when applying "dir/bad.yaml": Instance.cairn.dev "bad" is invalid: spec.cpus: Invalid value: 0');
  });

  it('adds how to resolve a field-manager conflict', () => {
    const causes = [{ reason: 'FieldManagerConflict', message: 'conflict with "kubectl"', field: '.spec.cpus' }];
    const err = new ApiStatusError(409, 'Conflict', 'Apply failed with 1 conflict: conflict with "kubectl": .spec.cpus', { causes });
    const text = applyErrorText(err, 'web.yaml');
    expect(text).to.match(/^Error from server \(Conflict\): error when applying "web\.yaml": Apply failed with 1 conflict: conflict with "kubectl": \.spec\.cpus\nhint: /);
    expect(text).to.contain('--force-conflicts');
  });

  it('prints a user error as it is', () => {
    expect(applyErrorText(new CliError('resource mapping not found', 'ensure CRDs are installed first'), 'x.yaml')).to.equal('error: resource mapping not found\nhint: ensure CRDs are installed first');
  });
});

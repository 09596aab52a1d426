import { expect } from 'chai';
import { CliError } from '../../../cli/client/errors.js';
import type { Manifest } from '../../../cli/client/manifests.js';
import { kindName, resourceName } from '../../../cli/client/printers.js';
import { objectKey, toTarget } from '../../../cli/client/targets.js';
import { cairn, catalog, object, resource } from './apply-fixtures.js';

const manifest = (kind: string, name: string, namespace?: string, apiVersion = 'cairn.dev/v1alpha1'): Manifest => ({
  source: 'web.yaml',
  document: 1,
  object: { ...object(kind, name, namespace), apiVersion },
});

describe('toTarget', () => {
  const context = { namespace: 'demo', explicit: false };

  it('binds a namespaced object without a namespace to the context namespace, and fills it in', () => {
    const t = toTarget(manifest('Instance', 'web'), catalog, context);
    expect([t.r.plural, t.namespace, t.name]).to.deep.equal(['instances', 'demo', 'web']);
    expect(t.object.metadata.namespace).to.equal('demo');
  });

  it("keeps the manifest's namespace when -n was not given", () => {
    expect(toTarget(manifest('Instance', 'web', 'prod'), catalog, context).namespace).to.equal('prod');
  });

  it('refuses a manifest namespace that differs from an explicit -n, as kubectl does', () => {
    expect(() => toTarget(manifest('Instance', 'web', 'prod'), catalog, { namespace: 'demo', explicit: true })).to.throw(
      CliError,
      `the namespace from the provided object "prod" does not match the namespace "demo". You must pass '--namespace=prod' to perform this operation.`,
    );
    expect(toTarget(manifest('Instance', 'web', 'demo'), catalog, { namespace: 'demo', explicit: true }).namespace).to.equal('demo');
  });

  it('gives cluster-scoped objects no namespace', () => {
    const t = toTarget(manifest('Cluster', 'demo'), catalog, { namespace: 'other', explicit: true });
    expect(t.namespace).to.equal(undefined);
    expect(t.object.metadata.namespace).to.equal(undefined);
  });

  it("refuses an unknown kind in kubectl's words, with a hint listing Cairn's kinds", () => {
    try {
      toTarget(manifest('Foo', 'x'), catalog, context);
      expect.fail('no error');
    } catch (err) {
      expect(err).to.be.instanceOf(CliError);
      expect((err as CliError).message).to.equal('resource mapping not found for name: "x" namespace: "demo" from "web.yaml": no matches for kind "Foo" in version "cairn.dev/v1alpha1"');
      expect((err as CliError).hint).to.equal('the server serves the kinds Cluster, Node, Instance, Volume, WorkItem in apiVersion cairn.dev/v1alpha1 (besides the core ones): check the apiVersion and kind of the manifest');
    }
  });

  it('refuses a known kind in a version that is not served', () => {
    expect(() => toTarget(manifest('Instance', 'x', undefined, 'cairn.dev/v1'), catalog, context)).to.throw(CliError, /no matches for kind "Instance" in version "cairn\.dev\/v1"/);
  });
});

describe('object names', () => {
  it("names objects as kubectl's summaries do", () => {
    expect(kindName(cairn('Instance'))).to.equal('instance.cairn.dev');
    expect(resourceName(cairn('Volume'), 'data')).to.equal('volume.cairn.dev/data');
    expect(resourceName(resource('', 'events', 'Event'), 'e1')).to.equal('event/e1');
  });

  it('keys objects by group, kind, namespace and name', () => {
    expect(objectKey(cairn('Instance'), 'demo', 'web')).to.equal('cairn.dev/Instance/demo/web');
    expect(objectKey(cairn('Cluster'), undefined, 'demo')).to.equal('cairn.dev/Cluster//demo');
  });
});

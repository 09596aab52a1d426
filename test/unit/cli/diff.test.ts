import { expect } from 'chai';
import YAML from 'yaml';
import { diffFileName, diffProgram, diffYaml } from '../../../cli/client/diff.js';
import { cairn, resource } from './apply-fixtures.js';

describe('diffFileName', () => {
  it("names files as kubectl diff does: group.version.Kind.namespace.name", () => {
    expect(diffFileName(cairn('Instance'), 'demo', 'web')).to.equal('cairn.dev.v1alpha1.Instance.demo.web');
    expect(diffFileName(cairn('Cluster'), undefined, 'demo')).to.equal('cairn.dev.v1alpha1.Cluster..demo');
    expect(diffFileName(resource('', 'namespaces', 'Namespace', false), undefined, 'x')).to.equal('v1.Namespace..x');
  });
});

describe('diffYaml', () => {
  it('drops server bookkeeping and status, and sorts keys', () => {
    const obj = {
      kind: 'Instance',
      apiVersion: 'cairn.dev/v1alpha1',
      metadata: { name: 'web', namespace: 'demo', uid: 'u', resourceVersion: '7', generation: 3, creationTimestamp: 't', managedFields: [{}], labels: { b: '2', a: '1' }, finalizers: ['f'] },
      spec: { memory: '32Mi', cpus: 1 },
      status: { phase: 'Running' },
    };
    const text = diffYaml(obj)!;
    expect(YAML.parse(text)).to.deep.equal({
      apiVersion: 'cairn.dev/v1alpha1',
      kind: 'Instance',
      metadata: { finalizers: ['f'], labels: { a: '1', b: '2' }, name: 'web', namespace: 'demo' },
      spec: { cpus: 1, memory: '32Mi' },
    });
    expect(text.indexOf('apiVersion')).to.be.lessThan(text.indexOf('kind'));
    expect(text.indexOf('cpus')).to.be.lessThan(text.indexOf('memory'));
  });

  it('leaves an absent object absent', () => {
    expect(diffYaml(undefined)).to.equal(undefined);
  });
});

describe('diffProgram', () => {
  it('runs diff -u -N unless told otherwise; CAIRN_EXTERNAL_DIFF wins over KUBECTL_EXTERNAL_DIFF', () => {
    expect(diffProgram({})).to.deep.equal(['diff', '-u', '-N']);
    expect(diffProgram({ KUBECTL_EXTERNAL_DIFF: 'colordiff -N  -u' })).to.deep.equal(['colordiff', '-N', '-u']);
    expect(diffProgram({ KUBECTL_EXTERNAL_DIFF: 'meld', CAIRN_EXTERNAL_DIFF: 'diff -r' })).to.deep.equal(['diff', '-r']);
    expect(diffProgram({ CAIRN_EXTERNAL_DIFF: '  ' })).to.deep.equal(['diff', '-u', '-N']);
  });
});

import { expect } from 'chai';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { hashToken } from '../../../api/token-format.js';
import { MetadataCopy, readAgentDir } from '../../../agent/metadata-copy.js';

describe('agent metadata copy', () => {
  let dir: string;
  beforeEach(() => (dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-copy-'))));
  afterEach(() => fs.rmSync(dir, { recursive: true, force: true }));

  const node = (rv: string) => ({ metadata: { name: 'node-a', namespace: 'c1', resourceVersion: rv }, spec: {} });
  const nodeFile = () => path.join(dir, 'metadata', 'nodes.cairn.dev', 'c1', 'node-a.json');
  const keptNodes = () => fs.readdirSync(path.dirname(nodeFile()));

  it('keeps an object with its apiVersion, kind and resourceVersion, rewriting it only for a new version', () => {
    const copy = MetadataCopy.at(dir);
    copy.save('Node', node('5'));
    expect(JSON.parse(fs.readFileSync(nodeFile(), 'utf8'))).to.deep.equal({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Node', ...node('5') });
    fs.writeFileSync(nodeFile(), 'marker');
    copy.save('Node', node('5'));
    expect(fs.readFileSync(nodeFile(), 'utf8'), 'the same version is not written again').to.equal('marker');
    copy.save('Node', node('6'));
    expect(JSON.parse(fs.readFileSync(nodeFile(), 'utf8')).metadata.resourceVersion).to.equal('6');
    expect(keptNodes()).to.deep.equal(['node-a.json']);
    copy.remove('Node', 'c1', 'node-a');
    expect(fs.existsSync(nodeFile())).to.equal(false);
    copy.save('Node', undefined);
    copy.save('Node', { metadata: { name: 'x' } });
    expect(keptNodes(), 'nothing without a name and a resourceVersion').to.deep.equal([]);
  });

  it('keeps a cluster-scoped object under _', () => {
    MetadataCopy.at(dir).save('Cluster', { metadata: { name: 'c1', resourceVersion: '2' } });
    expect(fs.existsSync(path.join(dir, 'metadata', 'clusters.cairn.dev', '_', 'c1.json'))).to.equal(true);
  });

  it('reads a data dir for a restore: the copy, the WorkItems of the local store, the credential as its Token; read-only', () => {
    const copy = MetadataCopy.at(dir);
    copy.save('Node', node('5'));
    copy.save('Lease', { metadata: { name: 'node-node-a', namespace: 'c1', resourceVersion: '9' }, spec: { holderIdentity: 'node-a', renewTime: new Date('2024-01-01T00:00:00.123Z') } });
    const items = path.join(dir, 'workitems', 'c1');
    fs.mkdirSync(items, { recursive: true });
    fs.writeFileSync(path.join(items, 'web.node-a.json'), JSON.stringify({ workItem: { metadata: { name: 'web.node-a', namespace: 'c1', resourceVersion: '7' }, spec: { nodeName: 'node-a' } }, claimedTerm: 't' }));
    fs.writeFileSync(path.join(items, 'old.node-a.json'), JSON.stringify({ metadata: { name: 'old.node-a', namespace: 'c1', resourceVersion: '3' } }));
    fs.writeFileSync(path.join(items, 'torn.json'), '{"work');
    const token = 'abcdefghij.ABCDEFGHIJKLMNOPQRSTUVWXYZ012345';
    fs.writeFileSync(path.join(dir, 'node-credential.json'), JSON.stringify({ apiVersion: 'auth.cairn.dev/v1alpha1', kind: 'NodeCredential', cluster: 'c1', nodeName: 'node-a', token, expires: '2030-01-01T00:00:00Z', server: 'https://x', receivedAt: 1 }));
    const before = fs.readdirSync(items).sort();

    const read = readAgentDir(dir);
    expect(read.node).to.equal('node-a');
    const byName = new Map(read.objects.map((o) => [`${o.kind}/${o.metadata?.name}`, o]));
    expect([...byName.keys()].sort()).to.deep.equal(['Lease/node-node-a', 'Node/node-a', 'Token/abcdefghij', 'WorkItem/old.node-a', 'WorkItem/web.node-a']);
    expect(byName.get('WorkItem/web.node-a')).to.deep.include({ apiVersion: 'cairn.dev/v1alpha1', kind: 'WorkItem' });
    expect((byName.get('Lease/node-node-a')!.spec as { renewTime: string }).renewTime).to.equal('2024-01-01T00:00:00.123Z');
    expect(byName.get('Token/abcdefghij')!.spec).to.deep.include({ type: 'node', secretHash: hashToken(token), cluster: 'c1', nodeName: 'node-a', expires: '2030-01-01T00:00:00Z' });
    expect(read.problems).to.have.length(1);
    expect(read.problems[0]).to.include('torn.json');
    expect(fs.readdirSync(items).sort(), 'nothing renamed or removed').to.deep.equal(before);
  });

  it('an empty or missing dir holds nothing', () => {
    expect(readAgentDir(path.join(dir, 'none'))).to.deep.equal({ dir: path.join(dir, 'none'), node: undefined, objects: [], problems: [] });
  });
});

import { expect } from 'chai';
import { freshest, KEPT_BY_AGENTS, mergeAgentCopies, type AgentCopy, type RestoredObject } from '../../../../apiserver/restore/merge.js';
import { servedDefinitions } from '../../../../apiserver/server.js';
import type { KubeObject } from '../../../../apiserver/storage/codec.js';
import { CRD_DIR } from '../../../support/paths.js';

const defs = servedDefinitions(CRD_DIR);
const obj = (kind: string, name: string, rv: number | undefined, extra: Record<string, unknown> = {}, namespace: string | null = 'c1'): KubeObject => ({
  apiVersion: kind === 'Lease' ? 'coordination.k8s.io/v1' : 'cairn.dev/v1alpha1',
  kind,
  metadata: { name, ...(namespace ? { namespace } : {}), uid: `uid-${name}`, ...(rv === undefined ? {} : { resourceVersion: String(rv) }) },
  ...extra,
});
const cluster = (rv: number) => obj('Cluster', 'c1', rv, {}, null);
const workItem = (name: string, rv: number, owner = { kind: 'Instance', name: name.split('.')[0] }) => obj('WorkItem', name, rv, { spec: { owner, nodeName: name.split('.')[1] } });
const copy = (source: string, ...objects: KubeObject[]): AgentCopy => ({ source, objects });
const whats = (r: ReturnType<typeof mergeAgentCopies>) => r.unrecovered.map((u) => u.what);

describe('restore: mergeAgentCopies', () => {
  it('keys each object by the storage layout and keeps every object held by one agent', () => {
    const r = mergeAgentCopies([copy('node-a', cluster(3), obj('Node', 'node-a', 5), obj('Instance', 'web', 7), workItem('web.node-a', 9), obj('Lease', 'node-node-a', 11))], defs);
    expect(r.objects.map((o) => o.key)).to.deep.equal([
      '/registry/cairn.dev/clusters/c1',
      '/registry/cairn.dev/instances/c1/web',
      '/registry/cairn.dev/nodes/c1/node-a',
      '/registry/cairn.dev/workitems/c1/web.node-a',
      '/registry/leases/c1/node-node-a',
    ]);
    expect(r.objects.every((o) => o.source === 'node-a')).to.equal(true);
    expect(r.conflicts).to.deep.equal([]);
    expect(r.highestRevision).to.equal(11);
  });

  it('takes the copy with the highest resourceVersion, whatever the order of the agents, and reports the conflict', () => {
    const older = obj('Instance', 'web', 10, { status: { phase: 'Pending' } });
    const newer = obj('Instance', 'web', 20, { status: { phase: 'Running' } });
    for (const copies of [[copy('node-a', older), copy('node-b', newer)], [copy('node-b', newer), copy('node-a', older)]]) {
      const r = mergeAgentCopies(copies, defs);
      const web = r.objects.find((o) => o.obj.kind === 'Instance')!;
      expect(web.source).to.equal('node-b');
      expect(web.obj.status).to.deep.equal({ phase: 'Running' });
      expect(r.conflicts).to.deep.equal([{ kind: 'Instance', name: 'c1/web', chosen: { source: 'node-b', resourceVersion: 20 }, others: [{ source: 'node-a', resourceVersion: 10 }], reason: 'the copy with the highest resourceVersion was taken' }]);
    }
  });

  it('identical copies of one version are no conflict', () => {
    const r = mergeAgentCopies([copy('node-a', cluster(4)), copy('node-b', cluster(4)), copy('node-c', cluster(4))], defs);
    expect(r.conflicts).to.deep.equal([]);
    expect(r.objects).to.have.length(1);
    expect(r.objects[0]!.source, 'the first source by name, so a rerun restores the same').to.equal('node-a');
  });

  it('copies that differ at one resourceVersion: the first source by name, said so', () => {
    const r = mergeAgentCopies([copy('node-b', obj('Node', 'n', 4, { spec: { drain: true } })), copy('node-a', obj('Node', 'n', 4))], defs);
    expect(r.objects[0]!.source).to.equal('node-a');
    expect(r.conflicts[0]!.reason).to.match(/same resourceVersion differ: the copy of node-a \(first by name\)/);
  });

  it('an object deleted and re-created: the newest wins, said so', () => {
    const old = obj('Instance', 'web', 5);
    const recreated = { ...obj('Instance', 'web', 50), metadata: { ...obj('Instance', 'web', 50).metadata, uid: 'uid-2' } };
    const r = mergeAgentCopies([copy('node-a', old), copy('node-b', recreated)], defs);
    expect(r.objects[0]!.obj.metadata.uid).to.equal('uid-2');
    expect(r.conflicts[0]!.reason).to.match(/deleted and re-created/);
  });

  it('a copy without resourceVersion (a Token rebuilt from a credential) counts as 0 and loses to any versioned copy', () => {
    const bare = obj('Node', 'n', undefined, { spec: { x: 1 } });
    const r = mergeAgentCopies([copy('node-a', bare), copy('node-b', obj('Node', 'n', 2))], defs);
    expect(r.objects[0]!.source).to.equal('node-b');
    expect(r.objects[0]!.resourceVersion).to.equal(2);
    expect(mergeAgentCopies([copy('node-a', obj('Node', 'n', undefined))], defs).objects[0]!.resourceVersion).to.equal(0);
    expect(mergeAgentCopies([copy('node-a', { ...obj('Node', 'n', 1), metadata: { name: 'n', namespace: 'c1', resourceVersion: 'garbage' } })], defs).objects[0]!.resourceVersion).to.equal(0);
  });

  it('reports a kind the server does not serve, and a copy without a name, instead of writing them', () => {
    const r = mergeAgentCopies([copy('node-a', { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' } }, { apiVersion: 'cairn.dev/v1alpha1', kind: 'Node', metadata: {} })], defs);
    expect(r.objects).to.deep.equal([]);
    expect(r.unrecovered[0]).to.include({ what: 'Widget w kept by node-a', why: 'example.com/v1 Widget is not a kind this server serves' });
    expect(r.unrecovered[1]).to.include({ what: 'Node (no name) kept by node-a', why: 'the copy has no metadata.name' });
  });

  it('reports the owners of restored WorkItems that no agent kept, once per owner', () => {
    const r = mergeAgentCopies([copy('node-a', cluster(1), workItem('web.node-a', 3), workItem('data.node-a', 4, { kind: 'Volume', name: 'data' })), copy('node-b', workItem('data.node-b', 5, { kind: 'Volume', name: 'data' }), obj('Instance', 'db', 6), workItem('db.node-b', 7))], defs);
    const owners = r.unrecovered.filter((u) => /^(Instance|Volume) /.test(u.what));
    expect(owners.map((u) => u.what)).to.deep.equal(['Instance c1/web', 'Volume c1/data']);
    expect(owners[1]!.why).to.equal('no agent kept a copy, though its WorkItems data.node-a, data.node-b were restored');
  });

  it('reports a Cluster no agent kept when objects in it were restored', () => {
    expect(whats(mergeAgentCopies([copy('node-a', obj('Node', 'n', 1))], defs))).to.include('Cluster c1');
    expect(whats(mergeAgentCopies([copy('node-a', cluster(2), obj('Node', 'n', 1))], defs))).to.not.include('Cluster c1');
  });

  it('names every stored kind no agent keeps, never the kinds they keep, namespaces or absent kinds, each with a hint', () => {
    const r = mergeAgentCopies([], defs);
    expect(whats(r)).to.include.members(['every Event (events)', 'every Secret (secrets)', 'every ConfigMap (configmaps)', 'every Role (roles.rbac.authorization.k8s.io)', 'every RoleBinding (rolebindings.rbac.authorization.k8s.io)', 'user and join Tokens', 'Instances and Volumes on no node']);
    for (const kind of [...KEPT_BY_AGENTS, 'Namespace']) expect(whats(r).filter((w) => w.startsWith(`every ${kind} `)), kind).to.deep.equal([]);
    for (const d of defs.filter((d) => d.refusal)) expect(whats(r).some((w) => w.startsWith(`every ${d.kind} `)), d.kind).to.equal(false);
    expect(r.unrecovered.every((u) => u.hint.length > 10)).to.equal(true);
    expect(r.highestRevision).to.equal(0);
  });
});

describe('restore: freshest', () => {
  const candidate = (source: string, rv: number): RestoredObject => ({ key: 'k', def: defs.find((d) => d.kind === 'Node')!, obj: obj('Node', 'n', rv), source, resourceVersion: rv });
  it('one candidate: itself, no conflict', () => {
    expect(freshest([candidate('node-a', 3)])).to.deep.equal({ chosen: candidate('node-a', 3) });
  });
  it('lists every older copy, newest first', () => {
    const { chosen, conflict } = freshest([candidate('a', 1), candidate('c', 9), candidate('b', 5)]);
    expect(chosen.source).to.equal('c');
    expect(conflict!.others).to.deep.equal([{ source: 'b', resourceVersion: 5 }, { source: 'a', resourceVersion: 1 }]);
  });
});

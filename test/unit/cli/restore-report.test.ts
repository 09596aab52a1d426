import { expect } from 'chai';
import { mergeAgentCopies } from '../../../apiserver/restore/merge.js';
import { servedDefinitions } from '../../../apiserver/server.js';
import type { KubeObject } from '../../../apiserver/storage/codec.js';
import { restoreReport } from '../../../cli/run/restore-report.js';
import { CRD_DIR } from '../../support/paths.js';

const defs = servedDefinitions(CRD_DIR);
const obj = (kind: string, name: string, rv: number, namespace: string | null = 'c1'): KubeObject => ({ apiVersion: 'cairn.dev/v1alpha1', kind, metadata: { name, ...(namespace ? { namespace } : {}), resourceVersion: String(rv) } });
const ctx = { target: 'the embedded etcd of /srv/cairn', sources: ['node-a', 'node-b'], problems: [], outcome: { compactedAt: 1040, created: 4, replaced: 0 } };

describe('restore report', () => {
  const merge = mergeAgentCopies([
    { source: 'node-a', objects: [obj('Cluster', 'c1', 3, null), obj('Node', 'node-a', 9), obj('Instance', 'web', 30)] },
    { source: 'node-b', objects: [obj('Cluster', 'c1', 2, null), obj('Node', 'node-b', 8), obj('Instance', 'web', 40)] },
  ], defs);

  it('counts the objects per kind and per node', () => {
    const text = restoreReport(merge, ctx);
    expect(text).to.match(/^Restored 4 objects from 2 agents \(node-a, node-b\) into the embedded etcd of \/srv\/cairn:/);
    expect(text).to.match(/^ {2}KIND\s+OBJECTS\s+FROM$/m);
    expect(text).to.match(/^ {2}Cluster\s+1\s+node-a 1$/m);
    expect(text).to.match(/^ {2}Instance\s+1\s+node-b 1$/m);
    expect(text).to.match(/^ {2}Node\s+2\s+node-a 1, node-b 1$/m);
  });

  it('states how revisions were reconciled', () => {
    expect(restoreReport(merge, ctx)).to.include('resourceVersion 40 or below; the store now starts above revision 1040, with history compacted there');
  });

  it('lists each conflict with the copy taken and the ones passed over', () => {
    const text = restoreReport(merge, ctx);
    expect(text).to.include('Conflicts settled (2):');
    expect(text).to.include('  Cluster c1: node-a at 3 over node-b at 2; the copy with the highest resourceVersion was taken');
    expect(text).to.include('  Instance c1/web: node-b at 40 over node-a at 30;');
  });

  it('lists what was not recovered, each with a hint, and the unreadable files', () => {
    const text = restoreReport(merge, { ...ctx, problems: ['/x/workitems/c1/a.json: Unexpected end of JSON input'], outcome: { ...ctx.outcome, replaced: 2 } });
    expect(text).to.include(`Not recovered (${merge.unrecovered.length}):`);
    expect(text).to.match(/ {2}- every RoleBinding \(rolebindings.rbac.authorization.k8s.io\): no agent keeps a copy\.\n {4}Hint: re-apply them/);
    expect(text).to.include("Unreadable files in the agents' data dirs (skipped):\n  /x/workitems/c1/a.json: Unexpected end of JSON input");
    expect(text).to.include('(2 overwritten, --force)');
    expect(restoreReport(merge, ctx)).to.not.include('Conflicts settled (0)');
  });
});

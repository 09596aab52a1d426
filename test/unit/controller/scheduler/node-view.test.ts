/** nodeViews over a running tally: built once per list of nodes, and never behind the tally. */
import { expect } from 'chai';
import { emptyUsage } from '../../../../controller/scheduler/allocation.js';
import { nodeViews } from '../../../../controller/scheduler/node-view.js';
import type { NodeUsage } from '../../../../controller/scheduler/snapshot.js';
import { cluster, node, snapshot } from './builders.js';

describe('nodeViews over a running tally', () => {
  const nodes = [node('a'), node('b')];

  it('hands out the same views while the nodes, the cluster and the tally are the same', () => {
    const usage = new Map<string, NodeUsage>([['a', emptyUsage()]]);
    const c = cluster();
    expect(nodeViews(snapshot({ nodes, usage, cluster: c }))).to.equal(nodeViews(snapshot({ nodes, usage, cluster: c })));
    expect(nodeViews(snapshot({ nodes: [...nodes], usage, cluster: c }))).not.to.equal(nodeViews(snapshot({ nodes, usage, cluster: c })));
  });

  it("shows a node's first placement, added to the tally after its view was made", () => {
    const usage = new Map<string, NodeUsage>();
    expect(nodeViews(snapshot({ nodes, usage }))[0]!.usage.instances).to.equal(0);
    usage.set('a', { ...emptyUsage(), cpus: 2, instances: 1 });
    expect(nodeViews(snapshot({ nodes, usage }))[0]!.usage).to.include({ cpus: 2, instances: 1 });
  });

  it('follows the tally as it is updated in place', () => {
    const a = emptyUsage();
    const usage = new Map<string, NodeUsage>([['a', a]]);
    nodeViews(snapshot({ nodes, usage }));
    a.cpus = 3;
    expect(nodeViews(snapshot({ nodes, usage }))[0]!.usage.cpus).to.equal(3);
  });

  it("works capacity out again under another Cluster's policy", () => {
    const usage = new Map<string, NodeUsage>();
    expect(nodeViews(snapshot({ nodes, usage, cluster: cluster() }))[0]!.capacity.cpus).to.equal(4);
    expect(nodeViews(snapshot({ nodes, usage, cluster: cluster({ overcommit: { cpu: 2 } }) }))[0]!.capacity.cpus).to.equal(8);
  });
});

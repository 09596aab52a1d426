/**
 * Properties of the scheduler over random clusters: decisions fed back one
 * by one never overfill a node or break a constraint, never land on an
 * ineligible node, and do not depend on the order of the input.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import type { Instance } from '../../../../api/instance.js';
import type { Volume } from '../../../../api/volume.js';
import {
  instanceRequest,
  isSchedulable,
  matchesNodeSelector,
  nodeAllocation,
  nodeCapacity,
  pinnedNode,
  scheduleInstance,
  scheduleVolumeReplicas,
  type ClusterSnapshot,
  type Unschedulable,
} from '../../../../controller/scheduler/index.js';
import { clusterArb, instanceArb, instancesArb, nodesArb, shuffled, volumeArb } from './arbitraries.js';
import { placedOn, snapshot } from './builders.js';

const RUNS = { numRuns: 150 };

function sum(reasons: Record<string, number>): number {
  return Object.values(reasons).reduce((a, b) => a + b, 0);
}

function expectConsistent(r: Unschedulable, available: number, total: number): void {
  expect(sum(r.reasons)).to.equal(total === 0 ? 0 : total - available);
  expect(r.message.startsWith(`${available}/${total} nodes are available`)).to.equal(true, r.message);
}

/** Places the instances one by one, feeding each decision back as the controller's assumed placement. */
function placeAll(start: ClusterSnapshot, pending: readonly Instance[]): ClusterSnapshot {
  let s = start;
  for (const inst of pending) {
    const r = scheduleInstance(inst, s);
    if ('unschedulable' in r) {
      expectConsistent(r, 0, s.nodes.length);
      continue;
    }
    const target = s.nodes.find((n) => n.metadata.name === r.nodeName)!;
    expect(isSchedulable(target), `${r.nodeName} is not schedulable`).to.equal(true);
    expect(matchesNodeSelector(target, inst.spec.placement?.nodeSelector)).to.equal(true);
    expect(r.nodeName).to.equal(pinnedNode(inst)?.nodeName ?? r.nodeName);
    s = { ...s, instances: [...s.instances, placedOn(inst, r.nodeName)] };
  }
  return s;
}

describe('scheduler: properties of instance placement', () => {
  it('never exceeds a node’s overcommitted capacity or a limit, nor breaks anti-affinity', () => {
    fc.assert(
      fc.property(clusterArb, nodesArb, instancesArb, (c, nodes, pending) => {
        const s = placeAll(snapshot({ cluster: c, nodes }), pending);
        const usage = nodeAllocation(s);
        const { maxInstances = 0, maxInstancesPerNode = 0 } = c.spec?.policy ?? {};
        for (const n of nodes) {
          const cap = nodeCapacity(n, c);
          const u = usage.get(n.metadata.name!)!;
          expect(u.cpus).to.be.at.most(cap.cpus);
          expect(u.memoryBytes).to.be.at.most(cap.memoryBytes);
          if (maxInstancesPerNode > 0) expect(u.instances).to.be.at.most(maxInstancesPerNode);
          const groups = s.instances.filter((i) => i.status?.nodeName === n.metadata.name).flatMap((i) => i.spec.placement?.antiAffinityGroup ?? []);
          expect(new Set(groups).size).to.equal(groups.length);
        }
        if (maxInstances > 0) expect(s.instances.length).to.be.at.most(maxInstances);
      }),
      RUNS,
    );
  });

  it('picks a least allocated node among those the instance fits, and finds one whenever one fits', () => {
    const score = (s: ClusterSnapshot, inst: Instance, nodeName: string): number => {
      const n = s.nodes.find((x) => x.metadata.name === nodeName)!;
      const [cap, u, req] = [nodeCapacity(n, s.cluster), nodeAllocation(s).get(nodeName)!, instanceRequest(inst)];
      const f = (used: number, total: number): number => (total > 0 ? used / total : 0);
      return Math.max(f(u.cpus + req.cpus, cap.cpus), f(u.memoryBytes + req.memoryBytes, cap.memoryBytes));
    };
    fc.assert(
      fc.property(clusterArb, nodesArb, instancesArb, instanceArb('new'), (c, nodes, placed, inst) => {
        fc.pre(pinnedNode(inst) === undefined);
        const s = placeAll(snapshot({ cluster: c, nodes }), placed);
        const r = scheduleInstance(inst, s);
        for (const n of nodes) {
          const name = n.metadata.name!;
          const pinned = scheduleInstance({ ...inst, spec: { ...inst.spec, placement: { ...inst.spec.placement, nodeName: name } } }, s);
          if ('unschedulable' in pinned) continue;
          expect(r, `${name} fits, yet unschedulable`).to.have.property('nodeName');
          if ('nodeName' in r) expect(score(s, inst, r.nodeName)).to.be.at.most(score(s, inst, name));
        }
      }),
      RUNS,
    );
  });
});

describe('scheduler: properties of volume replica placement', () => {
  const volumesArb = fc.integer({ min: 0, max: 8 }).chain((n) => fc.tuple(...Array.from({ length: n }, (_, k) => volumeArb(`v${k}`, false))));

  it('never puts two replicas of a volume on one node, nor exceeds storage, nor uses an ineligible node', () => {
    fc.assert(
      fc.property(clusterArb, nodesArb, volumesArb, (c, nodes, pending) => {
        let s = snapshot({ cluster: c, nodes });
        for (const v of pending) {
          const r = scheduleVolumeReplicas(v, s);
          expect(new Set(r.nodeNames).size).to.equal(r.nodeNames.length);
          expect(r.nodeNames.length).to.be.at.most(v.spec.replicas ?? 1);
          if ('unschedulable' in r) expectConsistent(r, r.nodeNames.length, nodes.length);
          for (const name of r.nodeNames) {
            const target = nodes.find((n) => n.metadata.name === name)!;
            expect(isSchedulable(target)).to.equal(true);
            expect(matchesNodeSelector(target, v.spec.nodeSelector)).to.equal(true);
          }
          const placed: Volume = { ...v, status: { replicas: r.nodeNames.map((nodeName, index) => ({ index, nodeName, state: 'Creating' })) } };
          s = { ...s, volumes: [...s.volumes, placed] };
        }
        const usage = nodeAllocation(s);
        for (const n of nodes) expect(usage.get(n.metadata.name!)!.storageBytes).to.be.at.most(nodeCapacity(n, c).storageBytes);
      }),
      RUNS,
    );
  });

  it('keeps every live replica and adds new ones only on other, eligible, non-excluded nodes', () => {
    fc.assert(
      fc.property(clusterArb, nodesArb, volumeArb('v', true), fc.subarray(['a', 'b', 'c', 'node-1']), (c, nodes, v, excluded) => {
        const r = scheduleVolumeReplicas(v, snapshot({ cluster: c, nodes, volumes: [v] }), { excludeNodes: excluded });
        const live = (v.status?.replicas ?? []).filter((x) => !['Lost', 'Failed', 'Deleting'].includes(x.state!)).map((x) => x.nodeName!);
        const kept = live.filter((n) => !excluded.includes(n));
        expect(r.nodeNames).to.include.members(kept);
        expect(new Set(r.nodeNames).size).to.equal(r.nodeNames.length);
        for (const name of r.nodeNames.filter((n) => !kept.includes(n))) {
          expect(excluded).to.not.include(name);
          expect(isSchedulable(nodes.find((n) => n.metadata.name === name)!)).to.equal(true);
        }
      }),
      RUNS,
    );
  });
});

describe('scheduler: determinism', () => {
  const keys = fc.array(fc.integer(), { minLength: 32, maxLength: 32 });

  it('gives the same answer, message included, whatever the order of the input', () => {
    fc.assert(
      fc.property(
        clusterArb,
        nodesArb,
        instancesArb,
        instanceArb('new'),
        volumeArb('vol', true),
        volumeArb('other', true),
        keys,
        (c, nodes, placed, inst, vol, other, k) => {
          const s = placeAll(snapshot({ cluster: c, nodes, volumes: [vol, other] }), placed);
          const withVolume: Instance = { ...inst, spec: { ...inst.spec, volumes: [{ name: 'd', volumeName: 'vol' }] } };
          const mixed: ClusterSnapshot = {
            cluster: c,
            nodes: shuffled(s.nodes, k),
            instances: shuffled(s.instances, k.slice(1)),
            volumes: shuffled(s.volumes, k.slice(2)),
          };
          const shuffledVol: Volume = { ...vol, status: { replicas: shuffled(vol.status?.replicas ?? [], k.slice(3)) } };
          for (const i of [inst, withVolume]) expect(JSON.stringify(scheduleInstance(i, mixed))).to.equal(JSON.stringify(scheduleInstance(i, s)));
          expect(JSON.stringify(scheduleVolumeReplicas(shuffledVol, mixed))).to.equal(JSON.stringify(scheduleVolumeReplicas(vol, s)));
        },
      ),
      RUNS,
    );
  });
});

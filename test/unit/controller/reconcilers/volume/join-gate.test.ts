/**
 * The join gate: a brick that has not joined waits until every instance mounting the volume has applied the
 * client volfile naming it, and the mounts had MOUNT_SWITCH_MS to switch; the plan marks those bricks joinHeld.
 */
import { expect } from 'chai';
import type { WorkItem, WorkItemStatus } from '../../../../../api/workitem.js';
import { joinGate, MOUNT_SWITCH_MS, type JoinGateInput } from '../../../../../controller/reconcilers/volume/join-gate.js';
import { planVolume } from '../../../../../controller/reconcilers/volume/plan.js';
import { EARLIER, LOST, NOW, ofType, replicaWorkItem, volume, volumeObserved } from '../builders.js';

const NEW = 'volume v-client-2 ...';
const OLD = 'volume v-client-1 ...';

function gate(over: Partial<JoinGateInput>, seen: Map<string, number> = new Map()) {
  return joinGate({
    mounts: [],
    clientVolfile: NEW,
    lost: () => false,
    unchangedSince: (v) => (seen.has(v) ? seen.get(v)! : (seen.set(v, NOW), NOW)),
    now: NOW,
    ...over,
  });
}

describe('join gate', () => {
  it('is open when no instance mounts the volume (nothing can write past the brick)', () => {
    expect(gate({})).to.deep.equal({ held: false });
  });

  it('holds while a mount has not applied the volfile naming the brick, or is given an older one, naming the nodes', () => {
    const behind = gate({ mounts: [{ nodeName: 'b', volfile: NEW, applied: false }, { nodeName: 'a', volfile: OLD, applied: true }, { nodeName: 'c', volfile: NEW, applied: true }] });
    expect(behind).to.include({ held: true });
    expect(behind, 'a mount\'s report wakes the Volume: no timer').to.not.have.property('inMs');
    expect(behind.held && behind.message).to.contain('nodes a, b');
  });

  it('then holds MOUNT_SWITCH_MS from when every mount was first seen on it, and looks again then', () => {
    const seen = new Map<string, number>();
    const mounts = [{ nodeName: 'a', volfile: NEW, applied: true }];
    const first = gate({ mounts }, seen);
    expect(first).to.deep.include({ held: true, inMs: MOUNT_SWITCH_MS });
    expect(gate({ mounts, now: NOW + MOUNT_SWITCH_MS - 1 }, seen)).to.deep.include({ held: true, inMs: 1 });
    expect(gate({ mounts, now: NOW + MOUNT_SWITCH_MS }, seen)).to.deep.equal({ held: false });
  });

  it('leaves out mounts on lost nodes: their agents stopped those instances with their lease', () => {
    expect(gate({ mounts: [{ nodeName: 'gone', volfile: OLD, applied: false }], lost: (n) => n === 'gone' })).to.deep.equal({ held: false });
  });
});

describe('planVolume: a brick that has not joined', () => {
  const plain = volume('v', { replicas: 3, driver: 'gluster', size: '10Gi' });
  // In service: a brick joined before (a new volume's bricks join at once: every volfile given out named them all).
  const vol = { ...plain, metadata: { ...plain.metadata, uid: '6f1c2a9e-0000-4000-8000-000000000001' }, status: { replicas: [{ index: 0, state: 'Ready' as const, brick: { port: 49152, state: 'Running' as const, joinedAt: EARLIER } }] } };
  const joined: WorkItemStatus = { observedGeneration: 1, phase: 'Done', volumeReplica: { path: '/p', size: '10Gi', brick: { state: 'Running', port: 49152, joinedAt: EARLIER } } };
  const running: WorkItemStatus = { observedGeneration: 1, phase: 'Done', volumeReplica: { path: '/p', size: '10Gi', brick: { state: 'Running', port: 49152 } } };
  const bricks = (): WorkItem[] => ['a', 'b', 'c'].map((n, i) => replicaWorkItem(vol, i, n, { status: i < 2 ? joined : running }));
  const held = (w: WorkItem[]) => w.map((x) => [x.spec.volumeReplica!.index, !!x.spec.volumeReplica!.brick!.joinHeld]);
  type More = NonNullable<Parameters<typeof volumeObserved>[1]>;
  const desired = (mounts: More['mounts'], more: More = {}) => {
    const plan = planVolume(volumeObserved(vol, { workItems: bricks(), mounts, ...more }));
    return { plan, items: ofType(plan.actions, 'updateWorkItem').map((a) => a.workItem) };
  };

  it("is held (joinHeld) while an instance's mount lags; the bricks that joined are never touched by it", () => {
    const mounts = [{ nodeName: 'x', volfile: 'an older graph', applied: true }];
    const { items } = desired(mounts);
    expect(held(items)).to.deep.equal([[0, false], [1, false], [2, true]]);
    const applied = items.map((w, i) => ({ ...w, status: i < 2 ? joined : running }));
    const plan = planVolume(volumeObserved(vol, { workItems: applied, mounts }));
    expect(ofType(plan.actions, 'updateWorkItem'), 'stable while held').to.deep.equal([]);
    expect(plan.status.replicas![2]).to.deep.include({ state: 'Creating' });
    expect(plan.status.replicas![2]!.message).to.contain("once every instance's mount of the volume has taken the graph naming it");
  });

  it('joins (no joinHeld) once the mounts applied it and had time to switch, and is woken for that', () => {
    const client = desired([]).items[0]!.spec.volumeReplica!.brick!.clientVolfile!;
    const waiting = desired([{ nodeName: 'x', volfile: client, applied: true }]);
    expect(held(waiting.items)).to.deep.equal([[0, false], [1, false], [2, true]]);
    expect(waiting.plan.requeueAfterMs).to.be.at.most(MOUNT_SWITCH_MS);
    const open = desired([{ nodeName: 'x', volfile: client, applied: true }], { unchangedSince: () => NOW - MOUNT_SWITCH_MS });
    expect(held(open.items)).to.deep.equal([[0, false], [1, false], [2, false]]);
    expect(held(desired([{ nodeName: 'x', volfile: 'old', applied: false }], { nodes: { x: LOST } }).items), 'a lost node holds nothing').to.deep.equal([[0, false], [1, false], [2, false]]);
    const fresh = planVolume(volumeObserved({ ...vol, status: undefined }, { workItems: bricks(), mounts: [{ nodeName: 'x', volfile: 'old', applied: false }] }));
    expect(held(ofType(fresh.actions, 'updateWorkItem').map((a) => a.workItem)), 'a new volume: no brick joined yet, nothing to wait for').to.deep.equal([[0, false], [1, false], [2, false]]);
  });
});

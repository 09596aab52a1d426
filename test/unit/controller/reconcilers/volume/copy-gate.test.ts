/**
 * The copy gate: the other bricks copy the data onto a raised replica's brick only once every instance
 * mounting the volume has applied the client volfile naming it, and the mounts had MOUNT_SWITCH_MS to switch;
 * until then the self-heal daemons get a graph without it.
 */
import { expect } from 'chai';
import type { Volume } from '../../../../../api/volume.js';
import type { WorkItem, WorkItemStatus } from '../../../../../api/workitem.js';
import { copyGate, MOUNT_SWITCH_MS, type CopyGateInput } from '../../../../../controller/reconcilers/volume/copy-gate.js';
import { glusterMount } from '../../../../../controller/reconcilers/volume/client-mount.js';
import { HEAL_STALL_MS } from '../../../../../controller/reconcilers/volume/heal-stall.js';
import { planVolume } from '../../../../../controller/reconcilers/volume/plan.js';
import { RAISED_REPLICA_ANNOTATION } from '../../../../../controller/reconcilers/volume/workitem-spec.js';
import { EARLIER, LOST, NOW, READY, ofType, replicaWorkItem, unreachable, volume, volumeObserved } from '../builders.js';

const NEW = 'volume v-client-2 ...';
const OLD = 'volume v-client-1 ...';

function gate(over: Partial<CopyGateInput>, seen: Map<string, number> = new Map()) {
  return copyGate({
    mounts: [],
    clientVolfile: NEW,
    node: () => READY,
    unchangedSince: (v) => (seen.has(v) ? seen.get(v)! : (seen.set(v, NOW), NOW)),
    now: NOW,
    ...over,
  });
}

describe('copy gate', () => {
  it('is open when no instance mounts the volume (nothing can write past the raised brick)', () => {
    expect(gate({})).to.deep.equal({ held: false });
  });

  it('holds while a mount has not applied the volfile naming the raised bricks, or is given an older one, naming the nodes', () => {
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
    expect(gate({ mounts: [{ nodeName: 'gone', volfile: OLD, applied: false }], node: (n) => (n === 'gone' ? LOST : READY) })).to.deep.equal({ held: false });
  });

  it('looks again when a lagging mount\'s node, unreachable now, turns lost (only time passes, nothing wakes the Volume)', () => {
    expect(gate({ mounts: [{ nodeName: 'far', volfile: OLD, applied: false }], node: () => unreachable(7000) })).to.deep.include({ held: true, inMs: 7100 });
  });
});

describe('planVolume: a raised replica', () => {
  const plain = volume('v', { replicas: 3, driver: 'gluster', size: '10Gi' });
  // In service: bricks 0 and 1 joined before the volume was raised to 3.
  const vol = { ...plain, metadata: { ...plain.metadata, uid: '6f1c2a9e-0000-4000-8000-000000000001' }, status: { replicas: [{ index: 0, state: 'Ready' as const, brick: { port: 49152, state: 'Running' as const, joinedAt: EARLIER } }] } };
  const joined: WorkItemStatus = { observedGeneration: 1, phase: 'Done', volumeReplica: { path: '/p', size: '10Gi', brick: { state: 'Running', port: 49152, joinedAt: EARLIER } } };
  const mark = (w: WorkItem, state: string | null): WorkItem => ({ ...w, metadata: { ...w.metadata, annotations: { ...w.metadata.annotations, ...(state ? { [RAISED_REPLICA_ANNOTATION]: state } : {}) } } });
  const bricks = (third: string | null = 'held'): WorkItem[] => ['a', 'b', 'c'].map((n, i) => mark(replicaWorkItem(vol, i, n, { status: joined }), i === 2 ? third : null));
  type More = NonNullable<Parameters<typeof volumeObserved>[1]>;
  const plan = (mounts: More['mounts'], more: More = {}, items = bricks()) => planVolume(volumeObserved(vol, { workItems: items, mounts, ...more }));
  const updated = (p: ReturnType<typeof planVolume>) => ofType(p.actions, 'updateWorkItem').map((a) => a.workItem);
  /** Whether the self-heal daemons' graph names brick 2: without it, nothing is copied onto it. */
  const shdNamesThird = (p: ReturnType<typeof planVolume>) => updated(p).map((w) => w.spec.volumeReplica!.brick!.shdVolfile!.includes('v-client-2'));
  const client = () => updated(plan([]))[0]!.spec.volumeReplica!.brick!.clientVolfile!;

  it("joins at once, but the self-heal daemons get a graph without it while an instance's mount lags; the clients' graph names it", () => {
    const lagging = plan([{ nodeName: 'x', volfile: 'an older graph', applied: true }]);
    expect(shdNamesThird(lagging)).to.deep.equal([false, false, false]);
    expect(updated(lagging).every((w) => w.spec.volumeReplica!.brick!.clientVolfile!.includes('v-client-2')), 'the join goes through the full graph').to.equal(true);
    const settled = updated(lagging).map((w) => ({ ...w, status: joined }));
    const again = plan([{ nodeName: 'x', volfile: 'an older graph', applied: true }], {}, settled);
    expect(updated(again), 'stable while held').to.deep.equal([]);
    expect(again.status.replicas![2]).to.deep.include({ state: 'Creating', copyHeld: true });
    expect(again.status.replicas![1], 'not on the others').to.not.have.property('copyHeld');
    expect(again.status.replicas![2]!.message).to.contain('copy the data onto this one once they may').and.contain('node x');
  });

  it("says it waits for a replacement brick's join, which the mounts' graph needs as well (it names the replacement down until then)", () => {
    const replacing = { ...vol, status: { replicas: [vol.status.replicas[0]!, { index: 1, state: 'Creating' as const, replacement: true, brick: { port: 49152, state: 'Running' as const } }] } };
    const held = planVolume(volumeObserved(replacing, { workItems: bricks(), mounts: [{ nodeName: 'x', volfile: 'the graph naming replica 1 down', applied: true }] }));
    expect(held.status.replicas![2]!.message).to.contain('waiting for the replacement brick of replica 1 to join');
    expect(plan([{ nodeName: 'x', volfile: 'an older graph', applied: true }]).status.replicas![2]!.message, 'none: the mounts lag').to.contain('node x');
  });

  it('is copied onto (full graph, the mark released) once the mounts applied it and had time to switch; woken for that', () => {
    const waiting = plan([{ nodeName: 'x', volfile: client(), applied: true }]);
    expect(shdNamesThird(waiting)).to.deep.equal([false, false, false]);
    expect(waiting.requeueAfterMs).to.be.at.most(MOUNT_SWITCH_MS);
    const open = plan([{ nodeName: 'x', volfile: client(), applied: true }], { unchangedSince: () => NOW - MOUNT_SWITCH_MS });
    expect(shdNamesThird(open)).to.deep.equal([true, true, true]);
    expect(updated(open)[2]!.metadata.annotations![RAISED_REPLICA_ANNOTATION]).to.equal('released');
    const after = plan([{ nodeName: 'x', volfile: 'a later lag', applied: false }], {}, bricks('released'));
    expect(shdNamesThird(after), 'released for good: a later lag of the mounts does not hold it again').to.deep.equal([true, true, true]);
  });

  it('asks for no recrawl while held: the entries owed to the raised brick stand still on purpose', () => {
    const owing: WorkItemStatus = { ...joined, volumeReplica: { ...joined.volumeReplica!, brick: { ...joined.volumeReplica!.brick!, pendingHeals: 1 } } };
    const items = bricks().map((w) => ({ ...w, status: owing }));
    const p = plan([{ nodeName: 'x', volfile: 'old', applied: false }], { unchangedSince: () => NOW - HEAL_STALL_MS }, items);
    expect(updated(p).map((w) => w.spec.volumeReplica!.brick!.recrawl)).to.deep.equal([undefined, undefined, undefined]);
  });

  it('leaves out mounts on lost nodes, and holds nothing for a replacement or a new volume', () => {
    expect(shdNamesThird(plan([{ nodeName: 'x', volfile: 'old', applied: false }], { nodes: { x: LOST } }))).to.deep.equal([true, true, true]);
    expect(shdNamesThird(plan([{ nodeName: 'x', volfile: 'old', applied: false }], {}, bricks(null)))).to.deep.equal([true, true, true]);
  });

  it('marks as raised (held) only a replica placed at an index no brick held while the volume was in service', () => {
    const created = (v: Volume, placed: WorkItem[]) => ofType(planVolume(volumeObserved(v, { workItems: placed, nodeNames: ['a', 'b', 'c'] })).actions, 'createWorkItem').map((a) => a.workItem.metadata.annotations?.[RAISED_REPLICA_ANNOTATION]);
    const two = bricks().slice(0, 2);
    expect(created(vol, two), 'raised from 2 to 3 in service').to.deep.equal(['held']);
    expect(created({ ...vol, status: undefined }, []), 'a new volume').to.deep.equal([undefined, undefined, undefined]);
    const lostThird = { ...vol, status: { replicas: [...vol.status.replicas, { index: 2, state: 'Lost' as const, nodeName: 'gone', path: '/p', brick: { port: 49152, address: '10.0.0.9', joinedAt: EARLIER } }] } };
    expect(created(lostThird, two), 'a replacement').to.deep.equal([undefined]);
  });

  it("leaves a held raised brick out of the instances' mounts until it has joined (a read before its join could be served from it, empty)", () => {
    const replica = (index: number, joined: boolean, copyHeld?: boolean) => ({ index, state: 'Creating' as const, nodeName: `n${index}`, path: `/b/${index}`, ...(copyHeld ? { copyHeld } : {}), brick: { port: 49152 + index, address: `10.0.0.${index + 1}`, ...(joined ? { joinedAt: EARLIER } : {}) } });
    const named = (replicas: ReturnType<typeof replica>[]) => [0, 1, 2].map((i) => glusterMount({ ...vol, status: { replicas } })!.volfile.includes(`c1-v-client-${i}`));
    expect(named([replica(0, true), replica(1, true), replica(2, false, true)])).to.deep.equal([true, true, false]);
    expect(named([replica(0, true), replica(1, true), replica(2, true, true)]), 'joined: named, and the copy gate waits for the mounts to take it').to.deep.equal([true, true, true]);
    expect(named([replica(0, true), replica(1, true), replica(2, false)]), 'not raised (a replacement): named at once').to.deep.equal([true, true, true]);
  });
});

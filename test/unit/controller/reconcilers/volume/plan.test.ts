/** planVolume: replica placement, resize, refused shrink, lost replicas, phases, deletion — pure, no I/O. */
import { expect } from 'chai';
import { AGENT_FINALIZER, NODE_LABEL, OWNER_KIND_LABEL, OWNER_NAME_LABEL, replicaWorkItemName } from '../../../../../api/names.js';
import type { Node } from '../../../../../api/node.js';
import { DOWN_BRICK, type Volume, type VolumeReplicaStatus } from '../../../../../api/volume.js';
import type { WorkItemBrickStatus, WorkItemStatus } from '../../../../../api/workitem.js';
import { glusterMount } from '../../../../../controller/reconcilers/volume/client-mount.js';
import { planVolume } from '../../../../../controller/reconcilers/volume/plan.js';
import { HEAL_STALL_MS } from '../../../../../controller/reconcilers/volume/heal-stall.js';
import { scheduleVolumeReplicas } from '../../../../../controller/scheduler/index.js';
import { EARLIER, GONE, LOST, NOW, NOW_TEXT, NS, cluster, events, ofType, replicaDone, replicaWorkItem, unreachable, volume, volumeObserved } from '../builders.js';

const cond = (conditions: Array<{ type: string }> | undefined, type: string) => conditions?.find((c) => c.type === type) as { status: string; reason: string; message: string } | undefined;

describe('planVolume', () => {
  it('adds the controller finalizer when missing', () => {
    const plan = planVolume(volumeObserved(volume('data', {}, undefined, { finalizers: [] })));
    expect(plan.actions[0]).to.deep.equal({ type: 'addFinalizer' });
    expect(ofType(planVolume(volumeObserved(volume('data'))).actions, 'addFinalizer')).to.have.length(0);
  });

  describe('placement', () => {
    it('creates one WorkItem per replica on the scheduler’s nodes, named replicaWorkItemName(volume, index, node)', () => {
      const vol = volume('data', { replicas: 3, allocation: 'preallocated', options: { fsync: 'true' } });
      const o = volumeObserved(vol, { nodeNames: ['b', 'a', 'c'] });
      const plan = planVolume(o);
      const created = ofType(plan.actions, 'createWorkItem').map((a) => a.workItem);
      expect(created.map((w) => w.metadata.name)).to.deep.equal([replicaWorkItemName('data', 0, 'b'), replicaWorkItemName('data', 1, 'a'), replicaWorkItemName('data', 2, 'c')]);
      expect(created.map((w) => w.spec.nodeName)).to.deep.equal(['b', 'a', 'c']);
      const w = created[0]!;
      expect(w.metadata.namespace).to.equal(NS);
      expect(w.metadata.labels).to.deep.equal({ [OWNER_KIND_LABEL]: 'Volume', [OWNER_NAME_LABEL]: 'data', [NODE_LABEL]: 'b' });
      expect(w.metadata.finalizers).to.deep.equal([AGENT_FINALIZER]);
      expect(w.metadata.ownerReferences).to.deep.equal([{ apiVersion: 'cairn.dev/v1alpha1', kind: 'Volume', name: 'data', uid: 'uid-data', controller: true, blockOwnerDeletion: true }]);
      expect(w.spec).to.deep.equal({
        nodeName: 'b',
        type: 'VolumeReplica',
        owner: { kind: 'Volume', name: 'data', uid: 'uid-data' },
        volumeReplica: { volumeName: 'data', index: 0, size: '10Gi', driver: 'file', allocation: 'preallocated', reclaimPolicy: 'Delete', options: { fsync: 'true' } },
      });
      expect(o.scheduled()).to.equal(1);
      expect(plan.status.phase).to.equal('Creating');
      expect(plan.status.readyReplicas).to.equal(0);
      expect(plan.status.replicas!.map((r) => [r.index, r.nodeName, r.state, r.workItemName])).to.deep.equal([
        [0, 'b', 'Creating', 'data.r0.b'],
        [1, 'a', 'Creating', 'data.r1.a'],
        [2, 'c', 'Creating', 'data.r2.c'],
      ]);
      expect(cond(plan.status.conditions, 'Scheduled')).to.include({ status: 'True' });
      expect(events(plan.actions)).to.deep.equal([]);
    });

    it('defaults to one replica', () => {
      const plan = planVolume(volumeObserved(volume('data')));
      expect(ofType(plan.actions, 'createWorkItem')).to.have.length(1);
    });

    it('creates only the missing replicas, never on a node that already holds one', () => {
      const vol = volume('data', { replicas: 3 });
      const existing = replicaWorkItem(vol, 1, 'a', { status: replicaDone() });
      // The scheduler lists kept nodes first, then new ones.
      const plan = planVolume(volumeObserved(vol, { workItems: [existing], nodeNames: ['a', 'b', 'c'] }));
      const created = ofType(plan.actions, 'createWorkItem').map((a) => [a.workItem.spec.volumeReplica!.index, a.workItem.spec.nodeName]);
      expect(created).to.deep.equal([
        [0, 'b'],
        [2, 'c'],
      ]);
    });

    it('writes nothing and does not call the scheduler when every replica is in place and current', () => {
      const vol = volume('data', { replicas: 2 });
      const o = volumeObserved(vol, { workItems: [replicaWorkItem(vol, 0, 'a', { status: replicaDone() }), replicaWorkItem(vol, 1, 'b', { status: replicaDone() })] });
      const plan = planVolume(o);
      expect(plan.actions).to.deep.equal([]);
      expect(o.scheduled()).to.equal(0);
      expect(plan.status.phase).to.equal('Ready');
      expect(plan.status.readyReplicas).to.equal(2);
      expect(plan.status.capacity).to.equal('10Gi');
      expect(cond(plan.status.conditions, 'Ready')).to.include({ status: 'True', reason: 'ReplicasReady' });
      expect(plan.requeueAfterMs).to.equal(undefined);
    });

    it('creates what it can and reports partial placement as Scheduled=False Unschedulable with a FailedScheduling Warning', () => {
      const message = '1/3 nodes are available: 2 Insufficient storage. 2 of 3 replicas are still missing.';
      const plan = planVolume(volumeObserved(volume('data', { replicas: 3 }), { nodeNames: ['a'], message }));
      expect(ofType(plan.actions, 'createWorkItem').map((a) => a.workItem.metadata.name)).to.deep.equal(['data.r0.a']);
      expect(events(plan.actions)).to.deep.equal([['Warning', 'FailedScheduling']]);
      expect(cond(plan.status.conditions, 'Scheduled')).to.include({ status: 'False', reason: 'Unschedulable', message });
      expect(plan.status.message).to.equal(message);
      expect(plan.status.replicas!.map((r) => r.state)).to.deep.equal(['Creating', 'Pending', 'Pending']);
      expect(plan.status.phase).to.equal('Creating');
    });

    it('is Pending when nothing can be placed', () => {
      const plan = planVolume(volumeObserved(volume('data', { replicas: 2 }), { nodeNames: [], message: '0/0 nodes are available' }));
      expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
      expect(plan.status.phase).to.equal('Pending');
      expect(cond(plan.status.conditions, 'Ready')).to.include({ status: 'False', reason: 'Pending' });
    });

    it('deletes duplicate WorkItems of one index and those beyond the replica count', () => {
      const vol = volume('data', { replicas: 1 });
      const plan = planVolume(
        volumeObserved(vol, { workItems: [replicaWorkItem(vol, 0, 'a', { status: replicaDone() }), replicaWorkItem(vol, 0, 'b'), replicaWorkItem(vol, 1, 'c')] }),
      );
      expect(ofType(plan.actions, 'deleteWorkItem').map((a) => a.name)).to.deep.equal(['data.r0.b', 'data.r1.c']);
      expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
    });

    it('does not count a terminating WorkItem as a replica', () => {
      const vol = volume('data', { replicas: 1 });
      const plan = planVolume(volumeObserved(vol, { workItems: [replicaWorkItem(vol, 0, 'a', { deleting: true })], nodeNames: ['b'] }));
      expect(ofType(plan.actions, 'createWorkItem').map((a) => a.workItem.spec.nodeName)).to.deep.equal(['b']);
    });
  });

  describe('driver gluster', () => {
    const uid = '0b9c3f2a-1d4e-4f60-8a7b-9c0d1e2f3a4b';
    const gluster = (replicas = 3) => {
      const v = volume('data', { replicas, driver: 'gluster' });
      return { ...v, metadata: { ...v.metadata, uid } };
    };

    it('gives each replica a brick under its node\'s data dir, on the port brickHome chose, with its volfile', () => {
      const plan = planVolume(volumeObserved(gluster(), { nodeNames: ['a', 'b', 'c'], brickHome: (n) => ({ dataDir: `/var/lib/cairn-${n}`, port: n === 'b' ? 49153 : 49152 }) }));
      const bricks = ofType(plan.actions, 'createWorkItem').map((a) => a.workItem.spec.volumeReplica!);
      expect(bricks.map((r) => [r.driver, r.brick?.path, r.brick?.port])).to.deep.equal([
        ['gluster', `/var/lib/cairn-a/bricks/${NS}/data-0`, 49152],
        ['gluster', `/var/lib/cairn-b/bricks/${NS}/data-1`, 49153],
        ['gluster', `/var/lib/cairn-c/bricks/${NS}/data-2`, 49152],
      ]);
      expect(bricks[1]!.brick).to.include({ volume: `${NS}-data`, volumeId: uid });
      expect(bricks[1]!.brick!.volfile).to.include('option transport.socket.listen-port 49153').and.include(`option directory /var/lib/cairn-b/bricks/${NS}/data-1`);
    });

    it('once every brick is placed, adds the self-heal daemon\'s volfile naming them all; then keeps each brick where it is', () => {
      const vol = gluster(2);
      const existing = [replicaWorkItem(vol, 0, 'a'), replicaWorkItem(vol, 1, 'b')];
      expect(existing.map((w) => w.spec.volumeReplica!.brick!.shdVolfile)).to.deep.equal([undefined, undefined]);
      const updates = ofType(planVolume(volumeObserved(vol, { workItems: existing })).actions, 'updateWorkItem').map((a) => a.workItem);
      expect(updates).to.have.length(2);
      const shd = updates[0]!.spec.volumeReplica!.brick!.shdVolfile!;
      expect(shd).to.include('option iam-self-heal-daemon yes').and.include(`option remote-subvolume /data/b/bricks/${NS}/data-1`);
      expect(updates.map((w) => [w.spec.volumeReplica!.brick!.port, w.spec.volumeReplica!.brick!.shdVolfile])).to.deep.equal([[49152, shd], [49152, shd]]);
      expect(ofType(planVolume(volumeObserved(vol, { workItems: updates })).actions, 'updateWorkItem')).to.deep.equal([]);
    });

    it('gives each brick the other bricks\' joins, so that a join restarts their self-heal daemons (the join marks the root owed to the new brick)', () => {
      const vol = gluster(3);
      const joined = (at: string): WorkItemStatus => ({ observedGeneration: 1, phase: 'Done', volumeReplica: { brick: { state: 'Running', port: 49152, joinedAt: at } } });
      const placed = ofType(planVolume(volumeObserved(vol, { workItems: ['a', 'b', 'c'].map((n, i) => replicaWorkItem(vol, i, n)) })).actions, 'updateWorkItem').map((a) => a.workItem);
      expect(placed.map((w) => w.spec.volumeReplica!.brick!.peerJoins)).to.deep.equal([undefined, undefined, undefined]);
      const withStatus = placed.map((w, i) => ({ ...w, status: i < 2 ? joined(`2024-05-01T10:00:0${i}Z`) : undefined }));
      const peerJoins = (items: typeof withStatus) => ofType(planVolume(volumeObserved(vol, { workItems: items })).actions, 'updateWorkItem').map((a) => [a.workItem.spec.volumeReplica!.index, a.workItem.spec.volumeReplica!.brick!.peerJoins]);
      expect(peerJoins(withStatus)).to.deep.equal([
        [0, '1@2024-05-01T10:00:01Z'],
        [1, '0@2024-05-01T10:00:00Z'],
        [2, '0@2024-05-01T10:00:00Z 1@2024-05-01T10:00:01Z'],
      ]);
      // A replacement brick 2 joins: bricks 0 and 1 are told, brick 2 itself is not.
      const settled = ofType(planVolume(volumeObserved(vol, { workItems: withStatus })).actions, 'updateWorkItem').map((a, i) => ({ ...a.workItem, status: withStatus[i]!.status }));
      const replaced = settled.map((w, i) => (i === 2 ? { ...w, status: joined('2024-05-01T11:00:00Z') } : w));
      expect(peerJoins(replaced)).to.deep.equal([
        [0, '1@2024-05-01T10:00:01Z 2@2024-05-01T11:00:00Z'],
        [1, '0@2024-05-01T10:00:00Z 2@2024-05-01T11:00:00Z'],
      ]);
    });

    it('runs no self-heal daemon while a brick is unplaced or its node has no address', () => {
      const vol = gluster(2);
      const one = [replicaWorkItem(vol, 0, 'a')];
      expect(ofType(planVolume(volumeObserved(vol, { workItems: one })).actions, 'updateWorkItem')).to.deep.equal([]);
      const both = [replicaWorkItem(vol, 0, 'a'), replicaWorkItem(vol, 1, 'b')];
      expect(ofType(planVolume(volumeObserved(vol, { workItems: both, nodeAddress: (n) => (n === 'a' ? '10.0.0.1' : undefined) })).actions, 'updateWorkItem')).to.deep.equal([]);
    });

    describe('status', () => {
      // Bricks that joined their volume long ago.
      const running = (pendingHeals = 0): WorkItemStatus => ({ observedGeneration: 1, phase: 'Done', volumeReplica: { path: '/p', size: '10Gi', brick: { state: 'Running', port: 49152, pendingHeals, joinedAt: EARLIER } } });
      const bricks = (vol: Volume, heals: number[]) => ['a', 'b', 'c'].map((n, i) => replicaWorkItem(vol, i, n, { status: running(heals[i]) }));
      const address = (n: string) => `10.0.0.${n.charCodeAt(0) - 96}`;

      it('reports each brick\'s address, port, state and pending heals; Ready, Degraded False when every brick runs with nothing to heal', () => {
        const vol = gluster();
        const plan = planVolume(volumeObserved(vol, { workItems: bricks(vol, [0, 0, 0]), nodeAddress: address }));
        expect(plan.status.replicas!.map((r) => r.brick)).to.deep.equal([1, 2, 3].map((i) => ({ address: `10.0.0.${i}`, port: 49152, state: 'Running', pendingHeals: 0, joinedAt: EARLIER })));
        expect(plan.status.phase).to.equal('Ready');
        expect(cond(plan.status.conditions, 'Degraded')).to.include({ status: 'False', reason: 'AllReplicasHealthy' });
      });

      it('asks every self-heal daemon to start again when pending heals stood still for HEAL_STALL_MS, and looks again before that', () => {
        const vol = gluster();
        const settled = planVolume(volumeObserved(vol, { workItems: bricks(vol, [2, 0, 1]), nodeAddress: address }));
        const items = ofType(settled.actions, 'updateWorkItem').map((a, i) => ({ ...a.workItem, status: running([2, 0, 1][i]) }));
        const fresh = planVolume(volumeObserved(vol, { workItems: items, nodeAddress: address, unchangedSince: () => NOW - 10_000 }));
        expect(ofType(fresh.actions, 'updateWorkItem')).to.deep.equal([]);
        expect(fresh.requeueAfterMs).to.equal(HEAL_STALL_MS - 10_000);
        const stalled = planVolume(volumeObserved(vol, { workItems: items, nodeAddress: address, unchangedSince: () => NOW - HEAL_STALL_MS }));
        expect(ofType(stalled.actions, 'updateWorkItem').map((a) => a.workItem.spec.volumeReplica!.brick!.recrawl)).to.deep.equal([0, 1, 2].map(() => `${NOW_TEXT}#0`));
        // The counts are compared in index order, whatever order the cache lists the bricks in.
        const seen: string[] = [];
        planVolume(volumeObserved(vol, { workItems: [...items].reverse(), nodeAddress: address, unchangedSince: (_slot, value) => (seen.push(value), NOW) }));
        expect(seen).to.deep.equal(['2 0 1']);
      });

      it('is Degraded with reason HealPending while entries wait, and Ready again at 0', () => {
        const vol = gluster();
        const plan = planVolume(volumeObserved(vol, { workItems: bricks(vol, [4, 0, 0]), nodeAddress: address }));
        expect(plan.status.phase).to.equal('Degraded');
        expect(cond(plan.status.conditions, 'Degraded')).to.include({ status: 'True', reason: 'HealPending' });
        expect(cond(plan.status.conditions, 'Ready')).to.include({ status: 'False', reason: 'HealPending' });
        expect(plan.status.message).to.match(/^4 entries wait to be healed/);
      });

      it('judges quorum only once a brick has joined: a volume still being created is not QuorumLost', () => {
        const vol = gluster();
        const unjoined = ['a', 'b', 'c'].map((n, i) => replicaWorkItem(vol, i, n, { status: { observedGeneration: 1, phase: 'InProgress' } }));
        const plan = planVolume(volumeObserved(vol, { workItems: unjoined, nodeAddress: address }));
        expect(plan.status.phase).to.equal('Creating');
        expect(cond(plan.status.conditions, 'Degraded')).to.include({ status: 'False' });
      });

      it('keeps quorum while the bricks wait to grow: running at the old size, they serve (an expand once said QuorumLost, "reads and writes fail")', () => {
        const base = gluster();
        const vol = { ...base, spec: { ...base.spec, size: '20Gi' }, status: { capacity: '10Gi' } };
        const items = bricks(vol, [0, 0, 0]).map((w) => ({ ...w, status: { ...w.status!, volumeReplica: { ...w.status!.volumeReplica!, sizeBytes: 10 * 2 ** 30 } } }));
        const plan = planVolume(volumeObserved(vol, { workItems: items, nodeAddress: address }));
        expect(plan.status.replicas!.map((r) => r.state)).to.deep.equal(['Resizing', 'Resizing', 'Resizing']);
        expect(cond(plan.status.conditions, 'Degraded')).to.include({ status: 'False' });
      });

      it('counts a brick on an unreachable node offline (BrickOffline), and two of three QuorumLost with the hint in the message', () => {
        const vol = gluster();
        const one = planVolume(volumeObserved(vol, { workItems: bricks(vol, [0, 0, 0]), nodeAddress: address, nodes: { b: unreachable(5000) } }));
        expect(one.status.replicas![1]!.brick).to.include({ state: 'Stopped' });
        expect(cond(one.status.conditions, 'Degraded')).to.include({ status: 'True', reason: 'BrickOffline' });
        const two = planVolume(volumeObserved(vol, { workItems: bricks(vol, [0, 0, 0]), nodeAddress: address, nodes: { b: unreachable(5000), c: unreachable(5000) } }));
        expect(cond(two.status.conditions, 'Degraded')).to.include({ status: 'True', reason: 'QuorumLost' });
        expect(two.status.message).to.include('too few for quorum').and.include('Bring back brick 1 on node b, brick 2 on node c');
      });

      it('holds a new brick as Creating until it joined, then the Volume HealPending until the others had time to report (requeued for then)', () => {
        const vol = gluster();
        const placed = bricks(vol, [0, 0, 0]);
        const layout = planVolume(volumeObserved(vol, { workItems: placed, nodeAddress: address }));
        const withLayout = ofType(layout.actions, 'updateWorkItem').map((a) => a.workItem);
        expect(withLayout[0]!.spec.volumeReplica!.brick!.clientVolfile).to.include('type cluster/replicate').and.not.include('iam-self-heal-daemon');
        const joined = (at?: number) => withLayout.map((w) => {
          const { joinedAt: _before, ...brick } = w.status!.volumeReplica!.brick!;
          return { ...w, status: { ...w.status!, volumeReplica: { ...w.status!.volumeReplica!, brick: { ...brick, ...(at !== undefined ? { joinedAt: new Date(at).toISOString() } : {}) } } } };
        });
        const o = volumeObserved(vol, { workItems: joined(), nodeAddress: address });
        expect(planVolume(o).status.replicas!.map((r) => [r.state, r.message])).to.deep.equal(Array(3).fill(['Creating', 'the brick runs and is joining its volume']));
        const settling = planVolume(volumeObserved(vol, { workItems: joined(o.now - 1000), nodeAddress: address }));
        expect(settling.status.phase).to.equal('Degraded');
        expect(cond(settling.status.conditions, 'Degraded')).to.include({ reason: 'HealPending' });
        expect(settling.requeueAfterMs).to.equal(4000);
        expect(planVolume(volumeObserved(vol, { workItems: joined(o.now - 6000), nodeAddress: address })).status.phase).to.equal('Ready');
        // An agent's clock an hour ahead: the settle counts from when the controller saw the join, not from joinedAt.
        const hourAhead = joined(o.now + 3_600_000);
        const seen = (agoMs: number) => volumeObserved(vol, { workItems: hourAhead, nodeAddress: address, seenAt: () => o.now - agoMs });
        expect(planVolume(seen(1000)).requeueAfterMs).to.equal(4000);
        expect(planVolume(seen(6000)).status.phase).to.equal('Ready');
      });

      it('grows one brick at a time, lowest index first, the next once the last reports the new size', () => {
        const small = gluster();
        const grown = { ...small, spec: { ...small.spec, size: '20Gi' } };
        const at = (sizes: Array<[asked: string, reported: string, finishedAgoMs?: number]>) => sizes.map(([asked, reported, ago], i) => {
          const finishedAt = ago === undefined ? {} : { finishedAt: new Date(NOW - ago).toISOString() };
          return replicaWorkItem(grown, i, ['a', 'b', 'c'][i]!, { size: asked, status: { ...running(), ...finishedAt, volumeReplica: { path: '/p', size: reported, brick: { state: 'Running', port: 49152, pendingHeals: 0 } } } });
        });
        const plan = (ws: ReturnType<typeof at>) => planVolume(volumeObserved(grown, { workItems: ws, nodeAddress: address }));
        const asked = (ws: ReturnType<typeof at>) => ofType(plan(ws).actions, 'updateWorkItem').map((a) => [a.workItem.spec.volumeReplica!.index, a.workItem.spec.volumeReplica!.size]);
        // (Every WorkItem is updated anyway here: the builders' bricks lack the layout volfiles.)
        expect(asked(at([['10Gi', '10Gi'], ['10Gi', '10Gi'], ['10Gi', '10Gi']]))).to.deep.equal([[0, '20Gi'], [1, '10Gi'], [2, '10Gi']]);
        // Brick 0 is growing: the others wait.
        expect(asked(at([['20Gi', '10Gi'], ['10Gi', '10Gi'], ['10Gi', '10Gi']]))).to.deep.equal([[0, '20Gi'], [1, '10Gi'], [2, '10Gi']]);
        // Brick 0 grew 1 s ago: clients may not have reconnected to it yet; the plan looks again once they have.
        const settling = at([['20Gi', '20Gi', 1000], ['10Gi', '10Gi'], ['10Gi', '10Gi']]);
        expect(asked(settling)).to.deep.equal([[0, '20Gi'], [1, '10Gi'], [2, '10Gi']]);
        expect(plan(settling).requeueAfterMs).to.equal(4000);
        // Brick 0 grew 6 s ago: brick 1 is next.
        expect(asked(at([['20Gi', '20Gi', 6000], ['10Gi', '10Gi'], ['10Gi', '10Gi']]))).to.deep.equal([[0, '20Gi'], [1, '20Gi'], [2, '10Gi']]);
        // ...unless another brick is down or still heals: stopping brick 1 then could lose quorum, or leave one copy of what brick 0 missed.
        const healing = at([['20Gi', '20Gi', 6000], ['10Gi', '10Gi'], ['10Gi', '10Gi']]);
        healing[2]!.status!.volumeReplica!.brick!.pendingHeals = 3;
        expect(asked(healing)).to.deep.equal([[0, '20Gi'], [1, '10Gi'], [2, '10Gi']]);
        const ws = at([['20Gi', '20Gi', 6000], ['10Gi', '10Gi'], ['10Gi', '10Gi']]);
        const downC = ofType(planVolume(volumeObserved(grown, { workItems: ws, nodeAddress: address, nodes: { c: unreachable(5000) } })).actions, 'updateWorkItem');
        expect(downC.map((a) => [a.workItem.spec.volumeReplica!.index, a.workItem.spec.volumeReplica!.size])).to.deep.equal([[0, '20Gi'], [1, '10Gi'], [2, '10Gi']]);
      });

      it('keeps a lost brick\'s last address and path while it is recreated (clients still name it)', () => {
        const vol = gluster();
        const before = planVolume(volumeObserved(vol, { workItems: bricks(vol, [0, 0, 0]), nodeAddress: address })).status;
        const after = planVolume(volumeObserved({ ...vol, status: before }, { workItems: bricks(vol, [0, 0, 0]), nodeAddress: address, nodes: { c: LOST } })).status;
        expect(after.replicas![2]).to.deep.include({ state: 'Lost', nodeName: 'c', path: '/p', brick: { address: '10.0.0.3', port: 49152, state: 'Stopped', joinedAt: EARLIER } });
        expect(cond(after.conditions, 'Degraded')).to.include({ reason: 'BrickOffline' });
      });

      it("names a replacement brick down in the instances' mounts until it has joined (between its start and its join it answered their reads, empty)", () => {
        const vol = gluster();
        const all = bricks(vol, [0, 0, 0]);
        const before = planVolume(volumeObserved(vol, { workItems: all, nodeAddress: address })).status;
        const lost = planVolume(volumeObserved({ ...vol, status: before }, { workItems: all, nodeAddress: address, nodes: { c: LOST } })).status;
        const unplaced = planVolume(volumeObserved({ ...vol, status: lost }, { workItems: all.slice(0, 2), nodeAddress: address, nodes: { c: LOST }, nodeNames: ['a', 'b'], message: 'no other node' })).status;
        const { joinedAt: _notYet, ...unjoined } = running().volumeReplica!.brick!;
        const replacement = (brick: WorkItemBrickStatus) => replicaWorkItem(vol, 2, 'd', { status: { ...running(), volumeReplica: { ...running().volumeReplica!, brick } } });
        const round = (status: typeof before, brick: WorkItemBrickStatus) => planVolume(volumeObserved({ ...vol, status }, { workItems: [...all.slice(0, 2), replacement(brick)], nodeAddress: address, nodes: { c: LOST } })).status;
        const client2 = (status: typeof before) => /volume c1-data-client-2\n(?:.*\n)*?\s*option remote-host (\S+)\n\s*option remote-port (\d+)/.exec(glusterMount({ ...vol, status })!.volfile)!.slice(1);
        expect(client2(unplaced), 'lost: at its last address').to.deep.equal(['10.0.0.3', '49152']);

        const joining = round(unplaced, unjoined);
        expect(joining.replicas![2]).to.include({ nodeName: 'd', replacement: true });
        expect(client2(joining), 'the replacement runs, not joined: named down').to.deep.equal([DOWN_BRICK.host, String(DOWN_BRICK.port)]);
        expect(round(joining, unjoined).replicas![2], 'the next round keeps the mark').to.include({ replacement: true });
        expect(client2(round(joining, unjoined))).to.deep.equal([DOWN_BRICK.host, String(DOWN_BRICK.port)]);

        const joined = round(joining, running().volumeReplica!.brick!);
        expect(joined.replicas![2]).to.not.have.property('replacement');
        expect(client2(joined), 'joined: at its own address').to.deep.equal(['10.0.0.4', '49152']);
        expect(client2(planVolume(volumeObserved(vol, { workItems: [...all.slice(0, 2), replacement(unjoined)], nodeAddress: address })).status), 'a brick of a new volume is named at once').to.deep.equal(['10.0.0.4', '49152']);
      });

      it('names it down in the mounts only: the join and the self-heal daemons reach it at its address', () => {
        const vol = gluster();
        const all = bricks(vol, [0, 0, 0]);
        const before = planVolume(volumeObserved(vol, { workItems: all, nodeAddress: address })).status;
        const { joinedAt: _notYet, ...unjoined } = running().volumeReplica!.brick!;
        const newBrick = replicaWorkItem(vol, 2, 'd', { status: { ...running(), volumeReplica: { ...running().volumeReplica!, brick: unjoined } } });
        const plan = planVolume(volumeObserved({ ...vol, status: { ...before, replicas: [...before.replicas!.slice(0, 2), { ...before.replicas![2]!, replacement: true, brick: { port: 49152, state: 'Running', address: '10.0.0.9' } }] } }, { workItems: [...all.slice(0, 2), newBrick], nodeAddress: address }));
        expect(plan.status.replicas![2]).to.include({ replacement: true });
        for (const a of ofType(plan.actions, 'updateWorkItem')) {
          const b = a.workItem.spec.volumeReplica!.brick!;
          for (const graph of [b.clientVolfile!, b.shdVolfile!]) expect(graph).to.include('option remote-host 10.0.0.4').and.not.include(`option remote-host ${DOWN_BRICK.host}`);
        }
      });

      it('marks no brick that stays where it joined (its node unreachable), and a brick that never joined once it moves while the volume holds data', () => {
        const vol = gluster();
        const all = bricks(vol, [0, 0, 0]);
        const before = planVolume(volumeObserved(vol, { workItems: all, nodeAddress: address })).status;
        const away = planVolume(volumeObserved({ ...vol, status: before }, { workItems: all, nodeAddress: address, nodes: { c: unreachable(5_000) } })).status;
        expect(away.replicas!.map((r) => r.replacement)).to.deep.equal([undefined, undefined, undefined]);

        const { joinedAt: _notYet, ...unjoined } = running().volumeReplica!.brick!;
        const third = (node: string) => replicaWorkItem(vol, 2, node, { status: { ...running(), volumeReplica: { ...running().volumeReplica!, brick: unjoined } } });
        const neverJoined = planVolume(volumeObserved({ ...vol, status: before }, { workItems: [...all.slice(0, 2), third('c')], nodeAddress: address })).status;
        expect(neverJoined.replicas![2], 'it just lost its join: the agent joins it again').to.include({ replacement: true });
        const waiting = { ...before, replicas: [...before.replicas!.slice(0, 2), { ...neverJoined.replicas![2]!, replacement: undefined }] };
        expect(planVolume(volumeObserved({ ...vol, status: waiting }, { workItems: [...all.slice(0, 2), third('c')], nodeAddress: address })).status.replicas![2], 'still on its node').to.not.have.property('replacement');
        expect(planVolume(volumeObserved({ ...vol, status: waiting }, { workItems: [...all.slice(0, 2), third('d')], nodeAddress: address })).status.replicas![2], 'moved to d').to.include({ replacement: true });
      });

      /** The self-heal graph the plan gives each surviving brick's WorkItem. */
      const shdGraphs = (plan: ReturnType<typeof planVolume>) => ofType(plan.actions, 'updateWorkItem').map((a) => a.workItem.spec.volumeReplica!.brick!.shdVolfile);

      it('names a lost brick released with its node at its last address in the survivors\' self-heal graph (dropped, their self-heal daemons stopped)', () => {
        const vol = gluster();
        const all = bricks(vol, [0, 0, 0]);
        const before = planVolume(volumeObserved(vol, { workItems: all, nodeAddress: address })).status;
        const released = planVolume(volumeObserved({ ...vol, status: before }, { workItems: all, nodeAddress: address, nodes: { c: LOST } }));
        expect(ofType(released.actions, 'releaseWorkItem').map((a) => a.name)).to.deep.equal(['data.r2.c']);
        const survivors = planVolume(volumeObserved({ ...vol, status: released.status }, { workItems: all.slice(0, 2), nodeAddress: address, nodes: { c: LOST }, nodeNames: ['a', 'b'], message: 'no other node' }));
        const graphs = shdGraphs(survivors);
        expect(graphs).to.have.length(2);
        for (const g of graphs) expect(g).to.be.a('string').and.include('option remote-host 10.0.0.3').and.include(`${NS}-data-client-2`);
      });

      it('gives no brick a graph without the raised one once it is placed, even on a node with no address yet (it would join a graph without itself)', () => {
        const two = gluster(2);
        const both = bricks(two, [0, 0]).slice(0, 2);
        const status = planVolume(volumeObserved(two, { workItems: both, nodeAddress: address })).status;
        const raised = gluster(3);
        const third = replicaWorkItem(raised, 2, 'c');
        const plan = planVolume(volumeObserved({ ...raised, status }, { workItems: [...both, third], nodeAddress: (n) => (n === 'c' ? undefined : address(n)) }));
        for (const a of ofType(plan.actions, 'updateWorkItem')) {
          const client = a.workItem.spec.volumeReplica!.brick?.clientVolfile;
          expect(client === undefined || client.includes(`${NS}-data-client-2`), `replica ${a.workItem.spec.volumeReplica!.index}`).to.equal(true);
        }
      });

      it('names a kept brick whose Node vanished at its last address (recreateLostReplicas false)', () => {
        const vol = gluster();
        const all = bricks(vol, [0, 0, 0]);
        const status = planVolume(volumeObserved(vol, { workItems: all, nodeAddress: address })).status;
        const kept = planVolume(volumeObserved({ ...vol, status }, { cluster: cluster({ failover: { recreateLostReplicas: false } }), workItems: all, nodes: { c: GONE }, nodeAddress: (n) => (n === 'c' ? undefined : address(n)) }));
        expect(ofType(kept.actions, 'releaseWorkItem')).to.have.length(0);
        const graphs = shdGraphs(kept);
        expect(graphs).to.have.length(3);
        for (const g of graphs) expect(g).to.include('option remote-host 10.0.0.3');
      });

      it('keeps the survivors\' graphs as they were while a raised replica finds no node', () => {
        const two = gluster(2);
        const both = bricks(two, [0, 0]).slice(0, 2);
        const status = planVolume(volumeObserved(two, { workItems: both, nodeAddress: address })).status;
        const raised = planVolume(volumeObserved({ ...gluster(3), status }, { workItems: both, nodeAddress: address, nodeNames: ['a', 'b'], message: 'no third node' }));
        expect(ofType(raised.actions, 'createWorkItem')).to.have.length(0);
        const graphs = shdGraphs(raised);
        expect(graphs).to.have.length(2);
        for (const g of graphs) expect(g).to.be.a('string').and.include(`${NS}-data-client-1`).and.not.include(`${NS}-data-client-2`);
      });
    });

    it('with an arbiter, runs features/arbiter on the third brick only and counts it in the client graph', () => {
      const v = gluster();
      const vol = { ...v, spec: { ...v.spec, arbiter: true } };
      const bricks = ofType(planVolume(volumeObserved(vol, { nodeNames: ['a', 'b', 'c'] })).actions, 'createWorkItem').map((a) => a.workItem.spec.volumeReplica!.brick!.volfile);
      expect(bricks.map((b) => b.includes('type features/arbiter'))).to.deep.equal([false, false, true]);
      const placed = [0, 1, 2].map((i) => replicaWorkItem(vol, i, ['a', 'b', 'c'][i]!));
      const client = ofType(planVolume(volumeObserved(vol, { workItems: placed })).actions, 'updateWorkItem')[0]!.workItem.spec.volumeReplica!.brick!.clientVolfile;
      expect(client).to.include('option arbiter-count 1');
    });

    it('carries spec.options into the client and self-heal volfiles, leaving each brick\'s own volfile alone', () => {
      const vol = gluster(2);
      const tuned = { ...vol, spec: { ...vol.spec, options: { 'network.ping-timeout': '7', 'cluster.heal-timeout': '30' } } };
      const placed = [replicaWorkItem(vol, 0, 'a'), replicaWorkItem(vol, 1, 'b')];
      const brick = ofType(planVolume(volumeObserved(tuned, { workItems: placed })).actions, 'updateWorkItem')[0]!.workItem.spec.volumeReplica!.brick!;
      expect(brick.clientVolfile).to.include('option ping-timeout 7');
      expect(brick.shdVolfile).to.include('option heal-timeout 30');
      expect(brick.volfile).to.equal(placed[0]!.spec.volumeReplica!.brick!.volfile);
    });

    it('stops every brick of a Stopped volume: phase Stopped, Ready False with how to start it; instances wait', () => {
      const v = gluster();
      const vol = { ...v, spec: { ...v.spec, state: 'Stopped' as const } };
      const running = (stopped: boolean): WorkItemStatus => ({ observedGeneration: 1, phase: 'Done', volumeReplica: { path: '/p', size: '10Gi', brick: { state: stopped ? 'Stopped' : 'Running', port: 49152, joinedAt: EARLIER } } });
      const at = (stopped: boolean[]) => stopped.map((s, i) => replicaWorkItem(vol, i, ['a', 'b', 'c'][i]!, { status: running(s) }));
      const stopping = planVolume(volumeObserved(vol, { workItems: at([true, false, false]) }));
      expect(ofType(stopping.actions, 'updateWorkItem').map((a) => a.workItem.spec.volumeReplica!.brick!.stopped)).to.deep.equal([true, true, true]);
      expect(stopping.status.phase).to.equal('Stopped');
      expect(stopping.status.message).to.match(/^stopping the bricks \(2 still run/);
      const stopped = planVolume(volumeObserved(vol, { workItems: at([true, true, true]) }));
      expect(stopped.status.readyReplicas).to.equal(3);
      expect(cond(stopped.status.conditions, 'Ready')).to.include({ status: 'False', reason: 'Stopped' });
      expect(stopped.status.message).to.include('no brick runs').and.include('cairn volume start data');
      expect(cond(stopped.status.conditions, 'Degraded')).to.include({ status: 'False' });
    });

    it('reports split-brain per brick from what two agents say their bricks owe each other (Degraded SplitBrain)', () => {
      const vol = gluster();
      const owed = [[{ gfid: 'g1', bricks: [1] }], [{ gfid: 'g1', bricks: [0] }, { gfid: 'g2', bricks: [2] }], []];
      const ws = owed.map((o, i) => replicaWorkItem(vol, i, ['a', 'b', 'c'][i]!, { status: { observedGeneration: 1, phase: 'Done', volumeReplica: { path: '/p', size: '10Gi', brick: { state: 'Running', port: 49152, pendingHeals: o.length, joinedAt: EARLIER, owed: o } } } }));
      const plan = planVolume(volumeObserved(vol, { workItems: ws }));
      expect(plan.status.replicas!.map((r) => r.brick?.splitBrain)).to.deep.equal([1, 1, undefined]);
      expect(cond(plan.status.conditions, 'Degraded')).to.include({ status: 'True', reason: 'SplitBrain' });
    });

    it('leaves the brick out while the node has not reported its data dir (the agent then says the spec has no brick)', () => {
      const plan = planVolume(volumeObserved(gluster(1), { brickHome: () => undefined }));
      expect(ofType(plan.actions, 'createWorkItem')[0]!.workItem.spec.volumeReplica!.brick).to.equal(undefined);
    });
  });

  describe('resizing', () => {
    it('grows: updates each WorkItem with the new size, keeping resourceVersion and finalizers', () => {
      const old = volume('data', { replicas: 2, size: '10Gi' }, { capacity: '10Gi' });
      const wis = [replicaWorkItem(old, 0, 'a', { status: replicaDone(), resourceVersion: '31' }), replicaWorkItem(old, 1, 'b', { status: replicaDone(), resourceVersion: '32' })];
      const grown = volume('data', { replicas: 2, size: '20Gi' }, { capacity: '10Gi' }, { generation: 2 });
      const plan = planVolume(volumeObserved(grown, { workItems: wis }));
      const updates = ofType(plan.actions, 'updateWorkItem').map((a) => a.workItem);
      expect(updates.map((w) => [w.metadata.name, w.metadata.resourceVersion, w.spec.volumeReplica!.size, w.metadata.finalizers])).to.deep.equal([
        ['data.r0.a', '31', '20Gi', [AGENT_FINALIZER]],
        ['data.r1.b', '32', '20Gi', [AGENT_FINALIZER]],
      ]);
      expect(plan.status.capacity).to.equal('20Gi');
      // The agent reported the old size: not Ready until it reports the new one.
      expect(plan.status.readyReplicas).to.equal(0);
      expect(cond(plan.status.conditions, 'SpecAccepted')).to.include({ status: 'True' });
    });

    it('refuses to shrink: keeps the current size and says so in SpecAccepted=False ShrinkNotSupported', () => {
      const vol = volume('data', { replicas: 1, size: '5Gi' }, { capacity: '10Gi' });
      const wi = replicaWorkItem(vol, 0, 'a', { size: '10Gi', status: replicaDone('10Gi') });
      const plan = planVolume(volumeObserved(vol, { workItems: [wi] }));
      expect(ofType(plan.actions, 'updateWorkItem')).to.have.length(0);
      expect(plan.status.capacity).to.equal('10Gi');
      expect(plan.status.phase).to.equal('Ready');
      const c = cond(plan.status.conditions, 'SpecAccepted')!;
      expect(c).to.include({ status: 'False', reason: 'ShrinkNotSupported' });
      expect(c.message).to.contain('5Gi').and.contain('10Gi');
      // A new replica gets the kept size too.
      const fresh = planVolume(volumeObserved(vol, { nodeNames: ['b'] }));
      expect(ofType(fresh.actions, 'createWorkItem')[0]!.workItem.spec.volumeReplica!.size).to.equal('10Gi');
    });

    it('refuses to lower replicas below the ones that exist (ReplicaReductionNotSupported) and deletes none', () => {
      const three = volume('data', { replicas: 3 });
      const wis = ['a', 'b', 'c'].map((n, i) => replicaWorkItem(three, i, n, { status: replicaDone() }));
      const existing: VolumeReplicaStatus[] = wis.map((w, i) => ({ index: i, nodeName: w.spec.nodeName, state: 'Ready' }));
      const lowered = volume('data', { replicas: 1 }, { replicas: existing, capacity: '10Gi' }, { generation: 2 });
      const plan = planVolume(volumeObserved(lowered, { workItems: wis }));
      expect(ofType(plan.actions, 'deleteWorkItem')).to.have.length(0);
      expect(plan.status.replicas).to.have.length(3);
      expect(cond(plan.status.conditions, 'SpecAccepted')).to.include({ status: 'False', reason: 'ReplicaReductionNotSupported' });
    });

    it('lets replicas be lowered when the dropped ones were never placed (they do not exist)', () => {
      const message = '2/2 nodes are available. 1 of 3 replicas is still missing.';
      const first = planVolume(volumeObserved(volume('data', { replicas: 3 }), { nodeNames: ['a', 'b'], message }));
      expect(first.status.replicas!.map((r) => r.state)).to.deep.equal(['Creating', 'Creating', 'Pending']);
      const wis = ofType(first.actions, 'createWorkItem').map((a) => ({ ...a.workItem, metadata: { ...a.workItem.metadata, uid: 'u', generation: 1 }, status: replicaDone() }));
      const lowered = volume('data', { replicas: 2 }, first.status, { generation: 2 });
      const plan = planVolume(volumeObserved(lowered, { workItems: wis, nodeNames: ['a', 'b'] }));
      expect(cond(plan.status.conditions, 'SpecAccepted')).to.include({ status: 'True' });
      expect(plan.status.replicas).to.have.length(2);
      expect(plan.status.phase).to.equal('Ready');
      expect(plan.actions).to.deep.equal([]);
    });

    it('still refuses to drop a placed replica behind an unplaced one', () => {
      const vol = volume('data', { replicas: 2 }, {
        replicas: [
          { index: 0, state: 'Pending' },
          { index: 1, nodeName: 'b', state: 'Ready' },
          { index: 2, nodeName: 'c', state: 'Ready' },
        ],
      });
      const plan = planVolume(volumeObserved(vol, { workItems: [replicaWorkItem(vol, 1, 'b', { status: replicaDone() }), replicaWorkItem(vol, 2, 'c', { status: replicaDone() })], nodeNames: ['b', 'c'] }));
      expect(ofType(plan.actions, 'deleteWorkItem')).to.have.length(0);
      expect(cond(plan.status.conditions, 'SpecAccepted')).to.include({ status: 'False', reason: 'ReplicaReductionNotSupported' });
    });
  });

  describe('lost nodes', () => {
    /** A gluster Volume (its uid a UUID, as volfiles need). */
    const gv = (spec: Parameters<typeof volume>[1], status?: Parameters<typeof volume>[2]) => {
      const v = volume('data', { driver: 'gluster', ...spec }, status);
      return { ...v, metadata: { ...v.metadata, uid: '0b9c3f2a-1d4e-4f60-8a7b-9c0d1e2f3a4b' } };
    };
    /** A gluster replica's report: its brick runs and joined an hour ago (`owed`: what it holds that other bricks missed). */
    const brickDone = (size = '10Gi', owed?: Array<{ gfid: string; bricks: number[] }>, more: Partial<WorkItemBrickStatus> = {}) =>
      ({ ...replicaDone(size), volumeReplica: { path: '/data/r', size, brick: { state: 'Running' as const, joinedAt: EARLIER, ...(owed ? { owed } : {}), ...more } } });

    it('releases a replica on a lost node with a ReplicaLost Warning and reschedules its index on the next round', () => {
      const vol = gv({ replicas: 2 });
      const wis = [replicaWorkItem(vol, 0, 'a', { status: brickDone() }), replicaWorkItem(vol, 1, 'b', { status: brickDone() })];
      // As the real scheduler answers while the lost replica's WorkItem is still cached: it keeps node b.
      const o = volumeObserved(vol, { workItems: wis, nodes: { b: LOST }, nodeNames: ['a', 'b'] });
      const plan = planVolume(o);
      expect(ofType(plan.actions, 'releaseWorkItem')).to.deep.equal([{ type: 'releaseWorkItem', name: 'data.r1.b', uid: 'uid-data.r1.b' }]);
      expect(events(plan.actions)).to.deep.equal([['Warning', 'ReplicaLost']]);
      expect(ofType(plan.actions, 'createWorkItem'), 'no replica recreated on the lost node').to.have.length(0);
      expect(plan.status.replicas![1]).to.include({ index: 1, nodeName: 'b', state: 'Lost' });
      expect(plan.status.phase).to.equal('Degraded');
      expect(plan.status.readyReplicas).to.equal(1);

      const next = planVolume(volumeObserved(gv({ replicas: 2 }, plan.status), { workItems: [wis[0]!], nodes: { b: LOST }, nodeNames: ['a', 'c'] }));
      expect(ofType(next.actions, 'createWorkItem').map((a) => a.workItem.metadata.name)).to.deep.equal(['data.r1.c']);
      expect(ofType(next.actions, 'releaseWorkItem')).to.have.length(0);
    });

    it('does not recreate the lost replica on the lost node with the real scheduler either', () => {
      const vol = gv({ replicas: 2, size: '1Gi' });
      const wis = [replicaWorkItem(vol, 0, 'a', { status: brickDone('1Gi') }), replicaWorkItem(vol, 1, 'b', { status: brickDone('1Gi') })];
      const mk = (name: string, phase: 'Ready' | 'Unreachable'): Node => ({
        metadata: { name, namespace: NS },
        status: { phase, capacity: { cpus: 4, memory: '8Gi', storage: '100Gi' }, conditions: [{ type: 'Ready', status: phase === 'Ready' ? 'True' : 'Unknown', reason: 'x', message: '', lastTransitionTime: '2024-01-01T00:00:00Z' }] },
      });
      // Replica placements as the controller's snapshot derives them from the cached WorkItems.
      const seen = { ...vol, status: { replicas: wis.map((w) => ({ index: w.spec.volumeReplica!.index, nodeName: w.spec.nodeName, state: 'Ready' as const })) } };
      const snap = { nodes: [mk('a', 'Ready'), mk('b', 'Unreachable'), mk('c', 'Ready')], instances: [], volumes: [seen] };
      const o = volumeObserved(vol, { workItems: wis, nodes: { b: LOST } });
      o.schedule = () => {
        const r = scheduleVolumeReplicas(seen, snap);
        return 'unschedulable' in r ? { nodeNames: r.nodeNames, message: r.message } : { nodeNames: r.nodeNames };
      };
      const plan = planVolume(o);
      expect(ofType(plan.actions, 'releaseWorkItem').map((a) => a.name)).to.deep.equal(['data.r1.b']);
      expect(ofType(plan.actions, 'createWorkItem').map((a) => a.workItem.spec.nodeName)).not.to.include('b');
    });

    describe('keeps the only good copy of the data on its lost node (released, it was replaced empty and then deleted when the node returned)', () => {
      const kept = (vol: ReturnType<typeof volume>, wis: ReturnType<typeof replicaWorkItem>[], nodes: Record<string, typeof LOST>) => {
        const plan = planVolume(volumeObserved(vol, { workItems: wis, nodes }));
        expect(ofType(plan.actions, 'releaseWorkItem')).to.have.length(0);
        expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
        expect(events(plan.actions)).to.deep.equal([]);
        return plan;
      };

      it('a file volume: every replica is a copy of its own', () => {
        const vol = volume('data', { replicas: 2 });
        const plan = kept(vol, [replicaWorkItem(vol, 0, 'a', { status: replicaDone() }), replicaWorkItem(vol, 1, 'b', { status: replicaDone() })], { b: LOST });
        expect(plan.status.replicas![1]).to.include({ index: 1, nodeName: 'b', state: 'Lost' });
        expect(plan.status.replicas![1]!.message).to.match(/node b is lost and holds the only good copy.*kubectl delete workitem -n \S+ data\.r1\.b/);
        expect(plan.status.phase).to.equal('Degraded');
      });

      it('a single gluster replica, and one whose Node vanished', () => {
        const vol = gv({ replicas: 1 });
        kept(vol, [replicaWorkItem(vol, 0, 'a', { status: brickDone() })], { a: LOST });
        kept(vol, [replicaWorkItem(vol, 0, 'a', { status: brickDone() })], { a: GONE });
      });

      it('gluster, when the other brick missed writes the lost one holds', () => {
        const vol = gv({ replicas: 2 });
        kept(vol, [replicaWorkItem(vol, 0, 'a', { status: brickDone() }), replicaWorkItem(vol, 1, 'b', { status: brickDone('10Gi', [{ gfid: 'g1', bricks: [0] }]) })], { b: LOST });
      });

      it('gluster, when the other brick missed writes past the first entries its peer lists (owedTo), or its peer left entries uninspected', () => {
        const vol3 = gv({ replicas: 3 });
        // The lost brick's list shows only what brick 2 missed; brick 0 missed writes to a file further on.
        const capped = brickDone('10Gi', [{ gfid: 'g1', bricks: [2] }], { owedTo: [0, 2] });
        kept(vol3, [replicaWorkItem(vol3, 0, 'a', { status: brickDone() }), replicaWorkItem(vol3, 1, 'b', { status: capped }), replicaWorkItem(vol3, 2, 'c', { status: brickDone() })], { b: LOST });
        const vol = gv({ replicas: 2 });
        const lostOne = replicaWorkItem(vol, 1, 'b', { status: brickDone() });
        kept(vol, [replicaWorkItem(vol, 0, 'a', { status: brickDone() }), replicaWorkItem(vol, 1, 'b', { status: brickDone('10Gi', [], { uninspected: 1 }) })], { b: LOST });
        // Its own uninspected entries blame nobody else's copy of what it holds: brick 0 is the good copy.
        const plan = planVolume(volumeObserved(vol, { workItems: [replicaWorkItem(vol, 0, 'a', { status: brickDone('10Gi', [], { uninspected: 1 }) }), lostOne], nodes: { b: LOST } }));
        expect(ofType(plan.actions, 'releaseWorkItem').map((a) => a.name)).to.deep.equal(['data.r1.b']);
      });

      it('gluster, while the other brick joined too recently for the reports of what it missed to be in', () => {
        const vol = gv({ replicas: 2 });
        const wis = [replicaWorkItem(vol, 0, 'a', { status: brickDone('10Gi', undefined, { joinedAt: NOW_TEXT }) }), replicaWorkItem(vol, 1, 'b', { status: brickDone() })];
        const seenAgo = (ms: number) => volumeObserved(vol, { workItems: wis, nodes: { b: LOST }, seenAt: () => NOW - ms });
        const settling = planVolume(seenAgo(1_000));
        expect(ofType(settling.actions, 'releaseWorkItem')).to.have.length(0);
        expect(settling.status.replicas![1]!.message, 'no advice to give the data up meanwhile').to.match(/recreated elsewhere once the other bricks have reported/).and.not.include('kubectl delete');
        expect(settling.requeueAfterMs, 'looked at again once the join settled').to.equal(4_000);
        expect(ofType(planVolume(seenAgo(5_000)).actions, 'releaseWorkItem').map((a) => a.name)).to.deep.equal(['data.r1.b']);
      });

      it('gluster, when the other brick has not joined, does not run, or is on a node out of touch', () => {
        const vol = gv({ replicas: 2 });
        const lostOne = replicaWorkItem(vol, 1, 'b', { status: brickDone() });
        const notJoined = { ...brickDone(), volumeReplica: { path: '/data/r', size: '10Gi', brick: { state: 'Running' as const } } };
        const stopped = { ...brickDone(), volumeReplica: { path: '/data/r', size: '10Gi', brick: { state: 'Stopped' as const, joinedAt: NOW_TEXT } } };
        kept(vol, [replicaWorkItem(vol, 0, 'a', { status: notJoined }), lostOne], { b: LOST });
        kept(vol, [replicaWorkItem(vol, 0, 'a', { status: stopped }), lostOne], { b: LOST });
        kept(vol, [replicaWorkItem(vol, 0, 'a', { status: brickDone() }), lostOne], { a: unreachable(5_000), b: LOST });
        kept(vol, [replicaWorkItem(vol, 0, 'a', { status: brickDone() }), lostOne], { a: LOST, b: LOST });
      });

      it('gluster with an arbiter: the arbiter, which holds no data, is never the good copy of a data brick', () => {
        const vol = gv({ replicas: 3, arbiter: true });
        const wis = [replicaWorkItem(vol, 0, 'a', { status: brickDone() }), replicaWorkItem(vol, 1, 'b', { status: brickDone() }), replicaWorkItem(vol, 2, 'c', { status: brickDone() })];
        kept(vol, wis, { a: LOST, b: LOST });
        // The other data brick is: one lost data brick is released.
        const plan = planVolume(volumeObserved(vol, { workItems: wis, nodes: { a: LOST } }));
        expect(ofType(plan.actions, 'releaseWorkItem').map((a) => a.name)).to.deep.equal(['data.r0.a']);
      });

      it('gluster, when the lost brick alone passes the quorum rule and its mount may have given the others up before fencing (ping timeout under the node lease)', () => {
        const fast = { ...gv({ replicas: 2 }) };
        fast.spec = { ...fast.spec, options: { 'network.ping-timeout': '5' } };
        const wis = (vol: typeof fast) => [replicaWorkItem(vol, 0, 'a', { status: brickDone() }), replicaWorkItem(vol, 1, 'b', { status: brickDone() })];
        const mounts = [{ nodeName: 'a', volfile: '', applied: true }];
        const planOf = (vol: typeof fast, lost: string, extra: Partial<Parameters<typeof volumeObserved>[1]> = {}) => planVolume(volumeObserved(vol, { workItems: wis(vol), nodes: { [lost]: LOST }, mounts, ...extra }));
        // The first of two passes quorum-type auto alone: a mount may have written to it alone for 5 s of the 10 s lease.
        const plan = planOf(fast, 'a');
        expect(ofType(plan.actions, 'releaseWorkItem')).to.have.length(0);
        expect(plan.status.replicas![0]!.message).to.match(/node a is lost and may hold writes no other brick has \(network\.ping-timeout is shorter than the node lease.*kubectl delete workitem/);
        // The second does not pass alone: the first is the good copy, as with the default ping timeout (42 s) for either.
        expect(ofType(planOf(fast, 'b').actions, 'releaseWorkItem').map((a) => a.name)).to.deep.equal(['data.r1.b']);
        const slow = gv({ replicas: 2 });
        expect(ofType(planOf(slow, 'a').actions, 'releaseWorkItem').map((a) => a.name)).to.deep.equal(['data.r0.a']);
        // Under quorum-type none any brick passes alone.
        const none = { ...fast, spec: { ...fast.spec, options: { ...fast.spec.options, 'cluster.quorum-type': 'none' } } };
        expect(ofType(planOf(none, 'b').actions, 'releaseWorkItem')).to.have.length(0);
        // Mounted by no instance, nothing wrote to it.
        expect(ofType(planOf(fast, 'a', { mounts: [] }).actions, 'releaseWorkItem').map((a) => a.name)).to.deep.equal(['data.r0.a']);
      });

      it('but releases both lost replicas of three when the third holds everything', () => {
        const vol = gv({ replicas: 3 });
        const wis = [replicaWorkItem(vol, 0, 'a', { status: brickDone() }), replicaWorkItem(vol, 1, 'b', { status: brickDone() }), replicaWorkItem(vol, 2, 'c', { status: brickDone() })];
        const plan = planVolume(volumeObserved(vol, { workItems: wis, nodes: { a: LOST, b: LOST } }));
        expect(ofType(plan.actions, 'releaseWorkItem').map((a) => a.name)).to.deep.equal(['data.r0.a', 'data.r1.b']);
      });
    });

    it('keeps a replica on a lost node when Cluster recreateLostReplicas is false', () => {
      const vol = volume('data', { replicas: 1 });
      const plan = planVolume(volumeObserved(vol, { cluster: cluster({ failover: { recreateLostReplicas: false } }), workItems: [replicaWorkItem(vol, 0, 'a', { status: replicaDone() })], nodes: { a: LOST } }));
      expect(ofType(plan.actions, 'releaseWorkItem')).to.have.length(0);
      expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
      expect(events(plan.actions)).to.deep.equal([]);
      expect(plan.requeueAfterMs, 'the node coming back wakes it; no 100 ms loop meanwhile').to.equal(undefined);
    });

    it('treats a vanished Node as lost', () => {
      const vol = gv({ replicas: 2 });
      const plan = planVolume(volumeObserved(vol, { workItems: [replicaWorkItem(vol, 0, 'a', { status: brickDone() }), replicaWorkItem(vol, 1, 'b', { status: brickDone() })], nodes: { b: GONE } }));
      expect(ofType(plan.actions, 'releaseWorkItem')).to.have.length(1);
    });

    it('waits for an unreachable node: keeps the replica, says so, requeues when it would count as lost', () => {
      const vol = volume('data', { replicas: 1 });
      const plan = planVolume(volumeObserved(vol, { workItems: [replicaWorkItem(vol, 0, 'a')], nodes: { a: unreachable(15_000) } }));
      expect(plan.actions).to.deep.equal([]);
      expect(plan.requeueAfterMs).to.be.within(15_000, 16_000);
      expect(plan.status.replicas![0]).to.include({ state: 'Creating', message: 'node a is unreachable' });
    });
  });

  describe('phases', () => {
    it('is Failed when every replica failed, with the agent’s message and hint', () => {
      const vol = volume('data', { replicas: 1 });
      const wi = replicaWorkItem(vol, 0, 'a', { status: { phase: 'Failed', observedGeneration: 1, lastError: { reason: 'NoSpace', message: 'disk full', hint: 'free space on /var' } } });
      const plan = planVolume(volumeObserved(vol, { workItems: [wi] }));
      expect(plan.status.phase).to.equal('Failed');
      expect(plan.status.replicas![0]).to.include({ state: 'Failed', message: 'disk full Hint: free space on /var' });
      expect(plan.status.message).to.equal('disk full Hint: free space on /var');
      expect(cond(plan.status.conditions, 'Ready')).to.include({ status: 'False', reason: 'ReplicaFailed' });
    });

    it('is Degraded when some but not all replicas are Ready', () => {
      const vol = volume('data', { replicas: 2 });
      const plan = planVolume(volumeObserved(vol, { workItems: [replicaWorkItem(vol, 0, 'a', { status: replicaDone() }), replicaWorkItem(vol, 1, 'b')] }));
      expect(plan.status.phase).to.equal('Degraded');
      expect(plan.status.message).to.equal('1/2 replicas ready');
      expect(cond(plan.status.conditions, 'Ready')).to.include({ status: 'False', reason: 'Degraded' });
    });

    it('counts a replica Ready only for the current WorkItem generation and size; Resizing while the agent reports another size', () => {
      const vol = volume('data', { replicas: 1 });
      const stale = planVolume(volumeObserved(vol, { workItems: [replicaWorkItem(vol, 0, 'a', { generation: 2, status: replicaDone('10Gi', '/p', 1) })] }));
      expect(stale.status.replicas![0]!.state).to.equal('Creating');
      const resizing = planVolume(volumeObserved(vol, { workItems: [replicaWorkItem(vol, 0, 'a', { status: { observedGeneration: 1, phase: 'InProgress', volumeReplica: { size: '5Gi', sizeBytes: 5 * 2 ** 30 } } })] }));
      expect(resizing.status.replicas![0]!.state).to.equal('Resizing');
    });

    it('mirrors path and size the agent reports', () => {
      const vol = volume('data', { replicas: 1 });
      const plan = planVolume(volumeObserved(vol, { workItems: [replicaWorkItem(vol, 0, 'a', { status: replicaDone('10Gi', '/srv/data/r0') })] }));
      expect(plan.status.replicas![0]).to.deep.equal({ index: 0, nodeName: 'a', path: '/srv/data/r0', size: '10Gi', state: 'Ready', workItemName: 'data.r0.a' });
    });
  });

  describe('deletion', () => {
    const deleting = () => volume('data', { replicas: 2 }, { capacity: '10Gi' }, { deleting: true });

    it('deletes every WorkItem, is Deleting, and keeps the finalizer while any remains', () => {
      const vol = deleting();
      const o = volumeObserved(vol, { workItems: [replicaWorkItem(vol, 0, 'a', { status: replicaDone() }), replicaWorkItem(vol, 1, 'b', { deleting: true })] });
      const plan = planVolume(o);
      expect(plan.actions).to.deep.equal([{ type: 'deleteWorkItem', name: 'data.r0.a', uid: 'uid-data.r0.a' }]);
      expect(o.scheduled()).to.equal(0);
      expect(plan.status.phase).to.equal('Deleting');
      expect(plan.status.replicas!.map((r) => r.state)).to.deep.equal(['Ready', 'Deleting']);
    });

    it('releases WorkItems on lost nodes and requeues for those on unreachable ones', () => {
      const vol = deleting();
      const plan = planVolume(volumeObserved(vol, { workItems: [replicaWorkItem(vol, 0, 'a', { deleting: true }), replicaWorkItem(vol, 1, 'b', { deleting: true })], nodes: { a: LOST, b: unreachable(8000) } }));
      expect(plan.actions).to.deep.equal([{ type: 'releaseWorkItem', name: 'data.r0.a', uid: 'uid-data.r0.a' }]);
      expect(plan.requeueAfterMs).to.be.within(8000, 9000);
    });

    it('removes the finalizer once no WorkItem remains, and never adds it', () => {
      expect(planVolume(volumeObserved(deleting())).actions).to.deep.equal([{ type: 'removeFinalizer' }]);
      expect(planVolume(volumeObserved(volume('data', {}, undefined, { deleting: true, finalizers: [] }))).actions).to.deep.equal([]);
    });
  });
});

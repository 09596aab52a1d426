/** planInstance: placement, updates, moves, drain, failover with fencing, deletion — pure, no I/O. */
import { expect } from 'chai';
import { AGENT_FINALIZER, CONTROLLER_FINALIZER, NODE_LABEL, OWNER_KIND_LABEL, OWNER_NAME_LABEL, RESTARTED_AT_ANNOTATION, instanceWorkItemName } from '../../../../../api/names.js';
import type { Node } from '../../../../../api/node.js';
import type { Volume } from '../../../../../api/volume.js';
import { LEASE_EXPIRED_REASON, nodeView, type NodeView } from '../../../../../controller/node-health.js';
import type { InstanceObserved } from '../../../../../controller/reconcilers/instance/observed.js';
import { planInstance } from '../../../../../controller/reconcilers/instance/plan.js';
import { SPEC_HASH_ANNOTATION } from '../../../../../controller/reconcilers/instance/workitem-spec.js';
import {
  DRAINING,
  EARLIER,
  GONE,
  LOST,
  NOW,
  NOW_TEXT,
  NS,
  READY,
  cluster,
  events,
  instance,
  instanceObserved,
  instanceWorkItem,
  ofType,
  running,
  unreachable,
  volume,
} from '../builders.js';

const cond = (conditions: Array<{ type: string }> | undefined, type: string) => conditions?.find((c) => c.type === type) as { status: string; reason: string; message: string; lastTransitionTime: string } | undefined;

describe('planInstance', () => {
  describe('finalizer', () => {
    it('adds the controller finalizer first when missing', () => {
      const plan = planInstance(instanceObserved(instance('web', {}, undefined, { finalizers: [] })));
      expect(plan.actions[0]).to.deep.equal({ type: 'addFinalizer' });
    });

    it('does not add it again', () => {
      const plan = planInstance(instanceObserved(instance('web')));
      expect(ofType(plan.actions, 'addFinalizer')).to.have.length(0);
    });
  });

  describe('an unplaced instance', () => {
    it('creates its WorkItem on the node the scheduler chose, as the controller (owner, labels, finalizer)', () => {
      const inst = instance('web', { cpus: 2, memory: '256Mi' });
      const o = instanceObserved(inst, { decision: { nodeName: 'n2' } });
      const plan = planInstance(o);
      const [create, ...more] = ofType(plan.actions, 'createWorkItem');
      expect(more).to.have.length(0);
      const w = create!.workItem;
      expect(w.metadata.name).to.equal(instanceWorkItemName('web', 'n2'));
      expect(w.metadata.namespace).to.equal(NS);
      expect(w.metadata.labels).to.deep.equal({ [OWNER_KIND_LABEL]: 'Instance', [OWNER_NAME_LABEL]: 'web', [NODE_LABEL]: 'n2' });
      expect(w.metadata.finalizers).to.deep.equal([AGENT_FINALIZER]);
      expect(w.metadata.ownerReferences).to.deep.equal([{ apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', name: 'web', uid: 'uid-web', controller: true, blockOwnerDeletion: true }]);
      expect(w.metadata.annotations?.[SPEC_HASH_ANNOTATION]).to.match(/^[0-9a-f]{16}$/);
      expect(w.spec.nodeName).to.equal('n2');
      expect(w.spec.type).to.equal('InstanceRuntime');
      expect(w.spec.owner).to.deep.equal({ kind: 'Instance', name: 'web', uid: 'uid-web', generation: 1 });
      expect(w.spec.instance).to.include({ driver: 'process', runState: 'Running', cpus: 2, memory: '256Mi', restartPolicy: 'Always', terminationGracePeriodSeconds: 10 });
      expect(w.metadata.resourceVersion).to.equal(undefined);
      expect(o.scheduled()).to.equal(1);
    });

    it('writes phase Scheduled with Scheduled=True naming the node, and no Event for a first placement', () => {
      const plan = planInstance(instanceObserved(instance('web'), { decision: { nodeName: 'n2' } }));
      expect(events(plan.actions)).to.deep.equal([]);
      expect(plan.status.phase).to.equal('Scheduled');
      expect(plan.status.nodeName).to.equal('n2');
      expect(plan.status.workItemName).to.equal('web.n2');
      expect(plan.status.observedGeneration).to.equal(1);
      expect(cond(plan.status.conditions, 'Scheduled')).to.include({ status: 'True', reason: 'Scheduled', message: 'placed on node n2' });
      expect(cond(plan.status.conditions, 'Ready')).to.include({ status: 'False', reason: 'Scheduled' });
      expect(plan.requeueAfterMs).to.equal(undefined);
    });

    it('records a placement after FailedScheduling in a Normal Scheduled Event', () => {
      const unschedulable = { conditions: [{ type: 'Scheduled', status: 'False' as const, reason: 'Unschedulable', message: 'no room', lastTransitionTime: NOW_TEXT }] };
      const plan = planInstance(instanceObserved(instance('web', {}, unschedulable), { decision: { nodeName: 'n2' } }));
      expect(ofType(plan.actions, 'event').map((e) => e.message)).to.deep.equal(['placed on node n2']);
    });

    it('records a placement after one on another node in an Event naming both', () => {
      const plan = planInstance(instanceObserved(instance('web', {}, { nodeName: 'n1' }), { decision: { nodeName: 'n2' } }));
      expect(ofType(plan.actions, 'event').map((e) => [e.reason, e.message])).to.deep.equal([['Scheduled', 'placed on node n2 (was on node n1)']]);
    });

    it('names the claim and takes qemu defaults from Cluster.spec.driverDefaults', () => {
      const c = cluster({
        driverDefaults: { qemu: { accelerator: 'tcg', machine: 'pc', cmdline: 'console=ttyS0' } },
      });
      const inst = instance('vm', { driver: 'qemu', process: undefined, qemu: { machine: 'q35', bootDisk: { path: '/img.qcow2', format: 'qcow2' }, migration: { mode: 'Live' } } });
      const plan = planInstance(instanceObserved(inst, { cluster: c }));
      const spec = ofType(plan.actions, 'createWorkItem')[0]!.workItem.spec.instance!;
      expect(spec.fencing).to.deep.equal({ leaseName: 'instance-vm' });
      expect(spec.qemu).to.deep.equal({ accelerator: 'tcg', machine: 'q35', cmdline: 'console=ttyS0', bootDisk: { path: '/img.qcow2', format: 'qcow2' } });
    });

    it('copies the restartedAt annotation into restartToken', () => {
      const inst = instance('web', {}, undefined, { annotations: { [RESTARTED_AT_ANNOTATION]: '2024-05-01T10:00:00Z' } });
      const plan = planInstance(instanceObserved(inst));
      expect(ofType(plan.actions, 'createWorkItem')[0]!.workItem.spec.instance!.restartToken).to.equal('2024-05-01T10:00:00Z');
    });

    it('gives each attached volume the index and path of its replica on the chosen node', () => {
      const data: Volume = volume('data', { replicas: 2 }, { replicas: [{ index: 0, nodeName: 'n1', path: '/d/data-0', state: 'Ready' }, { index: 1, nodeName: 'n2', path: '/d/data-1', state: 'Ready' }] });
      const inst = instance('db', { volumes: [{ name: 'data', volumeName: 'data' }, { name: 'logs', volumeName: 'missing', readOnly: true }] });
      const plan = planInstance(instanceObserved(inst, { volumes: new Map([['data', data]]), decision: { nodeName: 'n2' } }));
      expect(ofType(plan.actions, 'createWorkItem')[0]!.workItem.spec.instance!.volumes).to.deep.equal([
        { name: 'data', volumeName: 'data', replicaIndex: 1, path: '/d/data-1' },
        { name: 'logs', volumeName: 'missing', readOnly: true },
      ]);
    });

    describe('when unschedulable', () => {
      const message = '0/3 nodes are available: 3 Insufficient memory.';

      it('creates nothing and writes Pending with Scheduled=False Unschedulable and the message', () => {
        const plan = planInstance(instanceObserved(instance('web'), { decision: { unschedulable: true, message } }));
        expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
        expect(plan.status.phase).to.equal('Pending');
        expect(plan.status.message).to.equal(message);
        expect(plan.status.nodeName).to.equal(undefined);
        expect(cond(plan.status.conditions, 'Scheduled')).to.include({ status: 'False', reason: 'Unschedulable', message });
        expect(cond(plan.status.conditions, 'Ready')).to.include({ status: 'False', reason: 'Unschedulable' });
      });

      it('records a FailedScheduling Warning the first time and whenever the message changes, not on repeats', () => {
        const first = planInstance(instanceObserved(instance('web'), { decision: { unschedulable: true, message } }));
        expect(events(first.actions)).to.deep.equal([['Warning', 'FailedScheduling']]);
        expect(ofType(first.actions, 'event')[0]!.message).to.equal(message);
        const again = planInstance(instanceObserved(instance('web', {}, first.status), { decision: { unschedulable: true, message } }));
        expect(events(again.actions)).to.deep.equal([]);
        expect(again.status).to.deep.equal(first.status);
        const other = '0/3 nodes are available: 3 node(s) were unschedulable.';
        const changed = planInstance(instanceObserved(instance('web', {}, first.status), { decision: { unschedulable: true, message: other } }));
        expect(events(changed.actions)).to.deep.equal([['Warning', 'FailedScheduling']]);
      });
    });
  });

  describe('a placed instance', () => {
    it('writes nothing but status when the WorkItem already says what it should, and does not call the scheduler', () => {
      const inst = instance('web');
      const o = instanceObserved(inst, { workItems: [instanceWorkItem(inst, 'n1', { status: running() })] });
      const plan = planInstance(o);
      expect(plan.actions).to.deep.equal([]);
      expect(o.scheduled()).to.equal(0);
      expect(plan.requeueAfterMs).to.equal(undefined);
    });

    it('is idempotent: feeding its status back changes nothing', () => {
      const inst = instance('web');
      const wi = instanceWorkItem(inst, 'n1', { status: running() });
      const first = planInstance(instanceObserved(inst, { workItems: [wi] }));
      const second = planInstance(instanceObserved(instance('web', {}, first.status), { workItems: [wi], now: NOW + 60_000 }));
      expect(second.actions).to.deep.equal([]);
      expect(second.status).to.deep.equal(first.status);
    });

    it('resizes in place only when the node has room; otherwise keeps the size, says why (SpecAccepted=False, one Warning) and still applies other changes', () => {
      const before = instance('web', { cpus: 1, memory: '128Mi' });
      const wi = instanceWorkItem(before, 'n1', { status: running() });
      const grown = instance('web', { cpus: 4, memory: '128Mi', runState: 'Stopped' }, undefined, { generation: 2 });
      const refusal = 'resizing to 4 cpus would need 5 cpus of 4 on node n1';
      const refused = planInstance(instanceObserved(grown, { workItems: [wi], resizeRefusal: () => refusal }));
      const kept = ofType(refused.actions, 'updateWorkItem')[0]!.workItem.spec.instance!;
      expect(kept).to.include({ cpus: 1, memory: '128Mi', runState: 'Stopped' });
      expect(refused.status.conditions!.find((c) => c.type === 'SpecAccepted')).to.include({ status: 'False', reason: 'InsufficientCapacity', message: refusal });
      expect(events(refused.actions)).to.deep.equal([['Warning', 'InsufficientCapacity']]);
      // The same refusal again: no second Event.
      const again = planInstance(instanceObserved(instance('web', grown.spec, refused.status, { generation: 2 }), { workItems: [wi], resizeRefusal: () => refusal }));
      expect(events(again.actions)).to.deep.equal([]);
      // Room appears: the resize goes through and SpecAccepted turns True.
      const accepted = planInstance(instanceObserved(instance('web', grown.spec, refused.status, { generation: 2 }), { workItems: [wi], resizeRefusal: () => undefined }));
      expect(ofType(accepted.actions, 'updateWorkItem')[0]!.workItem.spec.instance!.cpus).to.equal(4);
      expect(accepted.status.conditions!.find((c) => c.type === 'SpecAccepted')).to.include({ status: 'True' });
    });

    it('updates the WorkItem in place (keeping resourceVersion and finalizers) when runState changes to Stopped', () => {
      const before = instance('web');
      const wi = instanceWorkItem(before, 'n1', { status: running(), resourceVersion: '77' });
      const after = instance('web', { runState: 'Stopped' }, undefined, { generation: 2 });
      const plan = planInstance(instanceObserved(after, { workItems: [wi] }));
      const [update, ...more] = ofType(plan.actions, 'updateWorkItem');
      expect(more).to.have.length(0);
      expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
      expect(ofType(plan.actions, 'deleteWorkItem')).to.have.length(0);
      const w = update!.workItem;
      expect(w.metadata.name).to.equal(wi.metadata.name);
      expect(w.metadata.resourceVersion).to.equal('77');
      expect(w.metadata.uid).to.equal(wi.metadata.uid);
      expect(w.metadata.finalizers).to.deep.equal([AGENT_FINALIZER]);
      expect(w.status).to.deep.equal(wi.status);
      expect(w.spec.instance!.runState).to.equal('Stopped');
      expect(w.spec.owner.generation).to.equal(2);
      expect(w.metadata.annotations![SPEC_HASH_ANNOTATION]).not.to.equal(wi.metadata.annotations![SPEC_HASH_ANNOTATION]);
    });

    it('updates the WorkItem with a new restartToken when the restartedAt annotation changes', () => {
      const wi = instanceWorkItem(instance('web'), 'n1', { status: running() });
      const restarted = instance('web', {}, undefined, { annotations: { [RESTARTED_AT_ANNOTATION]: NOW_TEXT } });
      const plan = planInstance(instanceObserved(restarted, { workItems: [wi] }));
      expect(ofType(plan.actions, 'updateWorkItem')[0]!.workItem.spec.instance!.restartToken).to.equal(NOW_TEXT);
    });

    it('keeps labels and annotations others put on the WorkItem when updating it', () => {
      const base = instanceWorkItem(instance('web'), 'n1');
      const wi = { ...base, metadata: { ...base.metadata, labels: { ...base.metadata.labels, team: 'a' }, annotations: { ...base.metadata.annotations, note: 'x' } } };
      const plan = planInstance(instanceObserved(instance('web', { cpus: 3 }), { workItems: [wi] }));
      const w = ofType(plan.actions, 'updateWorkItem')[0]!.workItem;
      expect(w.metadata.labels).to.include({ team: 'a', [OWNER_NAME_LABEL]: 'web' });
      expect(w.metadata.annotations).to.include({ note: 'x' });
    });

    it('deletes extra active WorkItems of the same instance and keeps the first', () => {
      const inst = instance('web');
      const a = instanceWorkItem(inst, 'n1', { status: running() });
      const b = instanceWorkItem(inst, 'n2');
      const plan = planInstance(instanceObserved(inst, { workItems: [a, b] }));
      expect(ofType(plan.actions, 'deleteWorkItem')).to.deep.equal([{ type: 'deleteWorkItem', name: 'web.n2', uid: 'uid-web.n2' }]);
      expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
      expect(plan.status.nodeName).to.equal('n1');
    });
  });

  describe('moving to a new pin', () => {
    it('deletes the old WorkItem and creates none until it is gone', () => {
      const before = instance('web', { placement: { nodeName: 'n1' } });
      const wi = instanceWorkItem(before, 'n1', { status: running() });
      const o = instanceObserved(instance('web', { placement: { nodeName: 'n2' } }, undefined, { generation: 2 }), { workItems: [wi], decision: { nodeName: 'n2' } });
      const plan = planInstance(o);
      expect(ofType(plan.actions, 'deleteWorkItem')).to.deep.equal([{ type: 'deleteWorkItem', name: 'web.n1', uid: 'uid-web.n1' }]);
      expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
      expect(ofType(plan.actions, 'updateWorkItem')).to.have.length(0);
      expect(events(plan.actions)).to.deep.equal([['Normal', 'Moving']]);
      expect(plan.status.phase).to.equal('Stopping');
      expect(plan.status.reason).to.equal('Moving');
      expect(o.scheduled()).to.equal(0);
    });

    it('waits while the old WorkItem is terminating (never two copies), then creates on the pinned node', () => {
      const inst = instance('web', { placement: { nodeName: 'n2' } });
      const old = instanceWorkItem(instance('web', { placement: { nodeName: 'n1' } }), 'n1', { deleting: true, status: running() });
      const waiting = instanceObserved(inst, { workItems: [old], decision: { nodeName: 'n2' } });
      const wait = planInstance(waiting);
      expect(wait.actions).to.deep.equal([]);
      expect(waiting.scheduled()).to.equal(0);
      expect(wait.status.phase).to.equal('Stopping');
      expect(wait.status.message).to.contain('waiting for node n1 to stop the instance');
      expect(wait.requeueAfterMs).to.equal(undefined);

      const gone = planInstance(instanceObserved(instance('web', { placement: { nodeName: 'n2' } }, wait.status), { workItems: [], decision: { nodeName: 'n2' } }));
      expect(ofType(gone.actions, 'createWorkItem').map((a) => a.workItem.spec.nodeName)).to.deep.equal(['n2']);
      expect(gone.status.phase).to.equal('Scheduled');
    });

    it('follows a pending spec.migrateTo the same way', () => {
      const inst = instance('web', { migrateTo: 'n3' });
      const wi = instanceWorkItem(instance('web'), 'n1', { status: running() });
      const plan = planInstance(instanceObserved(inst, { workItems: [wi] }));
      expect(ofType(plan.actions, 'deleteWorkItem').map((a) => a.name)).to.deep.equal(['web.n1']);
    });
  });

  describe('a draining node', () => {
    it('evicts the instance (deletes its WorkItem) with an Evicting event', () => {
      const inst = instance('web');
      const plan = planInstance(instanceObserved(inst, { workItems: [instanceWorkItem(inst, 'n1', { status: running() })], nodes: { n1: DRAINING } }));
      expect(ofType(plan.actions, 'deleteWorkItem').map((a) => a.name)).to.deep.equal(['web.n1']);
      expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
      expect(events(plan.actions)).to.deep.equal([['Normal', 'Evicting']]);
      expect(plan.status.reason).to.equal('Draining');
    });

    it('then, once the WorkItem is gone, schedules it elsewhere', () => {
      const inst = instance('web');
      const terminating = planInstance(instanceObserved(inst, { workItems: [instanceWorkItem(inst, 'n1', { deleting: true })], nodes: { n1: DRAINING }, decision: { nodeName: 'n2' } }));
      expect(ofType(terminating.actions, 'createWorkItem')).to.have.length(0);
      const after = planInstance(instanceObserved(inst, { workItems: [], nodes: { n1: DRAINING }, decision: { nodeName: 'n2' } }));
      expect(ofType(after.actions, 'createWorkItem').map((a) => a.workItem.metadata.name)).to.deep.equal(['web.n2']);
    });
  });

  describe('an unreachable node', () => {
    it('waits until the node counts as lost: requeue ≈ the time left, phase Unknown, Ready=Unknown NodeUnreachable', () => {
      const inst = instance('web');
      const plan = planInstance(instanceObserved(inst, { workItems: [instanceWorkItem(inst, 'n1', { status: running() })], nodes: { n1: unreachable(25_000) }, fencing: { held: true, remainingMs: 5000 } }));
      expect(plan.actions).to.deep.equal([]);
      expect(plan.requeueAfterMs).to.be.within(25_000, 26_000);
      expect(plan.status.phase).to.equal('Unknown');
      expect(cond(plan.status.conditions, 'Ready')).to.include({ status: 'Unknown', reason: 'NodeUnreachable' });
      expect(plan.status.nodeName).to.equal('n1');
    });

    it('computes that wait from the Node (Ready condition flipped at lease expiry) and the Cluster grace period', () => {
      const inst = instance('web');
      const since = NOW - 20_000;
      const n1: Node = {
        metadata: { name: 'n1', namespace: NS },
        status: { phase: 'Unreachable', conditions: [{ type: 'Ready', status: 'Unknown', reason: LEASE_EXPIRED_REASON, message: '', lastTransitionTime: new Date(since).toISOString() }] },
      };
      const c = cluster({ failureDetection: { failoverGracePeriodSeconds: 30 } });
      const o = instanceObserved(inst, { cluster: c, workItems: [instanceWorkItem(inst, 'n1', { cluster: c })], node: (n) => nodeView(n === 'n1' ? n1 : undefined, c, NOW) });
      const plan = planInstance(o);
      expect(plan.actions).to.deep.equal([]);
      expect(plan.requeueAfterMs).to.be.within(10_000, 11_000);
    });
  });

  describe('a lost node', () => {
    const inst = instance('web');
    const wi = instanceWorkItem(inst, 'n1', { status: running() });

    it('does not release while a node with a live lease holds the claim: requeues after its remaining time, reason AwaitingFencing', () => {
      const plan = planInstance(instanceObserved(inst, { workItems: [wi], nodes: { n1: LOST }, fencing: { held: true, remainingMs: 7000, holder: 'n1', leaseName: 'instance-web' } }));
      expect(ofType(plan.actions, 'releaseWorkItem')).to.have.length(0);
      expect(ofType(plan.actions, 'deleteWorkItem')).to.have.length(0);
      expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
      expect(plan.requeueAfterMs).to.be.within(7000, 8000);
      expect(plan.status.reason).to.equal('AwaitingFencing');
      expect(plan.status.phase).to.equal('Unknown');
      expect(plan.status.message).to.contain('7s');
    });

    it('releases the WorkItem once the node lease was revoked, with a FailingOver Warning and lastFailover', () => {
      const o = instanceObserved(inst, { workItems: [wi], nodes: { n1: LOST }, decision: { nodeName: 'n2' } });
      const plan = planInstance(o);
      expect(ofType(plan.actions, 'releaseWorkItem')).to.deep.equal([{ type: 'releaseWorkItem', name: 'web.n1', uid: 'uid-web.n1' }]);
      expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
      expect(o.scheduled()).to.equal(0);
      expect(events(plan.actions)).to.deep.equal([['Warning', 'FailingOver']]);
      expect(plan.status.lastFailover).to.deep.equal({ fromNode: 'n1', time: NOW_TEXT });
      expect(plan.status.reason).to.equal('FailingOver');
    });

    it("deletes the lost node's claim (at the version it saw) when it releases, so the next node can claim the instance", () => {
      const revoked = { held: false, remainingMs: 0, holder: 'n1', leaseName: 'instance-web', resourceVersion: '42' };
      const plan = planInstance(instanceObserved(inst, { workItems: [wi], nodes: { n1: LOST }, fencing: revoked }));
      expect(ofType(plan.actions, 'deleteClaim')).to.deep.equal([{ type: 'deleteClaim', name: 'instance-web', resourceVersion: '42' }]);
      const held = planInstance(instanceObserved(inst, { workItems: [wi], nodes: { n1: LOST }, fencing: { ...revoked, held: true, remainingMs: 5000 } }));
      expect(ofType(held.actions, 'deleteClaim')).to.deep.equal([]);
      const elsewhere = planInstance(instanceObserved(inst, { workItems: [wi], nodes: { n1: LOST }, fencing: { ...revoked, holder: 'n2' } }));
      expect(ofType(elsewhere.actions, 'deleteClaim'), "another node's claim is not the lost node's to give up").to.deep.equal([]);
      const none = planInstance(instanceObserved(inst, { workItems: [wi], nodes: { n1: LOST } }));
      expect(ofType(none.actions, 'deleteClaim')).to.deep.equal([]);
    });

    it('is not Ready for a changed spec until the node reports on it: the update goes out, Ready is False (Updating) for the new generation', () => {
      const before = instance('web');
      const changed = instance('web', { process: { command: ['/bin/sleep', '2000'] } }, undefined, { generation: 2 });
      const plan = planInstance(instanceObserved(changed, { workItems: [instanceWorkItem(before, 'n1', { status: running() })] }));
      expect(ofType(plan.actions, 'updateWorkItem')).to.have.length(1);
      expect(plan.status.observedGeneration).to.equal(2);
      expect(plan.status.conditions!.find((c) => c.type === 'Ready')).to.include({ status: 'False', reason: 'Updating', observedGeneration: 2 });
    });

    it('stays Ready through an update of metadata alone (a spec-hash annotation another controller version wrote)', () => {
      const web = instance('web');
      const w = instanceWorkItem(web, 'n1', { status: running() });
      const stale = { ...w, metadata: { ...w.metadata, annotations: { ...w.metadata.annotations, [SPEC_HASH_ANNOTATION]: 'older-hash' } } };
      const plan = planInstance(instanceObserved(web, { workItems: [stale] }));
      expect(ofType(plan.actions, 'updateWorkItem')).to.have.length(1);
      expect(plan.status.conditions!.find((c) => c.type === 'Ready')).to.include({ status: 'True' });
    });

    it("deletes a claim left by a node whose term ended once its WorkItem is gone (a failover whose claim delete failed), not a live node's", () => {
      const revoked = { held: false, remainingMs: 0, holder: 'n1', leaseName: 'instance-web', resourceVersion: '42' };
      const plan = planInstance(instanceObserved(inst, { workItems: [], nodes: { n1: LOST }, fencing: revoked, decision: { nodeName: 'n2' } }));
      // Alone: a WorkItem created beside a delete that failed would leave the claim for good.
      expect(plan.actions).to.deep.equal([{ type: 'deleteClaim', name: 'instance-web', resourceVersion: '42' }]);
      expect(plan.deferStatus).to.equal(true);
      const after = planInstance(instanceObserved(inst, { workItems: [], nodes: { n1: LOST }, decision: { nodeName: 'n2' } }));
      expect(ofType(after.actions, 'createWorkItem').map((a) => a.workItem.spec.nodeName)).to.deep.equal(['n2']);
      const live = planInstance(instanceObserved(inst, { workItems: [], fencing: { ...revoked, held: true, remainingMs: 5000 }, decision: { nodeName: 'n2' } }));
      expect(ofType(live.actions, 'deleteClaim'), 'a claim its holder may still act on stays').to.deep.equal([]);
    });

    it("a WorkItem being deleted on a lost node is released with the node's claim", () => {
      const leaving = { ...wi, metadata: { ...wi.metadata, deletionTimestamp: NOW_TEXT } };
      const revoked = { held: false, remainingMs: 0, holder: 'n1', leaseName: 'instance-web', resourceVersion: '42' };
      const plan = planInstance(instanceObserved({ ...inst, spec: { ...inst.spec, placement: { nodeName: 'n2' } } }, { workItems: [leaving], nodes: { n1: LOST }, fencing: revoked }));
      expect(ofType(plan.actions, 'releaseWorkItem')).to.have.length(1);
      expect(ofType(plan.actions, 'deleteClaim')).to.deep.equal([{ type: 'deleteClaim', name: 'instance-web', resourceVersion: '42' }]);
    });

    it('treats a Node object that vanished as lost', () => {
      const plan = planInstance(instanceObserved(inst, { workItems: [wi], nodes: { n1: GONE } }));
      expect(ofType(plan.actions, 'releaseWorkItem')).to.have.length(1);
    });

    it('after the release, schedules on another node and keeps lastFailover', () => {
      const released = planInstance(instanceObserved(inst, { workItems: [wi], nodes: { n1: LOST } }));
      const next = planInstance(instanceObserved(instance('web', {}, released.status), { workItems: [], nodes: { n1: LOST }, decision: { nodeName: 'n2' } }));
      expect(ofType(next.actions, 'createWorkItem').map((a) => a.workItem.spec.nodeName)).to.deep.equal(['n2']);
      expect(next.status.lastFailover?.fromNode).to.equal('n1');
    });

    for (const [what, inst2, c] of [
      ['failoverPolicy Manual', instance('web', { failoverPolicy: 'Manual' }), undefined],
      ['Cluster spec.failover.enabled false', instance('web'), cluster({ failover: { enabled: false } })],
    ] as const) {
      it(`never releases with ${what}, and does not spin on requeues`, () => {
        const w = instanceWorkItem(inst2, 'n1', { status: running(), cluster: c });
        const plan = planInstance(instanceObserved(inst2, { cluster: c, workItems: [w], nodes: { n1: LOST } }));
        expect(ofType(plan.actions, 'releaseWorkItem')).to.have.length(0);
        expect(ofType(plan.actions, 'deleteWorkItem')).to.have.length(0);
        expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
        expect(plan.status.phase).to.equal('Unknown');
        expect(cond(plan.status.conditions, 'Ready')).to.include({ status: 'Unknown', reason: 'NodeUnreachable' });
        // A lost node stays lost until its Node changes, which wakes the instance anyway: an immediate requeue would only busy-loop.
        expect(plan.requeueAfterMs === undefined || plan.requeueAfterMs > 0, `requeueAfterMs ${plan.requeueAfterMs}`).to.equal(true);
      });
    }

    it('releases a WorkItem that was already terminating on a lost node once fencing expired, still creating nothing', () => {
      const old = instanceWorkItem(inst, 'n1', { deleting: true });
      const held = planInstance(instanceObserved(inst, { workItems: [old], nodes: { n1: LOST }, fencing: { held: true, remainingMs: 3000 } }));
      expect(held.actions).to.deep.equal([]);
      expect(held.requeueAfterMs).to.be.within(3000, 4000);
      const expired = planInstance(instanceObserved(inst, { workItems: [old], nodes: { n1: LOST } }));
      expect(ofType(expired.actions, 'releaseWorkItem').map((a) => a.name)).to.deep.equal(['web.n1']);
      expect(ofType(expired.actions, 'createWorkItem')).to.have.length(0);
    });

    it('waits for a terminating WorkItem on an unreachable node until it is lost', () => {
      const old = instanceWorkItem(inst, 'n1', { deleting: true });
      const plan = planInstance(instanceObserved(inst, { workItems: [old], nodes: { n1: unreachable(9000) } }));
      expect(plan.actions).to.deep.equal([]);
      expect(plan.requeueAfterMs).to.be.within(9000, 10_000);
    });

    describe('a WorkItem still being deleted beside the current one (a migration source, an extra copy)', () => {
      const old = instanceWorkItem(inst, 'n1', { deleting: true });
      const current = instanceWorkItem(inst, 'n2', { status: running() });
      const byN2 = { held: true, remainingMs: 8000, holder: 'n2', leaseName: 'instance-web', resourceVersion: '42' };
      const beside = (n1: NodeView, fencing: InstanceObserved['fencing']) => planInstance(instanceObserved(inst, { workItems: [old, current], nodes: { n1, n2: READY }, fencing }));

      it('is released once its node is lost and another node holds the claim: its copy has stopped, and it no longer counts on its node', () => {
        const plan = beside(LOST, byN2);
        expect(ofType(plan.actions, 'releaseWorkItem')).to.deep.equal([{ type: 'releaseWorkItem', name: 'web.n1', uid: 'uid-web.n1' }]);
        expect(ofType(plan.actions, 'deleteClaim'), "the live node's claim stays").to.deep.equal([]);
        expect(ofType(plan.actions, 'deleteWorkItem')).to.deep.equal([]);
        expect(ofType(plan.actions, 'createWorkItem')).to.deep.equal([]);
        expect(plan.status.phase).to.equal('Running');
      });

      it('is released with its claim when its own node held it and that lease was revoked, so the current node can claim', () => {
        const plan = beside(LOST, { ...byN2, held: false, remainingMs: 0, holder: 'n1' });
        expect(ofType(plan.actions, 'releaseWorkItem').map((a) => a.name)).to.deep.equal(['web.n1']);
        expect(ofType(plan.actions, 'deleteClaim')).to.deep.equal([{ type: 'deleteClaim', name: 'instance-web', resourceVersion: '42' }]);
      });

      it('waits while its own node holds the claim in a live term, and looks again when that may end', () => {
        const plan = beside(LOST, { ...byN2, holder: 'n1', remainingMs: 3000 });
        expect(ofType(plan.actions, 'releaseWorkItem')).to.deep.equal([]);
        expect(plan.requeueAfterMs).to.be.within(3000, 4000);
      });

      it('waits while its node is unreachable but not lost yet, and looks again then (nothing else wakes the instance)', () => {
        const plan = beside(unreachable(9000), byN2);
        expect(ofType(plan.actions, 'releaseWorkItem')).to.deep.equal([]);
        expect(plan.requeueAfterMs).to.be.within(9000, 10_000);
      });

      it('is left alone on a node that answers: its agent confirms the delete', () => {
        const plan = beside(READY, byN2);
        expect(plan.actions).to.deep.equal([]);
        expect(plan.requeueAfterMs).to.equal(undefined);
      });
    });
  });

  describe('deletion', () => {
    const deleting = (finalizers = [CONTROLLER_FINALIZER]) => instance('web', {}, undefined, { deleting: true, finalizers });

    it('deletes its WorkItems and keeps the finalizer while any remains', () => {
      const inst = deleting();
      const plan = planInstance(instanceObserved(inst, { workItems: [instanceWorkItem(inst, 'n1', { status: running() })] }));
      expect(plan.actions).to.deep.equal([{ type: 'deleteWorkItem', name: 'web.n1', uid: 'uid-web.n1' }]);
      expect(plan.status.phase).to.equal('Stopping');
      expect(cond(plan.status.conditions, 'Ready')).to.include({ status: 'False', reason: 'Deleting' });
    });

    it('does not delete again a WorkItem already terminating, and waits', () => {
      const inst = deleting();
      const plan = planInstance(instanceObserved(inst, { workItems: [instanceWorkItem(inst, 'n1', { deleting: true })] }));
      expect(plan.actions).to.deep.equal([]);
    });

    it('never adds the finalizer to an instance being deleted, nor schedules it', () => {
      const inst = deleting([]);
      const o = instanceObserved(inst);
      const plan = planInstance(o);
      expect(plan.actions).to.deep.equal([]);
      expect(o.scheduled()).to.equal(0);
    });

    it('removes the finalizer once no WorkItem remains', () => {
      const plan = planInstance(instanceObserved(deleting()));
      expect(plan.actions).to.deep.equal([{ type: 'removeFinalizer' }]);
    });

    it('deletes the fencing lease its agent released (nodes may not delete leases), and only then the finalizer', () => {
      const plan = planInstance(instanceObserved(deleting(), { fencing: { held: false, remainingMs: 0, leaseName: 'instance-x', resourceVersion: '7' } }));
      expect(plan.actions, 'a lease delete that failed beside a removed finalizer would never be tried again').to.deep.equal([{ type: 'deleteLease', name: 'instance-x' }]);
      expect(planInstance(instanceObserved(deleting())).actions, 'the lease gone').to.deep.equal([{ type: 'removeFinalizer' }]);
    });

    it('releases WorkItems on lost nodes only after the fencing lease expired', () => {
      const inst = deleting();
      const wi = instanceWorkItem(inst, 'n1', { deleting: true });
      const held = planInstance(instanceObserved(inst, { workItems: [wi], nodes: { n1: LOST }, fencing: { held: true, remainingMs: 4000 } }));
      expect(held.actions).to.deep.equal([]);
      expect(held.requeueAfterMs).to.be.within(4000, 5000);
      const expired = planInstance(instanceObserved(inst, { workItems: [wi], nodes: { n1: LOST } }));
      expect(expired.actions).to.deep.equal([{ type: 'releaseWorkItem', name: 'web.n1', uid: 'uid-web.n1' }]);
    });

    it('deletes an active WorkItem on a lost node at once (a live agent whose Node was deleted stops it), releasing it after fencing', () => {
      const inst = deleting();
      const wi = instanceWorkItem(inst, 'n1');
      const held = planInstance(instanceObserved(inst, { workItems: [wi], nodes: { n1: LOST }, fencing: { held: true, remainingMs: 4000 } }));
      expect(held.actions).to.deep.equal([{ type: 'deleteWorkItem', name: 'web.n1', uid: 'uid-web.n1' }]);
      expect(held.requeueAfterMs).to.be.within(4000, 5000);
    });

    it('releases on a lost node even with failoverPolicy Manual (the user deletes the instance)', () => {
      const inst = instance('web', { failoverPolicy: 'Manual' }, undefined, { deleting: true });
      const plan = planInstance(instanceObserved(inst, { workItems: [instanceWorkItem(inst, 'n1')], nodes: { n1: LOST } }));
      expect(ofType(plan.actions, 'releaseWorkItem')).to.have.length(1);
    });

    it('comes back when a WorkItem on an unreachable node becomes releasable', () => {
      const inst = deleting();
      const plan = planInstance(instanceObserved(inst, { workItems: [instanceWorkItem(inst, 'n1', { deleting: true })], nodes: { n1: unreachable(12_000) } }));
      expect(plan.actions).to.deep.equal([]);
      expect(plan.requeueAfterMs).to.be.within(12_000, 13_000);
    });

    it('handles a mix: deletes on live nodes, releases on lost ones, keeps the finalizer', () => {
      const inst = deleting();
      const plan = planInstance(
        instanceObserved(inst, { workItems: [instanceWorkItem(inst, 'n1'), instanceWorkItem(inst, 'n2', { deleting: true }), instanceWorkItem(inst, 'n3')], nodes: { n2: LOST } }),
      );
      expect(plan.actions).to.deep.equal([
        { type: 'deleteWorkItem', name: 'web.n1', uid: 'uid-web.n1' },
        { type: 'releaseWorkItem', name: 'web.n2', uid: 'uid-web.n2' },
        { type: 'deleteWorkItem', name: 'web.n3', uid: 'uid-web.n3' },
      ]);
    });
  });

  it('does not mutate its input', () => {
    const inst = instance('web', { runState: 'Stopped' }, { phase: 'Running', conditions: [{ type: 'Ready', status: 'True', reason: 'Running', message: '', lastTransitionTime: EARLIER }] });
    const wi = instanceWorkItem(instance('web'), 'n1', { status: running() });
    const snapshot = JSON.stringify([inst, wi]);
    planInstance(instanceObserved(inst, { workItems: [wi] }));
    planInstance(instanceObserved(inst, { workItems: [wi], nodes: { n1: LOST } }));
    expect(JSON.stringify([inst, wi])).to.equal(snapshot);
  });
});

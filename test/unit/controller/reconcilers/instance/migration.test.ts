/** planInstance for the live migration of qemu instances (docs/migration.md steps 1, 3, 7, failure and rollback) — pure, no I/O. */
import { expect } from 'chai';
import type { Instance, InstanceMigrationStatus, InstanceSpec, InstanceStatus } from '../../../../../api/instance.js';
import type { Volume } from '../../../../../api/volume.js';
import type { WorkItem, WorkItemMigrationSpec, WorkItemMigrationStatus, WorkItemStatus } from '../../../../../api/workitem.js';
import type { NodeView } from '../../../../../controller/node-health.js';
import { MIGRATION_GRACE_MS, MIGRATION_POLL_MS } from '../../../../../controller/reconcilers/instance/migration.js';
import type { InstanceObserved, ScheduleDecision } from '../../../../../controller/reconcilers/instance/observed.js';
import { planInstance } from '../../../../../controller/reconcilers/instance/plan.js';
import { SPEC_HASH_ANNOTATION, desiredInstanceWorkItem, specHash, withMigrationSpec } from '../../../../../controller/reconcilers/instance/workitem-spec.js';
import { instanceNodes } from '../../../../../controller/scheduler/placements.js';
import { DRAINING, EARLIER, GONE, LOST, NOW, NOW_TEXT, clone, events, instance, instanceObserved, instanceWorkItem, ofType, running, unreachable, volume } from '../builders.js';

const GEN = 3;
const ID = `b-g${GEN}`;
const STARTED = '2024-05-01T11:59:00Z';
const TUNING = { maxDowntimeMs: 300, bandwidthMiBps: 0, timeoutSeconds: 300 };

/** A qemu VM at generation 3 asked to move to node b, placed on node a. */
function vm(spec: InstanceSpec = {}, status: InstanceStatus = { nodeName: 'a', phase: 'Running' }): Instance {
  return instance('vm', { driver: 'qemu', process: undefined, qemu: { kernel: '/k' }, migrateTo: 'b', ...spec }, status, { generation: GEN });
}

/** status.migration as the controller records a migration in flight since STARTED. */
function flying(phase: InstanceMigrationStatus['phase'], extra: InstanceMigrationStatus = {}): InstanceStatus {
  return { nodeName: 'a', phase: 'Migrating', migration: { id: ID, mode: 'Live', sourceNode: 'a', targetNode: 'b', phase, startedAt: STARTED, ...extra } };
}

const targetSpec: WorkItemMigrationSpec = { id: ID, role: 'Target', peerNodeName: 'a', ...TUNING };
const sourceSpec: WorkItemMigrationSpec = { id: ID, role: 'Source', peerNodeName: 'b', targetAddress: '10.0.0.2', targetPort: 40123, targetNbdPort: 40124, ...TUNING };

/** A stored WorkItem of inst on node with a migration spec (or none) and a status. */
function side(inst: Instance, node: string, migration: WorkItemMigrationSpec | undefined, status?: WorkItemStatus, o: { deleting?: boolean; generation?: number; volumes?: ReadonlyMap<string, Volume> } = {}): WorkItem {
  const w = instanceWorkItem(inst, node, { status, deleting: o.deleting, generation: o.generation, volumes: o.volumes });
  return withMigrationSpec(w, migration);
}

/** A WorkItem status: the instance running and ready, plus a migration report. */
function reporting(migration?: WorkItemMigrationStatus, generation = 1): WorkItemStatus {
  return { ...running(4242, generation), ...(migration ? { migration } : {}) };
}

const listening: WorkItemMigrationStatus = { id: ID, role: 'Target', phase: 'Listening', address: '10.0.0.2', port: 40123, nbdPort: 40124 };

function observe(inst: Instance, workItems: WorkItem[], p: Partial<InstanceObserved> & { nodes?: Record<string, NodeView>; decision?: ScheduleDecision } = {}) {
  return instanceObserved(inst, { workItems, ...p });
}

const cond = (s: InstanceStatus, type: string) => s.conditions?.find((c) => c.type === type);
const updated = (plan: ReturnType<typeof planInstance>, node: string) => ofType(plan.actions, 'updateWorkItem').find((a) => a.workItem.spec.nodeName === node)?.workItem;
const deleted = (plan: ReturnType<typeof planInstance>) => ofType(plan.actions, 'deleteWorkItem').map((a) => a.name);

describe('planInstance: live migration of a qemu instance', () => {
  describe('step 1: preparing the target', () => {
    const inst = vm();
    const wS = side(inst, 'a', undefined, reporting());

    it('creates the target WorkItem (the ordinary one for b plus the Target side) and keeps the source', () => {
      const plan = planInstance(observe(inst, [wS]));
      const [create, ...more] = ofType(plan.actions, 'createWorkItem');
      expect(more).to.have.length(0);
      const w = create!.workItem;
      expect(w.metadata.name).to.equal('vm.b');
      expect(w.spec.instance!.migration).to.deep.equal(targetSpec);
      const ordinary = desiredInstanceWorkItem(inst, undefined, new Map(), 'b');
      expect({ ...w.spec, instance: { ...w.spec.instance, migration: undefined } }).to.deep.equal({ ...ordinary.spec, instance: { ...ordinary.spec.instance, migration: undefined } });
      expect(w.metadata.annotations![SPEC_HASH_ANNOTATION]).to.equal(specHash(w.spec));
      expect(deleted(plan)).to.deep.equal([]);
      expect(events(plan.actions)).to.deep.equal([['Normal', 'Migrating']]);
    });

    it('records the migration in flight: phase Migrating, nodeName still the source, id <target>-g<generation>; looks again soon', () => {
      const plan = planInstance(observe(inst, [wS]));
      expect(plan.status).to.include({ phase: 'Migrating', nodeName: 'a', workItemName: 'vm.a' });
      expect(plan.status.migration).to.deep.equal({ id: ID, mode: 'Live', sourceNode: 'a', targetNode: 'b', phase: 'PreparingTarget', startedAt: NOW_TEXT });
      expect(plan.requeueAfterMs).to.equal(MIGRATION_POLL_MS);
      expect(plan.deferStatus).to.equal(undefined);
    });

    it('copies the tuning of spec.qemu.migration onto the Target side', () => {
      const tuned = vm({ qemu: { kernel: '/k', migration: { maxDowntimeMs: 50, bandwidthMiBps: 100, timeoutSeconds: 20 } } });
      const plan = planInstance(observe(tuned, [side(tuned, 'a', undefined, reporting())]));
      expect(ofType(plan.actions, 'createWorkItem')[0]!.workItem.spec.instance!.migration).to.deep.equal({ id: ID, role: 'Target', peerNodeName: 'a', maxDowntimeMs: 50, bandwidthMiBps: 100, timeoutSeconds: 20 });
    });

    it('waits (phase Pending, nothing created or deleted) while an old WorkItem of the same name on the target is still going', () => {
      const old = side(inst, 'b', undefined, undefined, { deleting: true });
      const plan = planInstance(observe(inst, [wS, old]));
      expect(plan.actions.filter((a) => a.type !== 'event')).to.deep.equal([]);
      expect(plan.status.phase).to.equal('Migrating');
      expect(plan.status.migration).to.include({ phase: 'Pending', targetNode: 'b' });
      expect(plan.status.message).to.match(/waiting for WorkItem vm\.b on node b to be removed/);
      expect(instanceNodes({ ...inst, status: plan.status })).to.deep.equal(['a', 'b']);
    });

    describe('refuses an unfit target: Failed TargetUnschedulable, no WorkItem, the instance stays', () => {
      const data = volume('data', {}, { replicas: [{ index: 0, nodeName: 'a', path: '/d/0', state: 'Ready' }] });
      const cases: Array<[string, Partial<InstanceObserved> & { nodes?: Record<string, NodeView> }, RegExp, Instance?]> = [
        ['not registered', { nodes: { b: GONE } }, /node b cannot take it: it is not registered/],
        ['unreachable', { nodes: { b: unreachable(5000) } }, /it is unreachable/],
        ['draining', { nodes: { b: DRAINING } }, /it is draining/],
        ['cordoned or full (the scheduler says)', { targetRefusal: (n) => (n === 'b' ? 'insufficient memory' : undefined) }, /node b cannot take it: insufficient memory/],
        ['without a replica of an attached volume', { volumes: new Map([['data', data]]) }, /it holds no replica of volume data/, vm({ volumes: [{ name: 'd', volumeName: 'data' }] })],
      ];
      for (const [what, p, message, i = inst] of cases) {
        it(what, () => {
          const source = side(i, 'a', undefined, reporting(), { volumes: p.volumes });
          const plan = planInstance(observe(i, [source], p));
          expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
          expect(deleted(plan)).to.deep.equal([]);
          expect(events(plan.actions)).to.deep.equal([['Warning', 'MigrationFailed']]);
          expect(plan.status).to.include({ nodeName: 'a', phase: 'Running' });
          expect(plan.status.migration).to.include({ id: ID, phase: 'Failed', reason: 'TargetUnschedulable', targetNode: 'b', sourceNode: 'a', finishedAt: NOW_TEXT });
          expect(plan.status.migration!.message).to.match(message).and.to.contain('cairn migrate instance vm --to b');
          expect(cond(plan.status, 'MigrationFailed')).to.include({ status: 'True', reason: 'TargetUnschedulable' });
        });
      }

      it('and does nothing more for the same request afterwards', () => {
        const failed = planInstance(observe(inst, [wS], { nodes: { b: GONE } })).status;
        const again = planInstance(observe(vm({}, failed), [wS], { nodes: { b: GONE } }));
        expect(again.actions).to.deep.equal([]);
        expect(again.status.migration).to.deep.equal(failed.migration);
      });
    });

    describe('moves cold as before when a live migration does not apply', () => {
      const cases: Array<[string, Instance, WorkItemStatus | undefined, Record<string, NodeView>?]> = [
        ['a process', instance('web', { migrateTo: 'b' }, { nodeName: 'a' }), running()],
        ['mode Cold', vm({ qemu: { kernel: '/k', migration: { mode: 'Cold' } } }), running()],
        ['a VM not running yet', vm(), { observedGeneration: 1, instance: { state: 'Starting' } }],
        ['a VM running but not ready', vm(), { observedGeneration: 1, instance: { state: 'Running', ready: false } }],
        ['a VM with no report', vm(), undefined],
      ];
      for (const [what, i, status] of cases) {
        it(what, () => {
          const plan = planInstance(observe(i, [instanceWorkItem(i, 'a', { status })]));
          expect(deleted(plan)).to.deep.equal([`${i.metadata.name}.a`]);
          expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
          expect(events(plan.actions)).to.deep.equal([['Normal', 'Moving']]);
        });
      }

      it('but first checks the target: a refused cold move stops nothing and ends Failed (TargetUnschedulable)', () => {
        for (const [, i, status] of cases) {
          const plan = planInstance(observe(i, [instanceWorkItem(i, 'a', { status })], { nodes: { b: GONE } }));
          expect(deleted(plan), i.metadata.name).to.deep.equal([]);
          expect(events(plan.actions)).to.deep.equal([['Warning', 'MigrationFailed']]);
          expect(plan.status.migration).to.include({ mode: 'Cold', phase: 'Failed', reason: 'TargetUnschedulable', targetNode: 'b', sourceNode: 'a' });
          expect(plan.status.migration!.message).to.match(/^move from node a to node b failed: node b cannot take it: it is not registered/);
          const again = planInstance(observe({ ...i, status: plan.status }, [instanceWorkItem(i, 'a', { status })], { nodes: { b: GONE } }));
          expect(deleted(again)).to.deep.equal([]);
          expect(again.actions).to.deep.equal([]);
        }
      });

      it('a cold move stopped on its source whose target filled up meanwhile ends Failed, so the instance is placed again', () => {
        const moving = instance('web', { migrateTo: 'b' }, { nodeName: 'a', phase: 'Stopping' });
        const full = '0/3 nodes are available: 1 insufficient cpu, 2 node(s) did not match spec.migrateTo.';
        const plan = planInstance(observe(moving, [], { decision: { unschedulable: true, message: full } }));
        expect(plan.status.migration).to.include({ mode: 'Cold', phase: 'Failed', reason: 'TargetUnschedulable', sourceNode: 'a', targetNode: 'b' });
        expect(plan.status.migration!.message).to.contain(full);
        expect(events(plan.actions)).to.deep.equal([['Warning', 'MigrationFailed']]);
        expect(plan.status).to.include({ phase: 'Pending' });
        // No longer pinned to b: the next pass places it wherever it fits.
        const next = planInstance(observe({ ...moving, status: plan.status }, [], { decision: { nodeName: 'a' } }));
        expect(ofType(next.actions, 'createWorkItem').map((a) => a.workItem.spec.nodeName)).to.deep.equal(['a']);
      });

      it('a VM on a draining node is evicted, not migrated', () => {
        const plan = planInstance(observe(inst, [wS], { nodes: { a: DRAINING } }));
        expect(events(plan.actions)).to.deep.equal([['Normal', 'Moving']]);
      });

      it('nothing at all for a VM already on the target, or a request carried out', () => {
        expect(ofType(planInstance(observe(inst, [side(inst, 'b', undefined, reporting())])).actions, 'createWorkItem')).to.have.length(0);
        const done = vm({}, { nodeName: 'a', migration: { id: ID, targetNode: 'b', phase: 'Failed' } });
        expect(planInstance(observe(done, [side(done, 'a', undefined, reporting())])).actions).to.deep.equal([]);
      });
    });
  });

  describe('steps 2-3: the target listens, the source transfers', () => {
    const inst = vm({}, flying('PreparingTarget'));

    it('while the target prepares: both WorkItems stay, nothing is written to them', () => {
      const wT = side(inst, 'b', targetSpec, { migration: { id: ID, role: 'Target', phase: 'Preparing' } });
      const plan = planInstance(observe(inst, [side(inst, 'a', undefined, reporting()), wT]));
      expect(plan.actions).to.deep.equal([]);
      expect(plan.status.migration).to.deep.equal(inst.status!.migration);
      expect(plan.requeueAfterMs).to.equal(MIGRATION_POLL_MS);
    });

    it('copies the address and ports the target listens on into the Source side of the source WorkItem', () => {
      const wS = side(inst, 'a', undefined, reporting());
      const plan = planInstance(observe(inst, [wS, side(inst, 'b', targetSpec, { migration: listening })]));
      const w = updated(plan, 'a')!;
      expect(w.spec.instance!.migration).to.deep.equal(sourceSpec);
      expect(w.metadata.resourceVersion).to.equal(wS.metadata.resourceVersion);
      expect(w.metadata.annotations![SPEC_HASH_ANNOTATION]).to.equal(specHash(w.spec));
      expect(deleted(plan)).to.deep.equal([]);
    });

    it('leaves targetNbdPort out when the target exports no disks', () => {
      const plan = planInstance(observe(inst, [side(inst, 'a', undefined, reporting()), side(inst, 'b', targetSpec, { migration: { ...listening, nbdPort: undefined } })]));
      expect(updated(plan, 'a')!.spec.instance!.migration).to.not.have.property('targetNbdPort');
    });

    it('ignores a report for another migration id', () => {
      const plan = planInstance(observe(inst, [side(inst, 'a', undefined, reporting()), side(inst, 'b', targetSpec, { migration: { ...listening, id: 'b-g1' } })]));
      expect(updated(plan, 'a')).to.equal(undefined);
    });

    it('writes the Source side once, and mirrors the source\'s phase and byte counts', () => {
      for (const phase of ['MirroringStorage', 'Transferring'] as const) {
        const report = { id: ID, role: 'Source' as const, phase, bytesTotal: 1000, bytesTransferred: 400, bytesRemaining: 600 };
        const plan = planInstance(observe(inst, [side(inst, 'a', sourceSpec, reporting(report)), side(inst, 'b', targetSpec, { migration: listening })]));
        expect(plan.actions).to.deep.equal([]);
        expect(plan.status).to.include({ phase: 'Migrating', nodeName: 'a' });
        expect(plan.status.migration).to.include({ phase, bytesTotal: 1000, bytesTransferred: 400, bytesRemaining: 600, id: ID });
      }
    });

    it('keeps the Source side when the target\'s report moves past Listening', () => {
      const plan = planInstance(observe(inst, [side(inst, 'a', sourceSpec, reporting()), side(inst, 'b', targetSpec, { migration: { ...listening, phase: 'Preparing' } })]));
      expect(plan.actions).to.deep.equal([]);
    });

    it('deletes a third WorkItem of the instance, but neither side', () => {
      const plan = planInstance(observe(inst, [side(inst, 'a', undefined, reporting()), side(inst, 'b', targetSpec), side(inst, 'c', undefined)]));
      expect(deleted(plan)).to.deep.equal(['vm.c']);
    });

    describe('a stale cache never starts a second migration', () => {
      it('adopts the id of a target WorkItem whose status is not written yet (or was written for another generation)', () => {
        const fresh = vm({}, { nodeName: 'a', phase: 'Running' });
        const older: WorkItemMigrationSpec = { ...targetSpec, id: 'b-g2' };
        const created = side(fresh, 'b', older);
        const wT = { ...created, metadata: { ...created.metadata, creationTimestamp: STARTED } };
        const plan = planInstance(observe(fresh, [side(fresh, 'a', undefined, reporting()), wT]));
        expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
        expect(deleted(plan)).to.deep.equal([]);
        expect(plan.status.migration).to.deep.include({ id: 'b-g2', phase: 'PreparingTarget', startedAt: STARTED });
        // Created long ago and never recorded: the deadline counts from its creation.
        const stale = planInstance(observe(fresh, [side(fresh, 'a', undefined, reporting()), side(fresh, 'b', older)]));
        expect(stale.status.migration).to.include({ id: 'b-g2', phase: 'Failed', reason: 'Timeout', startedAt: EARLIER });
      });

      it('creates nothing when status records a migration in flight whose target WorkItem the cache does not show yet', () => {
        const plan = planInstance(observe(inst, [side(inst, 'a', undefined, reporting())]));
        expect(plan.actions).to.deep.equal([]);
        expect(plan.status.migration).to.include({ id: ID, phase: 'PreparingTarget' });
        expect(plan.requeueAfterMs).to.be.greaterThan(0);
      });
    });
  });

  describe('step 7: switch-over', () => {
    const sourceDone: WorkItemMigrationStatus = { id: ID, role: 'Source', phase: 'Completed', downtimeMs: 100, totalTimeMs: 900, startedAt: '2024-05-01T11:59:10Z', finishedAt: '2024-05-01T11:59:20Z', bytesTotal: 10, bytesTransferred: 10, bytesRemaining: 0 };
    const targetDone: WorkItemMigrationStatus = { id: ID, role: 'Target', phase: 'Completed', finishedAt: '2024-05-01T11:59:20.250Z' };

    it('once the target holds the claim (handed over before the source reports Completed), a cancel or the source\'s loss no longer rolls back', () => {
      const cancelled = vm({ migrateTo: undefined }, flying('Transferring'));
      const sides = (i: Instance) => [side(i, 'a', sourceSpec, reporting({ id: ID, role: 'Source', phase: 'Transferring' })), side(i, 'b', targetSpec, { migration: listening })];
      const claimed = { held: true, remainingMs: 5000, holder: 'b', leaseName: 'instance-vm', resourceVersion: '9' };
      for (const [what, i, nodes] of [['cancelled', cancelled, {}], ['source lost', vm({}, flying('Transferring')), { a: LOST }]] as const) {
        const plan = planInstance(observe(i, sides(i), { fencing: claimed, nodes }));
        expect(deleted(plan), what).to.not.include('vm.b');
        expect(plan.status.migration, what).to.not.include({ phase: 'Failed' });
        expect(updated(plan, 'b')?.spec.instance, what).to.not.have.property('migration');
      }
    });

    it('on the source\'s Completed: makes the target\'s WorkItem ordinary, phase SwitchingOver; deletes the source\'s once the target reported its resume too', () => {
      const inst = vm({}, flying('Transferring'));
      const wT = side(inst, 'b', targetSpec, { migration: listening });
      const early = planInstance(observe(inst, [side(inst, 'a', sourceSpec, reporting(sourceDone)), wT]));
      expect(deleted(early)).to.deep.equal([]);
      expect(updated(early, 'b')!.spec.instance).to.not.have.property('migration');
      const plan = planInstance(observe(inst, [side(inst, 'a', sourceSpec, reporting(sourceDone)), side(inst, 'b', targetSpec, reporting(targetDone))]));
      expect(deleted(plan)).to.deep.equal(['vm.a']);
      const w = updated(plan, 'b')!;
      expect(w.spec.instance).to.not.have.property('migration');
      expect(w.metadata.annotations![SPEC_HASH_ANNOTATION]).to.equal(desiredInstanceWorkItem(inst, undefined, new Map(), 'b').metadata.annotations![SPEC_HASH_ANNOTATION]);
      expect(plan.status).to.include({ phase: 'Migrating', nodeName: 'a' });
      expect(plan.status.migration).to.include({ phase: 'SwitchingOver', downtimeMs: 350, totalTimeMs: 10_250, bytesTransferred: 10 });
      expect(instanceNodes({ ...inst, status: plan.status })).to.deep.equal(['a', 'b']);
    });

    it('stays SwitchingOver until the target WorkItem, now ordinary, runs and is ready for its current generation', () => {
      const inst = vm({}, flying('SwitchingOver'));
      const wT = side(inst, 'b', undefined, reporting(targetDone, 1), { generation: 2 });
      const plan = planInstance(observe(inst, [side(inst, 'a', sourceSpec, reporting(sourceDone), { deleting: true }), wT]));
      expect(plan.actions).to.deep.equal([]);
      expect(plan.status.migration).to.include({ phase: 'SwitchingOver' });
    });

    it('Completed once it does: nodeName the target, the figures (downtime includes the switch-over), a Normal Migrated event', () => {
      const inst = vm({}, { ...flying('SwitchingOver'), conditions: [{ type: 'MigrationFailed', status: 'True', reason: 'Timeout', message: 'x', lastTransitionTime: EARLIER }] });
      const wT = side(inst, 'b', undefined, reporting(targetDone, 2), { generation: 2 });
      const plan = planInstance(observe(inst, [side(inst, 'a', sourceSpec, reporting(sourceDone), { deleting: true }), wT]));
      expect(deleted(plan)).to.deep.equal([]);
      expect(events(plan.actions)).to.deep.equal([['Normal', 'Migrated']]);
      expect(plan.status).to.include({ phase: 'Running', nodeName: 'b', workItemName: 'vm.b' });
      expect(plan.status.migration).to.deep.equal({ id: ID, mode: 'Live', sourceNode: 'a', targetNode: 'b', phase: 'Completed', startedAt: STARTED, finishedAt: NOW_TEXT, downtimeMs: 350, totalTimeMs: 10_250, bytesTotal: 10, bytesTransferred: 10, bytesRemaining: 0 });
      expect(cond(plan.status, 'MigrationFailed')).to.include({ status: 'False', reason: 'Migrated' });
      expect(instanceNodes({ ...inst, status: plan.status })).to.deep.equal(['b']);
    });

    it('keeps the figures written at switch-over once the source WorkItem is gone; sets no MigrationFailed condition that never was', () => {
      const inst = vm({}, flying('SwitchingOver', { downtimeMs: 120, totalTimeMs: 800 }));
      const plan = planInstance(observe(inst, [side(inst, 'b', undefined, reporting(undefined, 2), { generation: 2 })]));
      expect(plan.status.migration).to.include({ phase: 'Completed', downtimeMs: 120, totalTimeMs: 800 });
      expect(cond(plan.status, 'MigrationFailed')).to.equal(undefined);
    });

    it('the target\'s Completed is past the point of no return too, even with the source unreachable', () => {
      const inst = vm({}, flying('Transferring'));
      const plan = planInstance(observe(inst, [side(inst, 'a', sourceSpec, reporting()), side(inst, 'b', targetSpec, reporting(targetDone))], { nodes: { a: unreachable(5000) } }));
      expect(deleted(plan)).to.deep.equal(['vm.a']);
      expect(updated(plan, 'b')!.spec.instance).to.not.have.property('migration');
      expect(plan.status.migration).to.include({ phase: 'SwitchingOver' });
    });

    it('keeps the source WorkItem until it reported Completed with its figures, when the target resumed first (the lease is handed over before that report)', () => {
      const inst = vm({}, flying('Transferring'));
      const plan = planInstance(observe(inst, [side(inst, 'a', sourceSpec, reporting({ id: ID, role: 'Source', phase: 'Transferring' })), side(inst, 'b', targetSpec, reporting(targetDone))]));
      expect(deleted(plan)).to.deep.equal([]);
      expect(updated(plan, 'b')!.spec.instance).to.not.have.property('migration');
      expect(plan.status.migration).to.include({ phase: 'SwitchingOver' });
    });

    it('releases a source WorkItem stuck on a lost node once the target holds the fencing lease', () => {
      const inst = vm({}, flying('SwitchingOver'));
      const workItems = [side(inst, 'a', sourceSpec, reporting(sourceDone), { deleting: true }), side(inst, 'b', undefined, reporting(targetDone))];
      const held = { held: true, remainingMs: 20_000 };
      expect(ofType(planInstance(observe(inst, workItems, { nodes: { a: LOST }, fencing: { ...held, holder: 'b' } })).actions, 'releaseWorkItem').map((a) => a.name)).to.deep.equal(['vm.a']);
      expect(ofType(planInstance(observe(inst, workItems, { nodes: { a: LOST }, fencing: { ...held, holder: 'a' } })).actions, 'releaseWorkItem')).to.have.length(0);
    });

    it('resumes step 7 when the target was made ordinary but the status write was lost', () => {
      const inst = vm({}, flying('Transferring'));
      const plan = planInstance(observe(inst, [side(inst, 'a', sourceSpec, reporting(sourceDone)), side(inst, 'b', undefined, reporting(targetDone))]));
      expect(deleted(plan)).to.deep.equal(['vm.a']);
      expect(plan.status.migration).to.include({ phase: 'SwitchingOver' });
    });

    it('fails with TargetFailed when the target cannot resume after the hand-over; the instance stays with the target', () => {
      const inst = vm({}, flying('SwitchingOver'));
      const plan = planInstance(observe(inst, [side(inst, 'b', undefined, reporting({ ...targetDone, phase: 'Failed', message: 'qemu died' }))]));
      expect(plan.status.migration).to.include({ phase: 'Failed', reason: 'TargetFailed' });
      expect(plan.status.migration!.message).to.contain('qemu died');
      expect(plan.status.nodeName).to.equal('b');
      expect(deleted(plan)).to.deep.equal([]);
    });
  });

  describe('failure and rollback', () => {
    const inst = vm({}, flying('Transferring'));
    const wS = side(inst, 'a', sourceSpec, reporting({ id: ID, role: 'Source', phase: 'Transferring' }));
    const wT = side(inst, 'b', targetSpec, { migration: listening });

    function expectRolledBack(plan: ReturnType<typeof planInstance>, reason: string, message?: RegExp, now = NOW) {
      expect(deleted(plan)).to.deep.equal(['vm.b']);
      const source = updated(plan, 'a');
      expect(source?.spec.instance, 'source side removed').to.not.have.property('migration');
      expect(plan.status.migration).to.include({ id: ID, phase: 'Failed', reason, finishedAt: new Date(now).toISOString().replace('.000Z', 'Z'), targetNode: 'b', sourceNode: 'a' });
      expect(plan.status.migration!.message).to.contain('set spec.migrateTo again to retry: cairn migrate instance vm --to b');
      if (message) expect(plan.status.migration!.message).to.match(message);
      expect(cond(plan.status, 'MigrationFailed')).to.include({ status: 'True', reason });
      expect(events(plan.actions)).to.deep.equal([['Warning', 'MigrationFailed']]);
      expect(plan.status).to.include({ nodeName: 'a', phase: 'Running' });
      expect(instanceNodes({ ...inst, status: plan.status })).to.deep.equal(['a']);
    }

    it('the target reports Failed (TargetFailed, with its message)', () => {
      const failedT = side(inst, 'b', targetSpec, { migration: { ...listening, phase: 'Failed', message: 'incoming migration failed' } });
      expectRolledBack(planInstance(observe(inst, [wS, failedT])), 'TargetFailed', /on node b: incoming migration failed/);
    });

    it('the target WorkItem fails (TargetFailed, with its last error)', () => {
      const failedT = side(inst, 'b', targetSpec, { phase: 'Failed', lastError: { reason: 'CommandFailed', message: 'qemu exited with status 1' } });
      expectRolledBack(planInstance(observe(inst, [wS, failedT])), 'TargetFailed', /qemu exited with status 1/);
    });

    it('the target node becomes unreachable (TargetFailed)', () => {
      expectRolledBack(planInstance(observe(inst, [wS, wT], { nodes: { b: unreachable(5000) } })), 'TargetFailed', /node b \(the target\) stopped renewing/);
    });

    it('the source reports Failed (SourceFailed) or Cancelled (Cancelled) within the timeout', () => {
      for (const [phase, reason] of [['Failed', 'SourceFailed'], ['Cancelled', 'Cancelled']] as const) {
        const s = side(inst, 'a', sourceSpec, reporting({ id: ID, role: 'Source', phase, message: 'migrate: connection reset' }));
        expectRolledBack(planInstance(observe(inst, [s, wT])), reason, /on node a: migrate: connection reset/);
      }
    });

    it('the source gave up after timeoutSeconds (Timeout)', () => {
      const s = side(inst, 'a', sourceSpec, reporting({ id: ID, role: 'Source', phase: 'Cancelled', message: 'timed out' }));
      const now = Date.parse(STARTED) + 301_000;
      expectRolledBack(planInstance(observe(inst, [s, wT], { now })), 'Timeout', /timed out/, now);
    });

    it('both sides failed: the one that failed first is the cause', () => {
      const t = (finishedAt: string) => side(inst, 'b', targetSpec, { migration: { ...listening, phase: 'Failed', message: 'target side', finishedAt } });
      const s = side(inst, 'a', sourceSpec, reporting({ id: ID, role: 'Source', phase: 'Failed', message: 'source side', finishedAt: '2024-05-01T11:59:30Z' }));
      expectRolledBack(planInstance(observe(inst, [s, t('2024-05-01T11:59:31Z')])), 'SourceFailed', /source side/);
      expectRolledBack(planInstance(observe(inst, [s, t('2024-05-01T11:59:29Z')])), 'TargetFailed', /target side/);
    });

    it('still in flight timeoutSeconds + 30 s after it started (Timeout); requeued for that moment before', () => {
      const deadline = Date.parse(STARTED) + 300_000 + MIGRATION_GRACE_MS;
      expect(planInstance(observe(inst, [wS, wT], { now: deadline - 5000 })).requeueAfterMs).to.equal(5100);
      expect(planInstance(observe(inst, [wS, wT], { now: deadline })).requeueAfterMs).to.equal(100);
      expectRolledBack(planInstance(observe(inst, [wS, wT], { now: deadline + 1000 })), 'Timeout', /not finished 331s after it started/, deadline + 1000);
    });

    it('the deadline is the timeout the target WorkItem was given, even if spec.qemu.migration changed since', () => {
      const short = side(inst, 'b', { ...targetSpec, timeoutSeconds: 20 }, { migration: listening });
      const now = Date.parse(STARTED) + 20_000 + MIGRATION_GRACE_MS + 1000;
      expectRolledBack(planInstance(observe(inst, [wS, short], { now })), 'Timeout', /its timeoutSeconds is 20/, now);
    });

    it('someone deleted the target WorkItem (TargetFailed)', () => {
      const plan = planInstance(observe(inst, [wS, side(inst, 'b', targetSpec, { migration: listening }, { deleting: true })]));
      expect(plan.status.migration).to.include({ phase: 'Failed', reason: 'TargetFailed' });
      expect(plan.status.migration!.message).to.match(/WorkItem vm\.b was deleted/);
      expect(updated(plan, 'a')!.spec.instance).to.not.have.property('migration');
    });

    it('spec.migrateTo cleared or changed (Cancelled), without moving anywhere in the same pass', () => {
      for (const migrateTo of [undefined, 'c']) {
        const changed = vm({ migrateTo }, flying('Transferring'));
        const plan = planInstance(observe(changed, [wS, wT]));
        expect(deleted(plan)).to.deep.equal(['vm.b']);
        expect(cond(plan.status, 'MigrationFailed')).to.include({ status: 'True', reason: 'Cancelled' });
        expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
      }
    });

    it('the source node becomes unreachable (SourceFailed): the target WorkItem goes, the source is failed over as any instance', () => {
      const notYet = planInstance(observe(inst, [wS, wT], { nodes: { a: unreachable(5000) } }));
      expect(deleted(notYet)).to.deep.equal(['vm.b']);
      expect(notYet.status.migration).to.include({ phase: 'Failed', reason: 'SourceFailed' });
      expect(notYet.status.phase).to.equal('Unknown');
      expect(notYet.requeueAfterMs).to.equal(5100);
      const lost = planInstance(observe(inst, [wS, wT], { nodes: { a: LOST } }));
      expect(ofType(lost.actions, 'releaseWorkItem').map((a) => a.name)).to.deep.equal(['vm.a']);
      expect(events(lost.actions)).to.deep.equal([['Warning', 'MigrationFailed'], ['Warning', 'FailingOver']]);
    });

    it('re-applies a recorded failure to WorkItems that still say otherwise, without a second event', () => {
      const failed = vm({}, { nodeName: 'a', migration: { id: ID, mode: 'Live', sourceNode: 'a', targetNode: 'b', phase: 'Failed', reason: 'Timeout' } });
      const plan = planInstance(observe(failed, [side(failed, 'a', sourceSpec, reporting()), side(failed, 'b', targetSpec)]));
      expect(deleted(plan)).to.deep.equal(['vm.b']);
      expect(updated(plan, 'a')!.spec.instance).to.not.have.property('migration');
      expect(events(plan.actions)).to.deep.equal([]);
      expect(plan.status.migration).to.deep.equal(failed.status!.migration);
    });

    it('a rollback half applied (target being deleted, status not written) still ends Failed', () => {
      const plan = planInstance(observe(inst, [side(inst, 'a', undefined, reporting()), side(inst, 'b', targetSpec, { migration: { ...listening, phase: 'Failed', message: 'x' } }, { deleting: true })]));
      expect(plan.status.migration).to.include({ phase: 'Failed', reason: 'TargetFailed' });
      expect(ofType(plan.actions, 'createWorkItem')).to.have.length(0);
    });
  });

  describe('the request', () => {
    it('clearing spec.migrateTo withdraws the report of a finished migration, so the same node can be asked again', () => {
      const cleared = vm({ migrateTo: undefined }, { nodeName: 'a', migration: { id: ID, mode: 'Live', targetNode: 'b', phase: 'Failed' } });
      const plan = planInstance(observe(cleared, [side(cleared, 'a', undefined, reporting())]));
      expect(plan.status.migration).to.equal(undefined);
      const again = vm({}, plan.status);
      expect(ofType(planInstance(observe(again, [side(again, 'a', undefined, reporting())])).actions, 'createWorkItem')).to.have.length(1);
    });

    it('the plan leaves its input alone', () => {
      const inst = vm({}, flying('Transferring'));
      const o = observe(inst, [side(inst, 'a', sourceSpec, reporting()), side(inst, 'b', targetSpec, { migration: listening })]);
      const before = clone({ instance: o.instance, workItems: o.workItems });
      planInstance(o);
      expect({ instance: o.instance, workItems: o.workItems }).to.deep.equal(before);
    });
  });
});

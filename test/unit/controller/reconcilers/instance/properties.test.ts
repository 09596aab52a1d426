/**
 * Properties of planInstance over random observations: never two copies,
 * never a release while the fencing lease is held, no failover against
 * the policy, no busy requeue, deterministic, input left alone.
 */
import { expect } from 'chai';
import fc from 'fast-check';
import type { Cluster } from '../../../../../api/cluster.js';
import type { Instance } from '../../../../../api/instance.js';
import { CONTROLLER_FINALIZER, RESTARTED_AT_ANNOTATION } from '../../../../../api/names.js';
import type { WorkItem, WorkItemStatus } from '../../../../../api/workitem.js';
import type { NodeView } from '../../../../../controller/node-health.js';
import type { InstanceObserved, ScheduleDecision } from '../../../../../controller/reconcilers/instance/observed.js';
import { planInstance } from '../../../../../controller/reconcilers/instance/plan.js';
import { DRAINING, GONE, LOST, NOW, READY, cluster, instance, instanceWorkItem, ofType, running, unreachable } from '../builders.js';

const NODES = ['a', 'b', 'c'] as const;
const RUNS = { numRuns: 300 };

const viewArb: fc.Arbitrary<NodeView> = fc.oneof(
  fc.constant(READY),
  fc.constant(DRAINING),
  fc.constant(LOST),
  fc.constant(GONE),
  fc.integer({ min: 1, max: 120_000 }).map(unreachable),
  fc.integer({ min: 1, max: 120_000 }).map((ms) => ({ ...unreachable(ms), draining: true })),
);

const instanceArb: fc.Arbitrary<Instance> = fc
  .record({
    deleting: fc.boolean(),
    finalizer: fc.boolean(),
    generation: fc.integer({ min: 1, max: 3 }),
    runState: fc.constantFrom('Running' as const, 'Stopped' as const),
    failoverPolicy: fc.constantFrom(undefined, 'Automatic' as const, 'Manual' as const),
    pin: fc.constantFrom(undefined, ...NODES),
    restart: fc.constantFrom(undefined, 'r1', 'r2'),
    message: fc.constantFrom(undefined, 'no room'),
  })
  .map((r) =>
    instance(
      'web',
      { runState: r.runState, failoverPolicy: r.failoverPolicy, ...(r.pin ? { placement: { nodeName: r.pin } } : {}) },
      r.message ? { message: r.message } : undefined,
      { deleting: r.deleting, finalizers: r.finalizer ? [CONTROLLER_FINALIZER] : [], generation: r.generation, ...(r.restart ? { annotations: { [RESTARTED_AT_ANNOTATION]: r.restart } } : {}) },
    ),
  );

const statusArb: fc.Arbitrary<WorkItemStatus | undefined> = fc.constantFrom(
  undefined,
  running(),
  { observedGeneration: 1, instance: { state: 'BackOff' as const } },
  { phase: 'Failed' as const, lastError: { reason: 'CommandFailed' as const, message: 'exit 1' } },
);

/** WorkItems of the instance, as built from a possibly older spec, on distinct nodes. */
const workItemsArb: fc.Arbitrary<WorkItem[]> = fc.uniqueArray(
  fc.record({ node: fc.constantFrom(...NODES), deleting: fc.boolean(), stale: fc.boolean(), status: statusArb }),
  { maxLength: 3, selector: (w) => w.node },
).map((list) => list.map((w) => instanceWorkItem(instance('web', w.stale ? { cpus: 2 } : {}), w.node, { deleting: w.deleting, status: w.status })));

const decisionArb: fc.Arbitrary<ScheduleDecision> = fc.oneof(
  fc.constantFrom(...NODES).map((nodeName) => ({ nodeName })),
  fc.constantFrom('no room', 'other').map((message) => ({ unschedulable: true as const, message })),
);

const clusterArb: fc.Arbitrary<Cluster | undefined> = fc.constantFrom(undefined, cluster(), cluster({ failover: { enabled: false } }), cluster({ failover: { enabled: true } }));

interface Case {
  instance: Instance;
  cluster: Cluster | undefined;
  workItems: WorkItem[];
  views: Record<string, NodeView>;
  fencing: { held: boolean; remainingMs: number };
  decision: ScheduleDecision;
}

const caseArb: fc.Arbitrary<Case> = fc.record({
  instance: instanceArb,
  cluster: clusterArb,
  workItems: workItemsArb,
  views: fc.record({ a: viewArb, b: viewArb, c: viewArb }),
  fencing: fc.oneof(fc.constant({ held: false, remainingMs: 0 }), fc.integer({ min: 1, max: 60_000 }).map((remainingMs) => ({ held: true, remainingMs }))),
  decision: decisionArb,
});

function observed(c: Case): InstanceObserved {
  return { instance: c.instance, cluster: c.cluster, workItems: c.workItems, volumes: new Map(), node: (n) => c.views[n] ?? GONE, fencing: c.fencing, schedule: () => c.decision, now: NOW };
}

const gone = (plan: ReturnType<typeof planInstance>) => new Set(plan.actions.flatMap((a) => (a.type === 'deleteWorkItem' || a.type === 'releaseWorkItem' ? [a.name] : [])));

describe('planInstance: properties', () => {
  it('never yields a create while any WorkItem of the instance, active or terminating, still exists (never two copies)', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const plan = planInstance(observed(c));
        const creates = ofType(plan.actions, 'createWorkItem');
        expect(creates.length).to.be.at.most(1);
        if (creates.length > 0) expect(c.workItems, 'a create next to an existing WorkItem').to.have.length(0);
        if (c.instance.metadata.deletionTimestamp) {
          expect(creates).to.have.length(0);
          return;
        }
        // At most one WorkItem is meant to stay: the active ones not deleted or released, plus what is created.
        const staying = c.workItems.filter((w) => !w.metadata.deletionTimestamp && !gone(plan).has(w.metadata.name!));
        expect(staying.length + creates.length).to.be.at.most(1);
      }),
      RUNS,
    );
  });

  it('never releases a WorkItem while the fencing lease is held, and only ever one on a lost node', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const plan = planInstance(observed(c));
        const releases = ofType(plan.actions, 'releaseWorkItem');
        if (c.fencing.held) expect(releases, 'release while fenced').to.have.length(0);
        for (const r of releases) {
          const w = c.workItems.find((x) => x.metadata.name === r.name)!;
          expect(c.views[w.spec.nodeName]!.lost, `released ${r.name} from a node that is not lost`).to.equal(true);
        }
      }),
      RUNS,
    );
  });

  it('never fails over against failoverPolicy Manual or a Cluster with failover disabled', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const allowed = (c.instance.spec.failoverPolicy ?? 'Automatic') === 'Automatic' && c.cluster?.spec?.failover?.enabled !== false;
        if (allowed || c.instance.metadata.deletionTimestamp) return;
        const plan = planInstance(observed(c));
        for (const r of ofType(plan.actions, 'releaseWorkItem')) {
          const w = c.workItems.find((x) => x.metadata.name === r.name)!;
          expect(w.metadata.deletionTimestamp, `released the active ${r.name} on a lost node against the policy`).to.be.a('string');
        }
        expect(events(plan)).not.to.include('FailingOver');
      }),
      RUNS,
    );
  });

  it('never asks for an immediate requeue unless it just released something (no busy loop)', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const plan = planInstance(observed(c));
        if (plan.requeueAfterMs === undefined) return;
        expect(Number.isFinite(plan.requeueAfterMs)).to.equal(true);
        expect(plan.requeueAfterMs).to.be.at.least(0);
        if (plan.requeueAfterMs === 0) expect(ofType(plan.actions, 'releaseWorkItem').length).to.be.greaterThan(0);
      }),
      RUNS,
    );
  });

  it('is deterministic and leaves its input alone', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const before = JSON.stringify(c);
        const a = planInstance(observed(c));
        const b = planInstance(observed(structuredClone(c)));
        expect(b).to.deep.equal(a);
        expect(JSON.stringify(c)).to.equal(before);
      }),
      RUNS,
    );
  });

  it('always writes the observed generation and the Scheduled and Ready conditions', () => {
    fc.assert(
      fc.property(caseArb, (c) => {
        const { status } = planInstance(observed(c));
        expect(status.observedGeneration).to.equal(c.instance.metadata.generation);
        expect(status.conditions!.map((x) => x.type).sort()).to.deep.equal(['Ready', 'Scheduled']);
        expect(status.phase).to.be.a('string');
      }),
      RUNS,
    );
  });
});

function events(plan: ReturnType<typeof planInstance>): string[] {
  return ofType(plan.actions, 'event').map((e) => e.reason);
}

/** planWorkItem: the agent's decisions from the WorkItem, the driver's view and the fence — pure, exhaustive, and properties. */
import { expect } from 'chai';
import fc from 'fast-check';
import type { DriverAction, Observation } from '../../../agent/drivers/driver.js';
import { hasLocalCopy, planWorkItem, type AgentObserved, type AgentStep, type FenceView } from '../../../agent/plan.js';
import type { InstanceRuntimeState, MigrationRole, WorkItem } from '../../../api/workitem.js';

const NODE = 'n1';
const PEER = 'n2';
/** ensure() actions that let a guest run: they need the node's term and the instance's claim. */
// recordExit among them: the ensure that records an exit plans again and may restart in the same operation.
const RUNS_GUEST: DriverAction[] = ['start', 'restart', 'recordExit', 'resume', 'migrate', 'abortMigration'];
const ACTIONS: Array<DriverAction | undefined> = [undefined, 'start', 'restart', 'stop', 'recordExit', 'listen', 'migrate', 'finishMigration', 'abortMigration', 'resume'];
const STATES: Array<InstanceRuntimeState | undefined> = [undefined, 'Running', 'Starting', 'Stopping', 'Stopped', 'Exited', 'BackOff', 'Fenced'];

type ItemKind = 'gone' | 'deleting' | 'running' | 'stopped' | 'replica';

function workItem(kind: Exclude<ItemKind, 'gone'>, role?: MigrationRole): WorkItem {
  const base: WorkItem = {
    kind: 'WorkItem',
    metadata: { name: `x.${NODE}`, namespace: 'c1', uid: 'u1', generation: 1, ...(kind === 'deleting' ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
    spec: {
      nodeName: NODE,
      type: kind === 'replica' ? 'VolumeReplica' : 'InstanceRuntime',
      owner: { kind: kind === 'replica' ? 'Volume' : 'Instance', name: 'x' },
    },
  };
  if (kind === 'replica') return { ...base, spec: { ...base.spec, volumeReplica: { volumeName: 'x', index: 0, size: '1Gi' } } };
  const migration = role ? { id: 'm1', role, peerNodeName: PEER } : undefined;
  return { ...base, spec: { ...base.spec, instance: { driver: 'qemu', runState: kind === 'stopped' ? 'Stopped' : 'Running', cpus: 1, memory: '128Mi', ...(migration ? { migration } : {}) } } };
}

function observation(action: DriverAction | undefined, state: InstanceRuntimeState | undefined, migrationPhase?: 'Completed' | 'Transferring', role?: MigrationRole): Observation {
  return {
    converged: action === undefined,
    ...(action ? { action } : {}),
    message: 'm',
    instance: { ...(state ? { state } : {}) },
    ...(migrationPhase && role ? { migration: { id: 'm1', role, phase: migrationPhase } } : {}),
  };
}

/** Every combination the plan distinguishes. */
function* everyCase(): Generator<AgentObserved & { kind: ItemKind; role?: MigrationRole }> {
  const kinds: ItemKind[] = ['gone', 'deleting', 'running', 'stopped', 'replica'];
  const fences: FenceView[] = [];
  for (const term of [undefined, 't1'])
    for (const claimed of [false, true])
      for (const heldBy of [undefined, PEER, 'n3']) if (!(claimed && heldBy) && !(claimed && !term)) fences.push({ ...(term ? { term } : {}), claimed, ...(heldBy ? { heldBy } : {}) });
  for (const kind of kinds)
    for (const role of [undefined, 'Source', 'Target'] as const)
      for (const action of ACTIONS)
        for (const state of STATES)
          for (const phase of [undefined, 'Transferring', 'Completed'] as const)
            for (const fence of fences) {
              const item = kind === 'gone' ? undefined : workItem(kind, role);
              yield { kind, ...(role ? { role } : {}), item, obs: item ? observation(action, state, phase, role) : undefined, fence };
            }
}

const cases = [...everyCase()];
const wanted = (c: { kind: ItemKind }) => c.kind === 'running';
const describeCase = (c: AgentObserved, step: AgentStep) => JSON.stringify({ fence: c.fence, obs: c.obs, runState: c.item?.spec.instance?.runState, role: c.item?.spec.instance?.migration?.role, step });

describe('agent plan (planWorkItem)', () => {
  it(`covers ${cases.length} combinations of WorkItem, driver view and fence`, () => {
    expect(cases.length).to.be.greaterThan(5000);
  });

  describe('over every combination', () => {
    it('never starts or resumes a guest without the node term and the claim made in it', () => {
      for (const c of cases) {
        const step = planWorkItem(c);
        const action = c.obs?.converged ? undefined : c.obs?.action;
        if (step.type === 'converge' && wanted(c) && action && RUNS_GUEST.includes(action)) {
          expect(c.fence.term !== undefined && c.fence.claimed && !c.fence.heldBy, describeCase(c, step)).to.equal(true);
        }
      }
    });

    it('never stops an instance the spec wants running unless the term ended or another node holds the claim', () => {
      for (const c of cases) {
        const step = planWorkItem(c);
        if (step.type === 'stopLocal') expect(c.fence.term === undefined || c.fence.heldBy !== undefined, describeCase(c, step)).to.equal(true);
      }
    });

    it('stops a local copy whenever the term ended (a stale cache saying Running does not keep it), except a source handing over', () => {
      for (const c of cases.filter((x) => wanted(x) && x.fence.term === undefined && !x.fence.heldBy && hasLocalCopy(x.obs))) {
        const step = planWorkItem(c);
        expect(['stopLocal', 'handOver'], describeCase(c, step)).to.include(step.type);
      }
    });

    it('is idempotent: a claim made (claimed in this term) is never asked for again, a copy stopped is never stopped again', () => {
      for (const c of cases) {
        const step = planWorkItem(c);
        if (step.type === 'claim') expect(planWorkItem({ ...c, fence: { ...c.fence, claimed: true } }).type, describeCase(c, step)).to.not.equal('claim');
        if (step.type === 'stopLocal') {
          const stopped = { ...c, obs: { ...c.obs!, converged: true, instance: { state: 'Stopped' as const } } };
          expect(planWorkItem(stopped).type, describeCase(c, step)).to.equal('wait');
        }
      }
    });

    it('claims only with a term, and a WorkItem gone, being deleted or not an instance to run never touches the fence', () => {
      for (const c of cases) {
        const step = planWorkItem(c);
        if (step.type === 'claim') expect(c.fence.term, describeCase(c, step)).to.not.equal(undefined);
        if (c.kind === 'gone') expect(step).to.deep.equal({ type: 'forget' });
        if (c.kind === 'deleting') expect(step).to.deep.equal({ type: 'finalize' });
        if (c.kind === 'stopped' || c.kind === 'replica') expect(step).to.deep.equal({ type: 'converge' });
      }
    });
  });

  describe('cases', () => {
    const running = workItem('running');
    const fenced: FenceView = { claimed: false };
    const termOnly: FenceView = { term: 't1', claimed: false };
    const held: FenceView = { term: 't1', claimed: true };

    it('claims before a start, then converges', () => {
      expect(planWorkItem({ item: running, obs: observation('start', 'Pending'), fence: termOnly })).to.deep.equal({ type: 'claim' });
      expect(planWorkItem({ item: running, obs: observation('start', 'Pending'), fence: held })).to.deep.equal({ type: 'converge' });
    });

    it('claims a copy found running in a term it holds no claim in (a restarted agent), without stopping it', () => {
      expect(planWorkItem({ item: running, obs: observation(undefined, 'Running'), fence: termOnly })).to.deep.equal({ type: 'claim' });
    });

    it('stops a running copy without a term (Fenced), and waits when nothing runs', () => {
      expect(planWorkItem({ item: running, obs: observation(undefined, 'Running'), fence: fenced })).to.deep.equal({ type: 'stopLocal', reason: 'Fenced' });
      expect(planWorkItem({ item: running, obs: observation('start', 'Exited'), fence: fenced })).to.deep.equal({ type: 'wait', reason: 'Fenced' });
    });

    it('stops a running copy when another node holds the claim (LeaseHeld)', () => {
      expect(planWorkItem({ item: running, obs: observation(undefined, 'Running'), fence: { ...termOnly, heldBy: 'n3' } })).to.deep.equal({ type: 'stopLocal', reason: 'LeaseHeld' });
      expect(planWorkItem({ item: running, obs: observation('start', 'Pending'), fence: { ...termOnly, heldBy: 'n3' } })).to.deep.equal({ type: 'wait', reason: 'LeaseHeld' });
    });

    it('a migration target listens with the term alone, and waits for the hand-over to resume', () => {
      const target = workItem('running', 'Target');
      expect(planWorkItem({ item: target, obs: observation('listen', undefined), fence: termOnly })).to.deep.equal({ type: 'converge' });
      expect(planWorkItem({ item: target, obs: observation('resume', 'Running', 'Transferring', 'Target'), fence: termOnly })).to.deep.equal({ type: 'claim' });
      expect(planWorkItem({ item: target, obs: observation('resume', 'Running', 'Transferring', 'Target'), fence: { ...termOnly, heldBy: PEER } })).to.deep.equal({ type: 'wait', reason: 'AwaitingHandOver' });
      expect(planWorkItem({ item: target, obs: observation('resume', 'Running', 'Transferring', 'Target'), fence: held })).to.deep.equal({ type: 'converge' });
    });

    it('a target made ordinary before it resumed still waits for the hand-over', () => {
      expect(planWorkItem({ item: running, obs: observation('resume', 'Running', 'Transferring', 'Target'), fence: { ...termOnly, heldBy: PEER } })).to.deep.equal({ type: 'wait', reason: 'AwaitingHandOver' });
    });

    it('a migration source whose transfer completed hands the claim over', () => {
      const source = workItem('running', 'Source');
      expect(planWorkItem({ item: source, obs: observation('finishMigration', 'Running'), fence: held })).to.deep.equal({ type: 'handOver', to: PEER });
      expect(planWorkItem({ item: source, obs: observation(undefined, 'Stopped', 'Completed', 'Source'), fence: held })).to.deep.equal({ type: 'handOver', to: PEER });
      expect(planWorkItem({ item: source, obs: observation('migrate', 'Running'), fence: held })).to.deep.equal({ type: 'converge' });
    });
  });

  describe('property: two nodes never run the instance at once', () => {
    type NodeName = 'A' | 'B';
    interface NodeModel {
      /** The node's term (undefined: lapsed, its copy stopped by the agent or the watchdog by expiry). */
      term?: number;
      claimedTerm?: number;
      running: boolean;
    }
    type Event = { type: 'reconcile' | 'lapse' | 'newTerm' | 'failOver'; node: NodeName };
    const event = fc.record({ type: fc.constantFrom('reconcile', 'lapse', 'newTerm', 'failOver'), node: fc.constantFrom<NodeName>('A', 'B') }) as fc.Arbitrary<Event>;

    it('holds under any interleaving of reconciles, lapsed terms, new terms and controller failovers', () => {
      fc.assert(
        fc.property(fc.array(event, { maxLength: 60 }), (events) => {
          let claim: NodeName | undefined;
          let terms = 0;
          const nodes: Record<NodeName, NodeModel> = { A: { term: ++terms, running: false }, B: { term: ++terms, running: false } };
          const item = workItem('running');
          const reconcile = (n: NodeName) => {
            const s = nodes[n];
            let heldBy: string | undefined;
            for (let pass = 0; pass < 4; pass++) {
              const fence: FenceView = { ...(s.term !== undefined ? { term: `t${s.term}` } : {}), claimed: s.term !== undefined && s.claimedTerm === s.term, ...(heldBy ? { heldBy } : {}) };
              const obs = observation(s.running ? undefined : 'start', s.running ? 'Running' : 'Exited');
              const step = planWorkItem({ item, obs, fence });
              if (step.type === 'claim') {
                if (claim === undefined || claim === n) {
                  claim = n;
                  s.claimedTerm = s.term;
                } else heldBy = claim;
                continue;
              }
              if (step.type === 'converge' && obs.action === 'start') s.running = true;
              if (step.type === 'stopLocal') s.running = false;
              return;
            }
          };
          for (const e of events) {
            const s = nodes[e.node];
            if (e.type === 'reconcile') reconcile(e.node);
            if (e.type === 'lapse') s.term = undefined;
            if (e.type === 'newTerm' && s.term === undefined) s.term = ++terms;
            // The controller revokes only an expired lease (by then the watchdog killed the copy) and deletes its claim.
            if (e.type === 'failOver' && s.term === undefined) {
              s.running = false;
              if (claim === e.node) claim = undefined;
            }
            expect(nodes.A.running && nodes.B.running, JSON.stringify(events)).to.equal(false);
          }
        }),
        { numRuns: 500 },
      );
    });
  });
});

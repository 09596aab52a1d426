/**
 * A fake node agent for controller integration tests: it does what
 * agent/agent.ts does towards the API, minus the drivers. It registers its
 * Node with Ready status and capacity, renews its node Lease
 * `<cluster>/node-<name>`, list+watches the WorkItems addressed to it
 * (fieldSelector spec.nodeName) and "runs" them by writing the status the
 * real agent writes (agent/status.ts): instances are claimed (their
 * fencing Lease, taken only when free or its own, once per term of the
 * node lease, as agent/fencing/ does) and report Running, replicas report
 * their size and path (a gluster brick also its port, running unless the
 * volume is Stopped, joined once its volume is laid out). When a WorkItem gets a deletionTimestamp it
 * releases the claim and removes the agent finalizer.
 *
 * Tests switch behaviours off to simulate failures: stopHeartbeat() (node
 * lease expires), freeze() (the machine is dead: nothing is renewed or
 * written any more),
 * finalize = false (the node has not finished cleaning up yet), and
 * failures (WorkItems the node reports Failed with a reason and hint).
 * `records` keeps what it did with wall-clock times, for ordering checks.
 *
 * Concurrency model: one renew loop (the node lease) and one
 * work loop; the work loop runs one pass over every cached WorkItem at a
 * time, kicked by informer events and every PASS_EVERY_MS for retries.
 */
import type { Logger } from 'winston';
import { CairnClient } from '../../api/client/cairn-client.js';
import { isConflict, isNotFound } from '../../api/client/errors.js';
import { loadKubeConfig, type PooledKubeConfig } from '../../api/client/kubeconfig.js';
import { setCondition } from '../../api/conditions.js';
import { AGENT_FINALIZER, instanceLeaseName, nodeLeaseName } from '../../api/names.js';
import type { Node, NodeStatus } from '../../api/node.js';
import { parseQuantity } from '../../api/quantity.js';
import { GROUP, PLURALS, VERSION, type Resources } from '../../api/types.js';
import type { WorkItem, WorkItemBrickStatus, WorkItemError, WorkItemStatus } from '../../api/workitem.js';
import { Informer } from '../../runtime/informer.js';
import { LeaseLock } from '../../runtime/lease-lock.js';
import { stableJson } from '../../controller/reconcilers/stable-json.js';
import { sleep } from './eventually.js';

/** Settings of a FakeAgent. */
export interface FakeAgentOptions {
  kubeconfigPath: string;
  cluster: string;
  nodeName: string;
  /** Default 4 cpus, 4Gi memory, 10Gi storage. */
  capacity?: Resources;
  labels?: Record<string, string>;
  /** Written into the heartbeat lease; default 2. */
  leaseDurationSeconds?: number;
  /** How often the node lease is renewed; default 300 ms. */
  renewEveryMs?: number;
  log?: Logger;
}

/** One thing the fake agent did, with its wall-clock time (for ordering assertions). */
export interface AgentRecord {
  at: number;
  what: 'running' | 'stopped' | 'replica' | 'finalized' | 'claimed' | 'claim-busy' | 'claim-released';
  workItem: string;
  detail?: string;
}

const PASS_EVERY_MS = 200;
const DEFAULT_CAPACITY: Resources = { cpus: 4, memory: '4Gi', storage: '10Gi' };

/** A node agent that runs WorkItems by writing their status. */
export class FakeAgent {
  readonly client: CairnClient;
  readonly kubeConfig: PooledKubeConfig;
  readonly nodeName: string;
  readonly cluster: string;
  /** Renew the node lease. */
  heartbeat = true;
  /** Act on WorkItems (write status, acquire leases, drop finalizers). */
  working = true;
  /** Drop the agent finalizer of WorkItems being deleted. */
  finalize = true;
  /**
   * Wall-clock time at which the last successful heartbeat renewal was sent:
   * no one can have seen it earlier, so the lease is fresh until at least this + its duration.
   */
  lastHeartbeatAt = 0;
  /** What the agent did, in order. */
  readonly records: AgentRecord[] = [];
  /** WorkItems (by name) the node fails to carry out, with the error it reports (phase Failed, lastError). */
  readonly failures = new Map<string, WorkItemError>();
  /** Unexpected errors of API calls (conflicts and not-founds are expected and retried). */
  readonly errors: string[] = [];

  private readonly opts: Required<Omit<FakeAgentOptions, 'log' | 'labels'>> & Pick<FakeAgentOptions, 'log' | 'labels'>;
  private readonly heartbeatLock: LeaseLock;
  /** Claims by lease name, with the node-lease term they were made in. */
  private readonly claims = new Map<string, { lock: LeaseLock; term?: string }>();
  /** The node lease's acquireTime while held: a change is a new term, in which every claim is made again. */
  private term: string | undefined;
  private readonly informer: Informer<WorkItem>;
  private stopped = false;
  private kicked = false;
  private wake: (() => void) | undefined;
  private loops: Array<Promise<void>> = [];
  private pid = 1000;

  constructor(opts: FakeAgentOptions) {
    this.opts = { capacity: DEFAULT_CAPACITY, leaseDurationSeconds: 2, renewEveryMs: 300, ...opts };
    this.nodeName = opts.nodeName;
    this.cluster = opts.cluster;
    this.kubeConfig = loadKubeConfig({ kubeconfig: opts.kubeconfigPath });
    this.client = new CairnClient(this.kubeConfig, `fake-agent/${opts.nodeName}`);
    this.heartbeatLock = new LeaseLock(this.kubeConfig, { namespace: opts.cluster, name: nodeLeaseName(opts.nodeName), identity: opts.nodeName, leaseDurationSeconds: this.opts.leaseDurationSeconds });
    const source = { group: GROUP, version: VERSION, plural: PLURALS.WorkItem, namespace: opts.cluster, fieldSelector: `spec.nodeName=${opts.nodeName}` };
    this.informer = new Informer<WorkItem>(this.kubeConfig, source, opts.log ? { log: opts.log } : {});
    this.informer.addHandlers({ add: () => this.kick(), update: () => this.kick(), delete: () => this.kick() });
  }

  /** Renews the heartbeat once, registers the Node, then starts the renew and work loops. */
  async start(): Promise<void> {
    await this.renewHeartbeat();
    await this.register();
    this.informer.start();
    await this.informer.waitForSync();
    this.loops = [this.renewLoop(), this.workLoop()];
  }

  /** Stops renewing the node lease (the controller should find the node Unreachable). */
  stopHeartbeat(): void {
    this.heartbeat = false;
  }

  /** The machine dies: no renewals, no status, no finalizers; nothing is released. */
  freeze(): void {
    this.heartbeat = false;
    this.working = false;
  }

  /** Claims (fencing lease names) held in the current term. */
  get heldClaims(): string[] {
    return [...this.claims].filter(([, c]) => c.term !== undefined && c.term === this.term).map(([name]) => name);
  }

  /** The WorkItems addressed to this node, as its cache holds them. */
  workItems(): WorkItem[] {
    return this.informer.list();
  }

  /** Stops every loop and closes connections; leases are left to expire. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.wake?.();
    await this.informer.stop();
    await Promise.all(this.loops);
    this.kubeConfig.destroyAgent();
  }

  /** Creates the Node (or reuses it) and writes Ready status with capacity, as agent/node-registration.ts does. */
  async register(): Promise<Node> {
    const { cluster, nodeName, capacity, labels } = this.opts;
    for (let attempt = 0; ; attempt++) {
      let node = await this.client.get('Node', cluster, nodeName);
      if (!node) {
        try {
          node = await this.client.create('Node', { metadata: { name: nodeName, namespace: cluster, ...(labels ? { labels } : {}) }, spec: {} });
        } catch (err) {
          if (!isConflict(err)) throw err;
          continue;
        }
      }
      const now = new Date();
      const prev = node.status;
      const status: NodeStatus = {
        ...prev,
        phase: prev?.phase === 'Draining' || prev?.phase === 'Drained' ? prev.phase : 'Ready',
        capacity,
        allocatable: capacity,
        agentVersion: 'fake',
        // What the controller needs to place gluster bricks: where they go and the address clients dial.
        dataDir: `/var/lib/cairn/fake/${nodeName}`,
        addresses: [{ type: 'InternalIP', address: '192.0.2.10' }],
        heartbeatTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
        conditions: setCondition(prev?.conditions, { type: 'Ready', status: 'True', reason: 'AgentReady', message: 'fake agent is running and renews its heartbeat lease' }, now),
      };
      try {
        return await this.client.replaceStatus('Node', { ...node, status });
      } catch (err) {
        if (!isConflict(err) || attempt >= 10) throw err;
      }
    }
  }

  private kick(): void {
    this.kicked = true;
    this.wake?.();
  }

  private async pause(ms: number): Promise<void> {
    if (this.kicked || this.stopped) return;
    await Promise.race([sleep(ms), new Promise<void>((r) => (this.wake = r))]);
    this.wake = undefined;
  }

  private async renewHeartbeat(): Promise<void> {
    const sentAt = Date.now();
    try {
      if (await this.heartbeatLock.tryAcquireOrRenew()) {
        this.lastHeartbeatAt = sentAt;
        this.term = this.heartbeatLock.heldSince;
      }
    } catch (err) {
      this.errors.push(`heartbeat: ${String(err)}`);
    }
  }

  private async renewLoop(): Promise<void> {
    while (!this.stopped) {
      await sleep(this.opts.renewEveryMs);
      if (this.stopped) return;
      if (this.heartbeat) await this.renewHeartbeat();
    }
  }

  private async workLoop(): Promise<void> {
    while (!this.stopped) {
      this.kicked = false;
      if (this.working) {
        for (const item of this.informer.list()) {
          if (this.stopped || !this.working) break;
          try {
            await this.reconcile(item);
          } catch (err) {
            if (!isConflict(err) && !isNotFound(err)) this.errors.push(`${item.metadata.name}: ${String(err)}`);
          }
        }
      }
      await this.pause(PASS_EVERY_MS);
    }
  }

  private record(what: AgentRecord['what'], item: WorkItem, detail?: string): void {
    this.records.push({ at: Date.now(), what, workItem: item.metadata.name!, ...(detail ? { detail } : {}) });
  }

  private async reconcile(item: WorkItem): Promise<void> {
    if (item.metadata.deletionTimestamp) return this.finalizeItem(item);
    const failure = this.failures.get(item.metadata.name!);
    if (failure) return this.writeFailure(item, failure);
    if (item.spec.type === 'VolumeReplica') return this.runReplica(item);
    return this.runInstance(item);
  }

  private async finalizeItem(item: WorkItem): Promise<void> {
    if (!this.finalize || !item.metadata.finalizers?.includes(AGENT_FINALIZER)) return;
    if (item.spec.type === 'InstanceRuntime') await this.releaseClaim(item);
    const finalizers = item.metadata.finalizers.filter((f) => f !== AGENT_FINALIZER);
    await this.client.patch('WorkItem', this.cluster, item.metadata.name!, { metadata: { finalizers, resourceVersion: item.metadata.resourceVersion } });
    this.record('finalized', item);
  }

  private claimName(item: WorkItem): string {
    return item.spec.instance?.fencing?.leaseName ?? instanceLeaseName(item.spec.owner.name);
  }

  private async releaseClaim(item: WorkItem): Promise<void> {
    const name = this.claimName(item);
    const c = this.claims.get(name);
    if (!c) return;
    this.claims.delete(name);
    await c.lock.release();
    this.record('claim-released', item, name);
  }

  private async runInstance(item: WorkItem): Promise<void> {
    const spec = item.spec.instance!;
    if (spec.runState === 'Stopped') {
      await this.releaseClaim(item);
      await this.writeStatus(item, 'Done', 'stopped as spec.runState asks', { instance: { state: 'Stopped', ready: false } }, 'stopped');
      return;
    }
    const name = this.claimName(item);
    let c = this.claims.get(name);
    if (!c) {
      const lock = new LeaseLock(this.kubeConfig, { namespace: this.cluster, name, identity: this.nodeName, leaseDurationSeconds: this.opts.leaseDurationSeconds, takeOverExpired: false });
      this.claims.set(name, (c = { lock }));
    }
    if (this.term === undefined || c.term !== this.term) {
      const term = this.term;
      if (term === undefined || !(await c.lock.tryAcquireOrRenew())) {
        if (!this.records.some((r) => r.what === 'claim-busy' && r.workItem === item.metadata.name)) this.record('claim-busy', item, c.lock.observedHolder);
        await this.writeStatus(item, 'InProgress', `waiting for the claim ${name} held by ${c.lock.observedHolder}`, { instance: { state: 'Pending', ready: false } });
        return;
      }
      c.term = term;
      this.record('claimed', item, name);
    }
    const prev = item.status?.instance;
    const restarted = prev?.state === 'Running' && item.status?.observedGeneration !== item.metadata.generation;
    const instance = {
      state: 'Running' as const,
      ready: true,
      pid: prev?.state === 'Running' && !restarted ? (prev.pid ?? ++this.pid) : ++this.pid,
      startedAt: prev?.state === 'Running' && !restarted ? prev.startedAt : new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
    };
    await this.writeStatus(item, 'Done', 'running', { instance }, 'running', spec.restartToken);
  }

  private async runReplica(item: WorkItem): Promise<void> {
    const r = item.spec.volumeReplica!;
    const volumeReplica = { path: r.brick?.path ?? `/var/lib/cairn/fake/${this.nodeName}/${r.volumeName}.r${r.index}.img`, size: r.size, sizeBytes: parseQuantity(r.size), ...(r.brick ? { brick: this.brickStatus(item) } : {}) };
    await this.writeStatus(item, 'Done', 'replica exists', { volumeReplica }, 'replica', r.size);
  }

  /** A brick "runs" unless its volume is Stopped, and joins its volume once the spec names every brick. */
  private brickStatus(item: WorkItem): WorkItemBrickStatus {
    const spec = item.spec.volumeReplica!.brick!;
    const prev = item.status?.volumeReplica?.brick;
    const joinedAt = prev?.joinedAt ?? (spec.clientVolfile ? new Date(Date.now() - 60_000).toISOString() : undefined);
    if (spec.stopped) return { state: 'Stopped', port: spec.port, ...(joinedAt ? { joinedAt } : {}) };
    return { state: 'Running', port: spec.port, pid: prev?.pid ?? ++this.pid, pendingHeals: 0, selfHeal: spec.shdVolfile ? 'Running' : 'Stopped', ...(joinedAt ? { joinedAt } : {}) };
  }

  private async writeFailure(item: WorkItem, error: WorkItemError): Promise<void> {
    const prev = item.status ?? {};
    if (prev.phase === 'Failed' && prev.observedGeneration === item.metadata.generation && prev.lastError?.message === error.message) return;
    const generation = item.metadata.generation;
    const status: WorkItemStatus = {
      ...prev,
      observedGeneration: generation,
      phase: 'Failed',
      message: error.message,
      attempts: (prev.attempts ?? 0) + 1,
      lastError: error,
      ...(item.spec.type === 'InstanceRuntime' ? { instance: { state: 'Exited' as const, ready: false } } : {}),
      conditions: setCondition(prev.conditions, { type: 'Ready', status: 'False', reason: error.reason, message: error.message, observedGeneration: generation }, new Date()),
    };
    await this.client.replaceStatus('WorkItem', { ...item, status });
  }

  /** Writes status (with observedGeneration and a Ready condition) when it would change anything. */
  private async writeStatus(item: WorkItem, phase: 'Done' | 'InProgress', message: string, extra: Pick<WorkItemStatus, 'instance' | 'volumeReplica'>, what?: AgentRecord['what'], detail?: string): Promise<void> {
    const prev = item.status ?? {};
    const generation = item.metadata.generation;
    const ready = phase === 'Done' && extra.instance?.ready !== false;
    const base: WorkItemStatus = { ...prev, observedGeneration: generation, phase, message, attempts: 0, ...extra };
    if (phase === 'Done') delete base.lastError;
    if (prev.observedGeneration === generation && stableJson(withoutConditions(prev)) === stableJson(withoutConditions(base))) return;
    const status: WorkItemStatus = {
      ...base,
      conditions: setCondition(prev.conditions, { type: 'Ready', status: ready ? 'True' : 'False', reason: ready ? 'Done' : phase, message, observedGeneration: generation }, new Date()),
    };
    await this.client.replaceStatus('WorkItem', { ...item, status });
    if (what) this.record(what, item, detail);
  }
}

function withoutConditions(s: WorkItemStatus): WorkItemStatus {
  const { conditions: _conditions, ...rest } = s;
  return rest;
}

/**
 * Watches every WorkItem of a cluster from the test process and records,
 * on every add/update/delete, the invariants the controller must never
 * break even for a moment: at most one WorkItem per Instance, at most one
 * per Volume replica index and never two replicas of a Volume on one node,
 * and no node holding more than its capacity. A WorkItem counts from its
 * creation until it is gone (terminating ones still occupy their node, as
 * the scheduler assumes). Also remembers every WorkItem uid ever seen, so a
 * test can tell "converged" from "converged after creating and deleting
 * duplicates".
 *
 * Concurrency model: one informer; handlers run synchronously in its loop.
 */
import { loadKubeConfig, type PooledKubeConfig } from '../../../api/client/kubeconfig.js';
import { parseQuantity } from '../../../api/quantity.js';
import { GROUP, PLURALS, VERSION, type Resources } from '../../../api/types.js';
import type { WorkItem } from '../../../api/workitem.js';
import { Informer } from '../../../runtime/informer.js';

/** One broken invariant, with when it was seen. */
export interface Violation {
  at: number;
  what: string;
}

/** Records invariant violations over the WorkItems of one namespace. */
export class WorkItemMonitor {
  readonly violations: Violation[] = [];
  /** uid → name of every WorkItem ever seen. */
  readonly everSeen = new Map<string, string>();
  /** Highest number of WorkItems any one Instance had at once. */
  maxPerInstance = 0;
  private readonly kc: PooledKubeConfig;
  private readonly informer: Informer<WorkItem>;
  private readonly reported = new Set<string>();

  constructor(
    kubeconfigPath: string,
    namespace: string,
    private readonly capacity: ReadonlyMap<string, Resources>,
  ) {
    this.kc = loadKubeConfig({ kubeconfig: kubeconfigPath });
    this.informer = new Informer<WorkItem>(this.kc, { group: GROUP, version: VERSION, plural: PLURALS.WorkItem, namespace });
    const check = () => this.check();
    this.informer.addHandlers({ add: check, update: check, delete: check });
  }

  /** Starts watching; resolves once the first list is in. */
  async start(): Promise<void> {
    this.informer.start();
    await this.informer.waitForSync();
  }

  /** The WorkItems as last seen. */
  list(): WorkItem[] {
    return this.informer.list();
  }

  async stop(): Promise<void> {
    await this.informer.stop();
    this.kc.destroyAgent();
  }

  private violate(what: string): void {
    if (this.reported.has(what)) return;
    this.reported.add(what);
    this.violations.push({ at: Date.now(), what });
  }

  private check(): void {
    const items = this.informer.list();
    const byInstance = new Map<string, string[]>();
    const bySlot = new Map<string, string[]>();
    const volumeNodes = new Map<string, string[]>();
    const used = new Map<string, { cpus: number; memory: number; storage: number }>();
    for (const w of items) {
      this.everSeen.set(w.metadata.uid!, w.metadata.name!);
      const node = w.spec.nodeName;
      const u = used.get(node) ?? { cpus: 0, memory: 0, storage: 0 };
      used.set(node, u);
      const owner = w.spec.owner.name;
      if (w.spec.type === 'InstanceRuntime') {
        byInstance.set(owner, [...(byInstance.get(owner) ?? []), w.metadata.name!]);
        u.cpus += w.spec.instance?.cpus ?? 0;
        u.memory += parseQuantity(w.spec.instance?.memory ?? '0');
      } else {
        const slot = `${owner}/r${w.spec.volumeReplica?.index}`;
        bySlot.set(slot, [...(bySlot.get(slot) ?? []), w.metadata.name!]);
        volumeNodes.set(owner, [...(volumeNodes.get(owner) ?? []), node]);
        u.storage += parseQuantity(w.spec.volumeReplica?.size ?? '0');
      }
    }
    for (const [owner, names] of byInstance) {
      this.maxPerInstance = Math.max(this.maxPerInstance, names.length);
      if (names.length > 1) this.violate(`Instance ${owner} had ${names.length} WorkItems at once: ${names.join(', ')}`);
    }
    for (const [slot, names] of bySlot) if (names.length > 1) this.violate(`Volume replica ${slot} had ${names.length} WorkItems at once: ${names.join(', ')}`);
    for (const [volume, nodes] of volumeNodes) {
      if (new Set(nodes).size !== nodes.length) this.violate(`Volume ${volume} had two replicas on one node: ${nodes.join(', ')}`);
    }
    for (const [node, u] of used) {
      const cap = this.capacity.get(node);
      if (!cap) {
        this.violate(`WorkItems on unknown node ${node}`);
        continue;
      }
      if (u.cpus > (cap.cpus ?? 0)) this.violate(`node ${node} over cpu capacity: ${u.cpus} > ${cap.cpus}`);
      if (u.memory > parseQuantity(cap.memory ?? '0')) this.violate(`node ${node} over memory capacity: ${u.memory} > ${cap.memory}`);
      if (u.storage > parseQuantity(cap.storage ?? '0')) this.violate(`node ${node} over storage capacity: ${u.storage} > ${cap.storage}`);
    }
  }
}

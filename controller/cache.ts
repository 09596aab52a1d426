/**
 * The controller's view of the world: one informer per resource it reads
 * (the five Cairn kinds, Leases, and for the garbage collector Secrets and
 * ConfigMaps), plus per-namespace lookups the reconcilers need. Reconcilers read only from here and never mutate what
 * they read.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import type { KindMap } from '../api/kinds.js';
import type { Cluster } from '../api/cluster.js';
import type { Instance } from '../api/instance.js';
import type { Node } from '../api/node.js';
import type { Volume } from '../api/volume.js';
import type { WorkItem } from '../api/workitem.js';
import { GROUP, PLURALS, VERSION, type Kind } from '../api/types.js';
import { OWNER_KIND_LABEL, OWNER_NAME_LABEL } from '../api/names.js';
import { Informer, dropManagedFields, type InformerOptions, type ListedObject } from '../runtime/informer.js';
import type { Clock } from '../runtime/clock.js';

const NAMESPACE_INDEX = 'namespace';
const OWNER_INDEX = 'owner';
const NODE_INDEX = 'node';
const ANTI_AFFINITY_INDEX = 'anti-affinity';

function ownerIndexValue(namespace: string | undefined, kind: string | undefined, name: string | undefined): string {
  return `${namespace}/${kind}/${name}`;
}

/** A coordination.k8s.io/v1 Lease as listed (times are RFC 3339 strings). */
export interface LeaseObject {
  metadata: { name?: string; namespace?: string; resourceVersion?: string; uid?: string };
  spec?: { holderIdentity?: string | null; leaseDurationSeconds?: number | null; renewTime?: string | null; acquireTime?: string | null };
}

/** The informers the controller reads from. */
export class ControllerCache {
  readonly clusters: Informer<Cluster>;
  readonly nodes: Informer<Node>;
  readonly instances: Informer<Instance>;
  readonly volumes: Informer<Volume>;
  readonly workItems: Informer<WorkItem>;
  readonly leases: Informer<LeaseObject>;
  readonly secrets: Informer<ListedObject>;
  readonly configMaps: Informer<ListedObject>;

  constructor(kubeConfig: KubeConfig, log: Logger, clock?: Clock) {
    const opts: InformerOptions = { log, clock, transform: dropManagedFields };
    const cairn = <K extends Kind>(kind: K) => new Informer<KindMap[K]>(kubeConfig, { group: GROUP, version: VERSION, plural: PLURALS[kind] }, opts);
    this.clusters = cairn('Cluster');
    this.nodes = cairn('Node');
    this.instances = cairn('Instance');
    this.volumes = cairn('Volume');
    this.workItems = cairn('WorkItem');
    this.leases = new Informer<LeaseObject>(kubeConfig, { group: 'coordination.k8s.io', version: 'v1', plural: 'leases' }, opts);
    // Only their metadata matters (ownerReferences, finalizers): the data is not kept.
    const core = (plural: string) => new Informer<ListedObject>(kubeConfig, { group: '', version: 'v1', plural }, { ...opts, transform: metadataOnly });
    this.secrets = core('secrets');
    this.configMaps = core('configmaps');
    for (const i of this.all) i.addIndex(NAMESPACE_INDEX, (o) => [(o.metadata as { namespace?: string }).namespace ?? '']);
    this.workItems.addIndex(OWNER_INDEX, (w) => [ownerIndexValue(w.metadata.namespace, w.metadata.labels?.[OWNER_KIND_LABEL], w.metadata.labels?.[OWNER_NAME_LABEL])]);
    this.instances.addIndex(NODE_INDEX, (i) => (i.status?.nodeName ? [`${i.metadata.namespace}/${i.status.nodeName}`] : []));
    this.instances.addIndex(ANTI_AFFINITY_INDEX, (i) => (i.spec.placement?.antiAffinityGroup ? [i.metadata.namespace!] : []));
  }

  private get all(): Array<Informer<ListedObject>> {
    return [this.clusters, this.nodes, this.instances, this.volumes, this.workItems, this.leases, this.secrets, this.configMaps] as unknown as Array<Informer<ListedObject>>;
  }

  /**
   * Starts every informer; resolves when those the reconcilers read have synced. The Secrets and
   * ConfigMaps only the garbage collector reads may take much longer (a cluster can hold hundreds of
   * thousands): its loop waits for them itself, and the others need not (a new leader once waited
   * 80 s for 390,000 ConfigMaps before it marked a node Ready again).
   */
  async start(): Promise<void> {
    for (const i of this.all) i.start();
    await Promise.all(this.all.filter((i) => !this.gcOnly.includes(i)).map((i) => i.waitForSync()));
  }

  // The informers only the garbage collector reads.
  private get gcOnly(): Array<Informer<ListedObject>> {
    return [this.secrets, this.configMaps];
  }

  /** Stops every informer. */
  async stop(): Promise<void> {
    await Promise.all(this.all.map((i) => i.stop()));
  }

  /** Whether the informers the reconcilers read have synced (the leader's readiness; see start()). */
  get synced(): boolean {
    return this.all.every((i) => i.hasSynced || this.gcOnly.includes(i));
  }

  /** The Cluster a namespace belongs to. */
  cluster(namespace: string): Cluster | undefined {
    return this.clusters.get(namespace);
  }

  /** Objects of one informer in one namespace. */
  inNamespace<T extends { metadata: { namespace?: string } }>(informer: Informer<T>, namespace: string): readonly T[] {
    return informer.byIndex(NAMESPACE_INDEX, namespace);
  }

  /** WorkItems of an owner (by the owner labels the controller writes). */
  workItemsOf(kind: 'Instance' | 'Volume', namespace: string, name: string): readonly WorkItem[] {
    return this.workItems.byIndex(OWNER_INDEX, ownerIndexValue(namespace, kind, name));
  }

  /** Instances whose status places them on a node. */
  instancesOnNode(namespace: string, nodeName: string): readonly Instance[] {
    return this.instances.byIndex(NODE_INDEX, `${namespace}/${nodeName}`);
  }

  /** Instances of a namespace in an anti-affinity group: the few the scheduler must look at one by one. */
  groupedInstances(namespace: string): readonly Instance[] {
    return this.instances.byIndex(ANTI_AFFINITY_INDEX, namespace);
  }

  /** A Lease by namespace and name. */
  lease(namespace: string, name: string): LeaseObject | undefined {
    return this.leases.get(`${namespace}/${name}`);
  }
}

// Keeps an object's metadata (less managedFields) and drops the rest: a Secret's data never stays in the controller.
function metadataOnly<T>(obj: T): T {
  const { metadata } = dropManagedFields(obj) as { metadata: unknown };
  return { metadata } as T;
}

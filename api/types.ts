/**
 * What every Cairn resource shares (group cairn.dev, version v1alpha1):
 * names, metadata, conditions, resources. Each kind's own shape is in its
 * file (cluster.ts, node.ts, instance.ts, volume.ts, workitem.ts), field for
 * field the openAPIV3Schema of its CRD in crds/. Fields that the
 * schema does not require are optional here even when the apiserver fills a
 * default, because objects built in code (and older stored objects) may lack
 * them. Times are RFC 3339 strings and quantities strings like "128Mi", as
 * they travel in JSON. This module imports nothing of ours.
 */

/** API group of Cairn's kinds. */
export const GROUP = 'cairn.dev';
/** Served and stored version of Cairn's kinds. */
export const VERSION = 'v1alpha1';
/** The apiVersion field of every Cairn object. */
export const API_VERSION = `${GROUP}/${VERSION}` as const;

/** Kind names of Cairn's resources. */
export const KINDS = ['Cluster', 'Node', 'Instance', 'Volume', 'WorkItem'] as const;
/** One of Cairn's kind names. */
export type Kind = (typeof KINDS)[number];

/** URL plural of each kind, as in /apis/cairn.dev/v1alpha1/namespaces/{ns}/{plural}. */
export const PLURALS = {
  Cluster: 'clusters',
  Node: 'nodes',
  Instance: 'instances',
  Volume: 'volumes',
  WorkItem: 'workitems',
} as const satisfies Record<Kind, string>;

/** Whether each kind lives in a namespace (the Cluster's name) or is cluster-scoped. */
export const NAMESPACED = {
  Cluster: false,
  Node: true,
  Instance: true,
  Volume: true,
  WorkItem: true,
} as const satisfies Record<Kind, boolean>;

/** An RFC 3339 timestamp such as 2024-05-01T12:00:00Z. */
export type Time = string;
/** A binary quantity matching ^[0-9]+(Ki|Mi|Gi|Ti)?$, e.g. "64Mi" (bytes without a suffix). */
export type Quantity = string;

/** A reference from a dependent object to its owner, as metav1.OwnerReference. */
export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

/** The parts of metav1.ObjectMeta that Cairn reads and writes. */
export interface ObjectMeta {
  name?: string;
  generateName?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  creationTimestamp?: Time;
  deletionTimestamp?: Time;
  deletionGracePeriodSeconds?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: OwnerReference[];
  finalizers?: string[];
}

/** Status of a condition, as metav1.ConditionStatus. */
export type ConditionStatus = 'True' | 'False' | 'Unknown';

/** One aspect of an object's state, in the shape of metav1.Condition. */
export interface Condition {
  /** CamelCase kind of condition, e.g. Ready. */
  type: string;
  status: ConditionStatus;
  observedGeneration?: number;
  /** Changes only when status flips. */
  lastTransitionTime: Time;
  /** CamelCase machine-readable cause. */
  reason: string;
  /** Human-readable details, including how to fix a problem. */
  message: string;
}

/** Fields every Cairn object has. */
export interface CairnObjectBase<K extends Kind> {
  apiVersion?: typeof API_VERSION;
  kind?: K;
  metadata: ObjectMeta;
}

/** A Cairn object whose schema requires spec. */
export interface CairnObject<K extends Kind, Spec, Status> extends CairnObjectBase<K> {
  spec: Spec;
  status?: Status;
}

/** A list of objects as the apiserver returns it. */
export interface ObjectList<T> {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}

/** Cpus, memory and storage of a node or cluster. */
export interface Resources {
  cpus?: number;
  memory?: Quantity;
  storage?: Quantity;
}

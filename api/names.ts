/**
 * Names Cairn's processes agree on without asking each other: annotations,
 * lease names and environment variables. Kept here so the controller, the
 * agent and the CLI cannot drift apart.
 */

/** Namespace of control-plane objects such as the controller's leader Lease. */
export const SYSTEM_NAMESPACE = 'cairn-system';

/** Name of the controller's leader-election Lease in SYSTEM_NAMESPACE. */
export const CONTROLLER_LEASE_NAME = 'cairn-controller';

/** Annotation on an Instance whose new value asks for one restart (like kubectl rollout restart). */
export const RESTARTED_AT_ANNOTATION = 'cairn.dev/restartedAt';

/** Name of a node's heartbeat Lease in its cluster's namespace. */
export function nodeLeaseName(nodeName: string): string {
  return `node-${nodeName}`;
}

/** Name of an instance's fencing Lease in its cluster's namespace. */
export function instanceLeaseName(instanceName: string): string {
  return `instance-${instanceName}`;
}

/** Environment variable holding the replica path of a volume attachment, e.g. data → CAIRN_VOLUME_DATA. */
export function volumeEnvName(attachmentName: string): string {
  return `CAIRN_VOLUME_${attachmentName.toUpperCase().replace(/[^A-Z0-9]/g, '_')}`;
}

/** Finalizer the controller puts on Instances and Volumes: their WorkItems must be gone before they are. */
export const CONTROLLER_FINALIZER = 'cairn.dev/controller';

/** Finalizer on WorkItems: the agent removes it once the node has cleaned up. */
export const AGENT_FINALIZER = 'cairn.dev/agent';

/** Finalizer on Clusters: everything in the cluster's namespace is deleted first. */
export const CLUSTER_FINALIZER = 'cairn.dev/cluster-cleanup';

/** Label on WorkItems naming the kind of their owner. */
export const OWNER_KIND_LABEL = 'cairn.dev/owner-kind';

/** Label on WorkItems naming their owner. */
export const OWNER_NAME_LABEL = 'cairn.dev/owner-name';

/** Whether a label or annotation key is in the cairn.dev domain (`cairn.dev/x`, `sub.cairn.dev/x`): the control plane's and operators', never a node's to set. */
export function isCairnKey(key: string): boolean {
  const slash = key.indexOf('/');
  const domain = slash < 0 ? '' : key.slice(0, slash);
  return domain === 'cairn.dev' || domain.endsWith('.cairn.dev');
}

/** Label on WorkItems naming their node. */
export const NODE_LABEL = 'cairn.dev/node';

/** Kubernetes' well-known label of a node's failure zone: a Volume's replicas spread across zones. */
export const ZONE_LABEL = 'topology.kubernetes.io/zone';

const MAX_NAME = 253;

/** A DNS-subdomain name from parts joined by dots, shortened with a hash suffix when too long. */
export function joinName(...parts: string[]): string {
  const name = parts.join('.');
  if (name.length <= MAX_NAME) return name;
  let h = 0;
  for (const ch of name) h = (Math.imul(h, 31) + ch.charCodeAt(0)) >>> 0;
  return `${name.slice(0, MAX_NAME - 9)}-${h.toString(16).padStart(8, '0')}`;
}

/** Name of the WorkItem that runs an instance on a node. */
export function instanceWorkItemName(instanceName: string, nodeName: string): string {
  return joinName(instanceName, nodeName);
}

/** Name of the WorkItem that keeps replica `index` of a volume on a node. */
export function replicaWorkItemName(volumeName: string, index: number, nodeName: string): string {
  return joinName(volumeName, `r${index}`, nodeName);
}

/** The built-in roles a user can be given (the ClusterRoles cairn:<role>). */
export const USER_ROLES = ['admin', 'operator', 'viewer'];

/**
 * Where brick `index` of a gluster Volume keeps its data on a node whose agent has this data dir
 * (Node status.dataDir): the controller writes it into the brick's volfile, the agent refuses any other.
 */
export function brickDataPath(dataDir: string, namespace: string, volumeName: string, index: number): string {
  return `${dataDir.replace(/\/+$/, '')}/bricks/${namespace}/${volumeName}-${index}`;
}

/** kube's finalizer of an owner deleted in the foreground: it goes once its blocking dependents have (metav1.FinalizerDeleteDependents). */
export const FOREGROUND_FINALIZER = 'foregroundDeletion';
/** kube's finalizer of an owner deleted with its dependents orphaned: it goes once they no longer name it (metav1.FinalizerOrphanDependents). */
export const ORPHAN_FINALIZER = 'orphan';

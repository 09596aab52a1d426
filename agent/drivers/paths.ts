/**
 * Where drivers keep things under the agent's data dir. Names come from
 * WorkItems, i.e. from users, so each one is checked to be a DNS-style name
 * before it becomes a path component: a WorkItem can never make the agent
 * touch a file outside its data dir. Pure.
 */
import path from 'node:path';
import type { WorkItem } from '../../api/workitem.js';
import { OperationError } from '../operations/errors.js';

const NAME = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;

/** `value` when it is a safe path component (a Kubernetes object name); throws InvalidSpec otherwise. */
export function safeName(field: string, value: string | undefined): string {
  if (value === undefined || value.length > 253 || !NAME.test(value) || value.includes('..')) {
    throw new OperationError('InvalidSpec', `${field} "${value ?? ''}" is not a valid object name`, `set ${field} to a lowercase DNS name`);
  }
  return value;
}

/** The cluster (namespace) and owner name of a WorkItem, checked. */
export function ownerKey(item: WorkItem): { namespace: string; name: string } {
  return { namespace: safeName('metadata.namespace', item.metadata.namespace), name: safeName('spec.owner.name', item.spec.owner.name) };
}

/** Directory of one process instance: state.json, the exit file and console.log*. */
export function instanceDir(dataDir: string, namespace: string, name: string): string {
  return path.join(dataDir, 'instances', namespace, name);
}

/**
 * File holding the node's fencing deadline in a cluster (epoch ms): the
 * agent pushes it forward on every renewal of the node lease; every
 * instance's shim kills its instance when the clock passes it, so no copy
 * outlives the node's term even when the agent is dead (docs/fencing.md).
 */
export function fenceDeadlinePath(dataDir: string, cluster: string): string {
  return path.join(dataDir, 'fencing', `${cluster}.deadline`);
}

/** Directory holding a cluster's volume replicas on this node. */
export function volumesDir(dataDir: string, namespace: string): string {
  return path.join(dataDir, 'volumes', namespace);
}

/** Path of replica `index` of a volume on this node. */
export function replicaPath(dataDir: string, namespace: string, volumeName: string, index: number): string {
  if (!Number.isSafeInteger(index) || index < 0) {
    throw new OperationError('InvalidSpec', `replica index ${index} of volume ${volumeName} is not a non-negative integer`, 'fix spec.volumeReplica.index');
  }
  return path.join(volumesDir(dataDir, namespace), `${safeName('volume name', volumeName)}-${index}.img`);
}

/**
 * Admission that gives new Instances and Volumes the controller's finalizer,
 * as kube's StorageObjectInUseProtection gives PVCs theirs: the controller
 * would otherwise add it in a write of its own, one etcd write per object.
 *
 * Only while a controller holds the leader Lease: with none, nothing would
 * ever remove the finalizer and every deletion would hang (an apiserver run
 * alone, or `cairn server --no-controller` driven by hand). The controller
 * still adds the finalizer to any object created without it, so a lease
 * read stale either way costs at most that one write.
 */
import { CONTROLLER_FINALIZER, CONTROLLER_LEASE_NAME, SYSTEM_NAMESPACE } from '../../api/names.js';
import { leaseDefinition } from '../builtin/lease.js';
import type { ResourceDefinition } from '../resources.js';
import type { KubeObject } from '../storage/codec.js';
import { objectKey } from '../storage/keys.js';

const GUARDED_KINDS = new Set(['cairn.dev/Instance', 'cairn.dev/Volume']);
const LEADER_LEASE_KEY = objectKey(leaseDefinition, SYSTEM_NAMESPACE, CONTROLLER_LEASE_NAME);

/** Finalizers a new object of a kind gets at creation. */
export type CreationFinalizers = (def: ResourceDefinition) => readonly string[];

/** The controller's finalizer for guarded kinds while the cached leader Lease names a holder. */
export function controllerFinalizerAtCreation(leases: { readonly objects: ReadonlyMap<string, KubeObject> }): CreationFinalizers {
  return (def) => {
    if (!GUARDED_KINDS.has(`${def.group}/${def.kind}`)) return [];
    const holder = (leases.objects.get(LEADER_LEASE_KEY)?.spec as { holderIdentity?: string } | undefined)?.holderIdentity;
    return holder ? [CONTROLLER_FINALIZER] : [];
  };
}

/** `obj` with `finalizers` added to those it has. */
export function withFinalizers(obj: KubeObject, finalizers: readonly string[]): KubeObject {
  const current = obj.metadata.finalizers ?? [];
  const missing = finalizers.filter((f) => !current.includes(f));
  return missing.length === 0 ? obj : { ...obj, metadata: { ...obj.metadata, finalizers: [...current, ...missing] } };
}

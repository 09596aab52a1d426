/**
 * What one Instance or one Volume replica asks of a node, with the CRDs'
 * defaults applied, because objects built in code or stored before a
 * default existed may lack the fields.
 */
import type { Instance } from '../../api/instance.js';
import type { Volume, VolumeReplicaStatus } from '../../api/volume.js';
import { bytesOf } from './quantities.js';
import { objectKey } from './snapshot.js';

/** Cpus of an Instance whose spec.cpus is unset. */
export const DEFAULT_INSTANCE_CPUS = 1;
/** Memory of an Instance whose spec.memory is unset. */
export const DEFAULT_INSTANCE_MEMORY = '128Mi';

/** Cpus and memory an Instance reserves on its node. */
export interface InstanceRequest {
  cpus: number;
  memoryBytes: number;
}

/** The cpus and memory an Instance reserves, defaults applied. */
export function instanceRequest(instance: Instance): InstanceRequest {
  return {
    cpus: instance.spec.cpus ?? DEFAULT_INSTANCE_CPUS,
    memoryBytes: bytesOf(instance.spec.memory ?? DEFAULT_INSTANCE_MEMORY, `Instance ${objectKey(instance)} spec.memory`),
  };
}

/** Bytes one new replica of a Volume needs: its spec.size. */
export function volumeSizeBytes(volume: Volume): number {
  return bytesOf(volume.spec.size, `Volume ${objectKey(volume)} spec.size`);
}

/**
 * Bytes an existing replica occupies: the larger of spec.size and the
 * replica's observed size, so a resize in either direction never counts
 * less than the file may hold.
 */
export function replicaStorageBytes(volume: Volume, replica: VolumeReplicaStatus): number {
  const observed = replica.size === undefined ? 0 : bytesOf(replica.size, `Volume ${objectKey(volume)} status.replicas[${replica.index}].size`);
  return Math.max(volumeSizeBytes(volume), observed);
}

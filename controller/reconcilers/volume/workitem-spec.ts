/** The WorkItem that keeps one replica of a Volume on a node. Pure. */
import { AGENT_FINALIZER, NODE_LABEL, OWNER_KIND_LABEL, OWNER_NAME_LABEL, replicaWorkItemName } from '../../../api/names.js';
import { API_VERSION } from '../../../api/types.js';
import type { Volume } from '../../../api/volume.js';
import type { WorkItem, WorkItemSpec } from '../../../api/workitem.js';
import { SPEC_HASH_ANNOTATION, specHash } from '../instance/workitem-spec.js';

/** The complete WorkItem for replica `index` of volume on nodeName, sized `size`. */
export function desiredReplicaWorkItem(volume: Volume, index: number, nodeName: string, size: string): WorkItem {
  const name = volume.metadata.name!;
  const s = volume.spec;
  const spec: WorkItemSpec = {
    nodeName,
    type: 'VolumeReplica',
    owner: { kind: 'Volume', name, uid: volume.metadata.uid },
    volumeReplica: {
      volumeName: name,
      index,
      size,
      driver: s.driver ?? 'file',
      allocation: s.allocation ?? 'sparse',
      reclaimPolicy: s.reclaimPolicy ?? 'Delete',
      ...(s.options ? { options: s.options } : {}),
    },
  };
  return {
    apiVersion: API_VERSION,
    kind: 'WorkItem',
    metadata: {
      name: replicaWorkItemName(name, index, nodeName),
      namespace: volume.metadata.namespace,
      labels: { [OWNER_KIND_LABEL]: 'Volume', [OWNER_NAME_LABEL]: name, [NODE_LABEL]: nodeName },
      annotations: { [SPEC_HASH_ANNOTATION]: specHash(spec) },
      finalizers: [AGENT_FINALIZER],
      ownerReferences: [{ apiVersion: API_VERSION, kind: 'Volume', name, uid: volume.metadata.uid!, controller: true, blockOwnerDeletion: true }],
    },
    spec,
  };
}

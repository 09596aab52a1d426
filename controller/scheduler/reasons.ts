/**
 * The short texts that say why a node cannot take an object, in the
 * vocabulary of Kubernetes' "0/3 nodes are available" messages. One place,
 * so the scheduler, its messages and its tests use the same words.
 */

/** Why a node is out, as counted in unschedulable messages. */
export const REASON = {
  beingDeleted: 'being deleted',
  unschedulable: 'unschedulable',
  unreachable: 'unreachable',
  notReady: 'not ready',
  excluded: 'excluded',
  nodeSelector: "didn't match node selector",
  notPinned: 'not the pinned node',
  antiAffinity: (group: string) => `anti-affinity group ${group}`,
  noReplica: (volumeName: string) => `no replica of volume ${volumeName}`,
  volumeStopped: (volumeName: string) => `volume ${volumeName} is Stopped`,
  noGluster: 'gluster unavailable',
  maxInstancesPerNode: 'max instances per node',
  maxInstancesInCluster: 'max instances in cluster',
  insufficientCpu: 'insufficient cpu',
  insufficientMemory: 'insufficient memory',
  insufficientStorage: 'insufficient storage',
  holdsReplica: 'already holds a replica',
} as const;

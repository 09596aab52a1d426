/** The WorkItem that keeps one replica of a Volume on a node. Pure. */
import { AGENT_FINALIZER, brickDataPath, NODE_LABEL, OWNER_KIND_LABEL, OWNER_NAME_LABEL, replicaWorkItemName } from '../../../api/names.js';
import { API_VERSION } from '../../../api/types.js';
import { isGluster, isStopped, volumeDriver, type Volume } from '../../../api/volume.js';
import type { WorkItem, WorkItemBrickSpec, WorkItemSpec } from '../../../api/workitem.js';
import { SPEC_HASH_ANNOTATION, specHash } from '../instance/workitem-spec.js';
import { glusterVolumeName, oneBrickVolfile } from './volfiles.js';

/** Where a gluster replica's brick goes: its node's data dir (Node status.dataDir) and the port it listens on. */
export interface BrickHome {
  dataDir: string;
  port: number;
}

/** The volfiles that name every brick, once each can be named (api/volume.ts graphBricks): the self-heal daemon's and the FUSE client's. */
export interface LayoutVolfiles {
  shd: string;
  client: string;
  /** Per replica index, when its brick joined the volume (as its agent reported), if it has. */
  joinedAt: ReadonlyArray<string | undefined>;
  /** The controller's request that every self-heal daemon start again (heal-stall.ts). */
  recrawl?: string;
  /** Raised replicas whose copy the gate let go this time (copy-gate.ts): their WorkItems are marked so. */
  copiesReleased?: ReadonlySet<number>;
  /** Why the copy onto the raised replicas still waits (copy-gate.ts). */
  copyHeld?: string;
}

/**
 * The other bricks' joins, for replica `index`: a self-heal daemon crawls a brick's index when it starts,
 * and otherwise only every heal-timeout, so one that started before a new brick's join marked the root
 * as owed to it would copy nothing until then. A new join changes this, and the agent restarts it.
 */
function peerJoins(layout: LayoutVolfiles, index: number): string | undefined {
  const joins = layout.joinedAt.flatMap((at, i) => (i !== index && at ? [`${i}@${at}`] : []));
  return joins.length > 0 ? joins.join(' ') : undefined;
}

/** The brick of replica `index` on a node, with its volfile. */
function brickSpec(volume: Volume, index: number, home: BrickHome, layout?: LayoutVolfiles): WorkItemBrickSpec {
  const ns = volume.metadata.namespace!;
  const name = volume.metadata.name!;
  const brick = { host: '', port: home.port, path: brickDataPath(home.dataDir, ns, name, index) };
  const gluster = glusterVolumeName(ns, name);
  const volfile = oneBrickVolfile(gluster, volume.metadata.uid!, brick, isArbiter(volume, index));
  const joins = layout && peerJoins(layout, index);
  return {
    volume: gluster,
    volumeId: volume.metadata.uid!,
    path: brick.path,
    port: home.port,
    volfile,
    ...(layout ? { shdVolfile: layout.shd, clientVolfile: layout.client } : {}),
    ...(joins ? { peerJoins: joins } : {}),
    ...(layout?.recrawl ? { recrawl: layout.recrawl } : {}),
    ...(isStopped(volume) ? { stopped: true } : {}),
  };
}

/**
 * On the WorkItem of a replica that raised the volume's count (an index no brick held while the volume was
 * in service): `held` while the other bricks may not copy onto it yet, `released` after (copy-gate.ts).
 */
export const RAISED_REPLICA_ANNOTATION = 'cairn.dev/raised-replica';

/** Whether replica `index` is the volume's arbiter brick: the third of replica 3 with spec.arbiter. */
export function isArbiter(volume: Volume, index: number): boolean {
  return volume.spec.arbiter === true && index === 2;
}

/** The complete WorkItem for replica `index` of volume on nodeName, sized `size` (and for driver gluster, its brick at `home`, with the volfiles naming every brick once each can be named). */
export function desiredReplicaWorkItem(volume: Volume, index: number, nodeName: string, size: string, home?: BrickHome, layout?: LayoutVolfiles): WorkItem {
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
      driver: volumeDriver(volume),
      allocation: s.allocation ?? 'sparse',
      reclaimPolicy: s.reclaimPolicy ?? 'Delete',
      ...(s.options ? { options: s.options } : {}),
      ...(isGluster(volume) && home ? { brick: brickSpec(volume, index, home, layout) } : {}),
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

/**
 * What a node needs to FUSE-mount a gluster Volume: the client volfile,
 * generated from where the Volume's status says its bricks listen, with
 * the spec's arbiter and options as in the bricks' own graphs. Pure.
 * A brick lost with its node stays in the graph at its last address, and
 * its replacement at 127.0.0.1 port 1 until it has joined: AFR counts it
 * down, and the client volume names (<volume>-client-<index>) stay those
 * the pending-heal xattrs use. Which bricks the graph names, and where:
 * api/volume.ts graphBricks and mountBrick.
 */
import type { Volume } from '../../../api/volume.js';
import type { WorkItemGlusterMount } from '../../../api/workitem.js';
import { glusterBricks } from '../../scheduler/placements.js';
import { clientVolfile, glusterVolumeName, specLayout } from './volfiles.js';

/** The mount of a gluster Volume, or undefined while a brick its graph names has no address yet (or the driver is file). */
export function glusterMount(volume: Volume): WorkItemGlusterMount | undefined {
  const bricks = glusterBricks(volume);
  if (!bricks) return undefined;
  const volumeName = glusterVolumeName(volume.metadata.namespace!, volume.metadata.name!);
  return { volume: volumeName, volfile: clientVolfile(specLayout(volume.spec, { volume: volumeName, volumeId: volume.metadata.uid!, bricks })), size: volume.status?.capacity ?? volume.spec.size };
}

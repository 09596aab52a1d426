/**
 * When the other bricks may copy the data onto a raised replica's brick, pure. The brick joins at once (the
 * agent's joinOnce marks the root as owed to it, so no reader takes it, empty, for a good copy), but the copy
 * waits. Only writes through a graph that names the brick mark it as owed; a FUSE mount still on a graph
 * without it (its agent slow, or cut off from the apiserver while its instance runs on) writes past it, and
 * a file such a mount changed after its copy would be stale on the new brick with nothing to blame it.
 * glusterd's add-brick does not wait for its clients.
 *
 * So the self-heal daemons are given a graph without the raised bricks (plan.ts) until every instance
 * WorkItem that mounts the volume has applied the client volfile naming them (its status is for its
 * current generation), and then MOUNT_SWITCH_MS more: the agent's volfile server tells the mount within a
 * second, and a mount switches to a new graph once that graph is up, which AFR holds back up to 10 s while
 * a brick does not answer. The copy then starts from what every mount wrote. Instances on lost nodes are
 * left out: their agents stopped them when their lease ran out. A replacement is not held: a mount on the
 * graph before it names its index already (at the lost brick's address), and AFR marks what it writes as
 * owed to that index. Until a replacement has joined, though, the mounts name it down (api/volume.ts
 * mountBrick), so their graph is not this one: a copy onto raised bricks waits for that join as well
 * (plan.ts says so).
 */

import { createHash } from 'node:crypto';
import type { NodeView } from '../../node-health.js';

/** How long after every mount's WorkItem applied the new client volfile its mount is taken to run it. */
export const MOUNT_SWITCH_MS = 13_000;

/** An instance WorkItem that mounts the volume, as the gate sees it. */
export interface VolumeMount {
  nodeName: string;
  /** The client volfile its spec gives the mount. */
  volfile: string;
  /** Its agent wrote status for its current generation (whatever the outcome): its volfile server serves that volfile. */
  applied: boolean;
}

/** What the gate looks at. */
export interface CopyGateInput {
  mounts: readonly VolumeMount[];
  /** The client volfile naming every brick, the raised ones included. */
  clientVolfile: string;
  /** How a node stands (controller/node-health.ts). */
  node(nodeName: string): Pick<NodeView, 'lost' | 'unreachable' | 'lostInMs'>;
  /** When this controller first saw `value` for the volume's mounts (firstSeen). */
  unchangedSince(value: string): number;
  now: number;
}

/** Held, with why and when to look again (undefined: a mount's report wakes the Volume), or open. */
export type CopyGate = { held: false } | { held: true; message: string; inMs?: number };

/** Whether the other bricks may copy the data onto the volume's raised bricks now. */
export function copyGate(g: CopyGateInput): CopyGate {
  const mounts = g.mounts.filter((m) => !g.node(m.nodeName).lost);
  if (mounts.length === 0) return { held: false };
  const lagging = mounts.filter((m) => !m.applied || m.volfile !== g.clientVolfile);
  const behind = [...new Set(lagging.map((m) => m.nodeName))].sort();
  const since = g.unchangedSince(behind.length > 0 ? 'behind' : `applied:${createHash('sha256').update(g.clientVolfile).digest('hex').slice(0, 16)}`);
  if (behind.length > 0) {
    // A report wakes the Volume; a node that stops answering does not when it turns lost (only time passes): look then.
    const losing = lagging.map((m) => g.node(m.nodeName)).filter((n) => n.unreachable && !n.lost);
    const inMs = losing.length > 0 ? Math.min(...losing.map((n) => n.lostInMs)) + 100 : undefined;
    return { held: true, message: `waiting for the instances' mounts on node${behind.length > 1 ? 's' : ''} ${behind.join(', ')} to take the graph naming the raised bricks`, ...(inMs !== undefined ? { inMs } : {}) };
  }
  const inMs = since + MOUNT_SWITCH_MS - g.now;
  if (inMs <= 0) return { held: false };
  return { held: true, message: `giving the instances' mounts up to ${MOUNT_SWITCH_MS / 1000} s to switch to the graph naming the raised bricks`, inMs };
}

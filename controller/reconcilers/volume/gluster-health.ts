/**
 * How a gluster Volume fares, from its bricks as the agents report them:
 * quorum (AFR's quorum-type auto: more than half of the bricks up, or
 * exactly half including the first), bricks offline, entries waiting to be
 * healed. Pure; the worst finding becomes the Degraded condition's reason.
 */

/** One brick as the Volume reconciler sees it. */
export interface BrickHealth {
  index: number;
  nodeName?: string;
  /** Its glusterfsd runs on a reachable node. */
  up: boolean;
  /** Entries its index lists as needing heal onto another brick. */
  pendingHeals: number;
  /** Why it is not up, when known. */
  message?: string;
}

/** Why a gluster Volume is degraded, worst first. */
export type Degradation = { reason: 'QuorumLost' | 'BrickOffline' | 'HealPending'; message: string };

/** Whether writes are allowed with these bricks up (AFR quorum-type auto). */
export function hasQuorum(bricks: readonly BrickHealth[]): boolean {
  const up = bricks.filter((b) => b.up).length;
  const n = bricks.length;
  return 2 * up > n || (2 * up === n && bricks[0]?.up === true);
}

function named(b: BrickHealth): string {
  return `brick ${b.index}${b.nodeName ? ` on node ${b.nodeName}` : ''}`;
}

/** What is wrong with the Volume's bricks, or undefined when every brick runs and nothing waits to be healed. */
export function glusterDegradation(bricks: readonly BrickHealth[]): Degradation | undefined {
  const down = bricks.filter((b) => !b.up);
  if (!hasQuorum(bricks)) {
    const up = bricks.length - down.length;
    return {
      reason: 'QuorumLost',
      message: `only ${up} of ${bricks.length} bricks run, too few for quorum: reads and writes fail ("Transport endpoint is not connected") until more return. Bring back ${down.map(named).join(', ')}: restart the node or its agent; a brick's data is kept and healed when it returns`,
    };
  }
  if (down.length > 0) {
    return {
      reason: 'BrickOffline',
      message: `${down.map((b) => `${named(b)} is offline${b.message ? ` (${b.message})` : ''}`).join('; ')}; the others serve reads and writes, and what changes meanwhile is healed onto it when it returns`,
    };
  }
  const pending = bricks.reduce((n, b) => n + b.pendingHeals, 0);
  if (pending > 0) {
    const by = bricks.filter((b) => b.pendingHeals > 0).map((b) => `${b.pendingHeals} on brick ${b.index}`).join(', ');
    return { reason: 'HealPending', message: `${pending} entries wait to be healed (${by}); the self-heal daemons copy them, and the count falls to 0 when done` };
  }
  return undefined;
}

/**
 * How a gluster Volume fares, from its bricks as the agents report them:
 * quorum (by default AFR's quorum-type auto: more than half of the bricks
 * up, or exactly half including the first), files in split-brain, bricks
 * offline, entries waiting to be healed. Pure; the worst finding becomes the Degraded condition's reason.
 */
import type { Volume } from '../../../api/volume.js';

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
  /** Files it holds in split-brain with another brick. */
  splitBrain?: number;
}

/** Why a gluster Volume is degraded, worst first. */
export type Degradation = { reason: 'QuorumLost' | 'SplitBrain' | 'BrickOffline' | 'HealPending'; message: string };

/** The quorum rule of the Volume's spec.options: cluster.quorum-type (default auto) and cluster.quorum-count. */
export interface QuorumRule {
  type: string;
  count?: number;
}

/** The quorum rule a Volume's spec.options set. */
export function quorumRule(volume: Volume): QuorumRule {
  const o = volume.spec.options ?? {};
  return { type: o['cluster.quorum-type'] ?? 'auto', ...(o['cluster.quorum-count'] ? { count: Number(o['cluster.quorum-count']) } : {}) };
}

/** Whether writes are allowed with these bricks up, under AFR's quorum rule. */
export function hasQuorum(bricks: readonly BrickHealth[], rule: QuorumRule = { type: 'auto' }): boolean {
  const up = bricks.filter((b) => b.up).length;
  const n = bricks.length;
  if (rule.type === 'none') return up > 0;
  if (rule.type === 'fixed') return up >= (rule.count ?? 1);
  return 2 * up > n || (2 * up === n && bricks[0]?.up === true);
}

/** A file's id and the bricks (replica indexes) one brick blames for it. */
export interface OwedEntry {
  gfid: string;
  bricks: number[];
}

/**
 * Per brick, how many of its files are in split-brain: it blames another brick for a file that brick
 * blames it for, so neither copy is known good and AFR refuses to pick (reads give EIO).
 */
export function splitBrainCounts(owed: ReadonlyMap<number, readonly OwedEntry[]>): Map<number, number> {
  const blames = new Set<string>();
  for (const [index, entries] of owed) for (const e of entries) for (const j of e.bricks) blames.add(`${e.gfid}/${index}/${j}`);
  const counts = new Map<number, number>();
  for (const [index, entries] of owed) {
    const n = entries.filter((e) => e.bricks.some((j) => j !== index && blames.has(`${e.gfid}/${j}/${index}`))).length;
    if (n > 0) counts.set(index, n);
  }
  return counts;
}

function named(b: BrickHealth): string {
  return `brick ${b.index}${b.nodeName ? ` on node ${b.nodeName}` : ''}`;
}

/** What is wrong with the Volume's bricks, or undefined when every brick runs and nothing waits to be healed. */
export function glusterDegradation(bricks: readonly BrickHealth[], rule?: QuorumRule): Degradation | undefined {
  const down = bricks.filter((b) => !b.up);
  if (!hasQuorum(bricks, rule)) {
    const up = bricks.length - down.length;
    return {
      reason: 'QuorumLost',
      message: `only ${up} of ${bricks.length} bricks run, too few for quorum: reads and writes fail ("Transport endpoint is not connected") until more return. Bring back ${down.map(named).join(', ')}: restart the node or its agent; a brick's data is kept and healed when it returns`,
    };
  }
  const split = Math.max(0, ...bricks.map((b) => b.splitBrain ?? 0));
  if (split > 0) {
    const where = bricks.filter((b) => (b.splitBrain ?? 0) > 0).map(named).join(' and ');
    return {
      reason: 'SplitBrain',
      message: `${split} files are in split-brain between ${where}: each brick holds writes the other missed, so reads of them fail with EIO. Resolve each by keeping one copy (docs/volumes.md, "Split-brain"), or set the option cluster.favorite-child-policy (mtime, size, ctime or majority) to let GlusterFS choose`,
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

/**
 * The self-heal state of a gluster Volume, from its bricks: entries still
 * to copy onto a brick that was away, and files in split-brain (which
 * GlusterFS cannot settle by itself). Pure.
 */
import type { Volume } from '../../../api/volume';
import { findCondition } from './conditions';

export interface HealState {
  pendingHeals: number;
  splitBrain: number;
  /** The Degraded condition says a heal is running (reason HealPending). */
  healing: boolean;
  /** One line for the user. */
  text: string;
  tone: 'good' | 'busy' | 'bad';
}

/** Undefined for a volume without bricks (driver file). */
export function healState(v: Volume): HealState | undefined {
  const bricks = (v.status?.replicas ?? []).flatMap((r) => (r.brick ? [r.brick] : []));
  if (bricks.length === 0) return undefined;
  const pendingHeals = bricks.reduce((n, b) => n + (b.pendingHeals ?? 0), 0);
  const splitBrain = bricks.reduce((n, b) => n + (b.splitBrain ?? 0), 0);
  const degraded = findCondition(v, 'Degraded');
  const healing = degraded?.status === 'True' && degraded.reason === 'HealPending';
  if (splitBrain > 0) return { pendingHeals, splitBrain, healing, tone: 'bad', text: `${splitBrain} ${splitBrain === 1 ? 'file' : 'files'} in split-brain: choose the good copy (cluster.favorite-child-policy, docs/volumes.md)` };
  if (pendingHeals > 0 || healing) return { pendingHeals, splitBrain, healing, tone: 'busy', text: `Healing: ${pendingHeals} ${pendingHeals === 1 ? 'entry' : 'entries'} left` };
  return { pendingHeals, splitBrain, healing, tone: 'good', text: 'In sync: nothing to heal' };
}

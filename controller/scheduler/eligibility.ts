/**
 * Whether a node may receive anything new at all, and whether its labels
 * match a selector. Eligibility is checked before any other constraint so
 * that a cordoned or dead node is reported as such, not as "insufficient
 * memory". What already runs on an ineligible node is not this module's
 * concern: cordon and drain stop new placements only.
 */
import { isTrue } from '../../api/conditions.js';
import type { Node } from '../../api/node.js';
import { REASON } from './reasons.js';

/** Whether a node can take new placements, and if not the reason text. */
export type NodeEligibility = { eligible: true } | { eligible: false; reason: string };

/**
 * A node is eligible when it is not being deleted, not cordoned or draining
 * (spec or phase), and Ready both by phase and by its Ready condition.
 */
export function nodeEligibility(node: Node): NodeEligibility {
  const phase = node.status?.phase;
  if (node.metadata.deletionTimestamp) return { eligible: false, reason: REASON.beingDeleted };
  if (node.spec?.unschedulable || node.spec?.drain || phase === 'Draining' || phase === 'Drained') {
    return { eligible: false, reason: REASON.unschedulable };
  }
  if (phase === 'Unreachable') return { eligible: false, reason: REASON.unreachable };
  if (phase !== 'Ready' || !isTrue(node.status?.conditions, 'Ready')) return { eligible: false, reason: REASON.notReady };
  return { eligible: true };
}

/** Whether a node can take new placements. */
export function isSchedulable(node: Node): boolean {
  return nodeEligibility(node).eligible;
}

/** Whether a node's labels include every key/value of the selector (an absent or empty selector matches all). */
export function matchesNodeSelector(node: Node, selector: Readonly<Record<string, string>> | undefined): boolean {
  if (!selector) return true;
  const labels = node.metadata.labels ?? {};
  return Object.entries(selector).every(([key, value]) => Object.hasOwn(labels, key) && labels[key] === value);
}

/**
 * The "nothing fits" answer in the words of Kubernetes' scheduler:
 * `0/3 nodes are available: 2 insufficient memory, 1 unschedulable.` Each
 * node is counted once, under the first check it failed, so the counts add
 * up to the nodes that are not available and the message stays short on
 * large clusters. Hints that say how to fix the cause follow as sentences.
 */

/** The answer when no node (or too few nodes) can take an object. */
export interface Unschedulable {
  unschedulable: true;
  /** One line for a condition message or an Event. */
  message: string;
  /** Nodes counted per reason text, most frequent first. */
  reasons: Record<string, number>;
}

function byCountThenText([textA, countA]: [string, number], [textB, countB]: [string, number]): number {
  if (countA !== countB) return countB - countA;
  return textA < textB ? -1 : textA > textB ? 1 : 0;
}

/** Counts reason texts, ordered by count (descending) then text, the order the message lists them in. */
export function tallyReasons(reasons: Iterable<string>): Record<string, number> {
  const counts = new Map<string, number>();
  for (const r of reasons) counts.set(r, (counts.get(r) ?? 0) + 1);
  return Object.fromEntries([...counts].sort(byCountThenText));
}

/** `<available>/<total> nodes are available: <n> <reason>, ....` followed by the hints. */
export function unschedulableMessage(available: number, total: number, reasons: Record<string, number>, hints: readonly string[] = []): string {
  const parts = Object.entries(reasons)
    .sort(byCountThenText)
    .map(([text, count]) => `${count} ${text}`);
  const head = `${available}/${total} nodes are available${parts.length > 0 ? `: ${parts.join(', ')}` : ''}.`;
  return [head, ...hints].join(' ');
}

/** The message for a cluster without nodes, followed by the hints. */
export function noNodesMessage(clusterName: string, hints: readonly string[] = []): string {
  return [`0/0 nodes are available: no nodes registered in cluster ${clusterName}.`, ...hints].join(' ');
}

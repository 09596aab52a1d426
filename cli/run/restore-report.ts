/** The report `cairn restore --from-agents` prints (docs/restore.md), pure: what was restored per kind and from which node, the conflicts settled, and what was not recovered. */
import type { MergeResult } from '../../apiserver/restore/merge.js';
import type { WriteOutcome } from '../../apiserver/restore/write.js';
import { GET_PADDING, tabwrite } from '../client/tabwriter.js';

/** What the report says besides the merge: where it wrote, and the agents' dirs and their unreadable files. */
export interface ReportContext {
  target: string;
  sources: string[];
  problems: string[];
  outcome: WriteOutcome;
}

/** The report as text. */
export function restoreReport(merge: MergeResult, ctx: ReportContext): string {
  const { outcome } = ctx;
  const lines = [
    `Restored ${merge.objects.length} objects from ${ctx.sources.length} agents (${ctx.sources.join(', ')}) into ${ctx.target}` + (outcome.replaced ? ` (${outcome.replaced} overwritten, --force)` : '') + ':',
    tabwrite([['KIND', 'OBJECTS', 'FROM'], ...perKind(merge)], GET_PADDING).replace(/^/gm, '  '),
    '',
    `Revisions: the freshest copies were at resourceVersion ${merge.highestRevision} or below; the store now starts above revision ${outcome.compactedAt}, with history compacted there, so every client holding an older resourceVersion gets 410 Gone and lists again.`,
  ];
  if (merge.conflicts.length > 0) {
    lines.push('', `Conflicts settled (${merge.conflicts.length}):`);
    for (const c of merge.conflicts) lines.push(`  ${c.kind} ${c.name}: ${c.chosen.source} at ${c.chosen.resourceVersion} over ${c.others.map((o) => `${o.source} at ${o.resourceVersion}`).join(', ')}; ${c.reason}`);
  }
  lines.push('', `Not recovered (${merge.unrecovered.length}):`);
  for (const u of merge.unrecovered) lines.push(`  - ${u.what}: ${u.why}.`, `    Hint: ${u.hint}.`);
  if (ctx.problems.length > 0) {
    lines.push('', 'Unreadable files in the agents\' data dirs (skipped):');
    for (const p of ctx.problems) lines.push(`  ${p}`);
  }
  return lines.join('\n') + '\n';
}

/** One row per kind: how many objects, and how many came from each node. */
function perKind(merge: MergeResult): string[][] {
  const kinds = new Map<string, Map<string, number>>();
  for (const o of merge.objects) {
    const sources = kinds.get(o.def.kind) ?? kinds.set(o.def.kind, new Map()).get(o.def.kind)!;
    sources.set(o.source, (sources.get(o.source) ?? 0) + 1);
  }
  return [...kinds].sort(([a], [b]) => a.localeCompare(b)).map(([kind, sources]) => {
    const total = [...sources.values()].reduce((n, v) => n + v, 0);
    return [kind, String(total), [...sources].sort(([a], [b]) => a.localeCompare(b)).map(([s, n]) => `${s} ${n}`).join(', ')];
  });
}

/**
 * The failure report of `cairn failures`: as text, one block per reason
 * with every failing object, its node, the full message and the hint; as a
 * document for -o json|yaml. Pure.
 */
import type { Failure, FailureGroup } from './failures.js';

/** The document -o json|yaml prints. */
export interface FailureReport {
  kind: 'FailureReport';
  /** The namespace looked at; absent with -A. */
  namespace?: string;
  count: number;
  groups: FailureGroup[];
}

/** The report document. */
export function failureReport(groups: FailureGroup[], namespace: string | undefined): FailureReport {
  const count = groups.reduce((n, g) => n + g.failures.length, 0);
  return { kind: 'FailureReport', ...(namespace !== undefined ? { namespace } : {}), count, groups };
}

function where(namespace: string | undefined): string {
  return namespace === undefined ? 'any namespace' : `namespace ${namespace}`;
}

function title(f: Failure): string {
  const parts = [`${f.kind.toLowerCase()} ${f.namespace ? `${f.namespace}/` : ''}${f.name}`];
  if (f.node && f.kind !== 'Node') parts.push(`on node ${f.node}`);
  if (f.owner) parts.push(`(${f.owner}${f.attempts ? `, ${f.attempts} attempt${f.attempts === 1 ? '' : 's'}` : ''})`);
  return parts.join(' ');
}

function details(f: Failure): string[] {
  const rows: [string, string | undefined][] = [
    ['condition', f.conditions?.join(', ')],
    ['since', f.since],
    ['message', f.message],
    ['hint', f.hint],
  ];
  return rows.filter(([, v]) => v).map(([k, v]) => `    ${`${k}:`.padEnd(11)}${v}`);
}

/** The report as text lines; `No failures in namespace demo.` when empty. */
export function renderReport(report: FailureReport): string[] {
  if (report.count === 0) return [`No failures in ${where(report.namespace)}.`];
  const lines = [`${report.count} failure${report.count === 1 ? '' : 's'} in ${where(report.namespace)}`];
  for (const g of report.groups) {
    lines.push('', `${g.reason} (${g.failures.length})`);
    for (const f of g.failures) lines.push(`  ${title(f)}`, ...details(f));
  }
  return lines;
}

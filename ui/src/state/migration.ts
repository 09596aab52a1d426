/**
 * Migration as the dashboard shows it: the nodes an instance may be sent
 * to and the progress or outcome of the last migration, read from
 * status.migration as `cairn migrate` reads it (cli/run/migrate.ts). Pure.
 */
import type { Instance, InstanceMigrationStatus } from '../../../api/instance';
import type { Node } from '../../../api/node';
import { formatBytes } from './format';
import { splitHint } from '../../../cli/status/failures';
import { nodeCapacity } from './summaries';

const FINISHED = new Set(['Completed', 'Failed']);

/** Nodes of the instance's cluster that are Ready and schedulable, other than the one it is on. */
export function migrationTargets(instance: Instance, nodes: Iterable<Node>): string[] {
  const targets: string[] = [];
  for (const n of nodes) {
    if (n.metadata.namespace !== instance.metadata.namespace || !n.metadata.name) continue;
    if (n.metadata.name === instance.status?.nodeName) continue;
    if (n.status?.phase !== 'Ready' || n.spec?.unschedulable || n.spec?.drain) continue;
    targets.push(n.metadata.name);
  }
  return targets.sort();
}

/** A target as the node select shows it, with what is allocated there, e.g. `node-b (cpu 1/4, memory 64 MiB/8 GiB)`. */
export function targetLabel(name: string, node: Node | undefined): string {
  if (!node) return name;
  const { cpu, memory } = nodeCapacity(node, undefined);
  const of = (used: string, total: string | undefined) => `${used}/${total ?? '?'}`;
  return `${name} (cpu ${of(String(cpu.used), cpu.total?.toString())}, memory ${of(formatBytes(memory.used), memory.total === undefined ? undefined : formatBytes(memory.total))})`;
}

/** The last migration's report, if any. */
export function migrationReport(instance: Instance): InstanceMigrationStatus | undefined {
  return instance.status?.migration;
}

/** Whether a migration is under way (reported and not finished). */
export function migrationInFlight(instance: Instance): boolean {
  const m = migrationReport(instance);
  return !!m?.phase && !FINISHED.has(m.phase);
}

/**
 * Whether status.migration reports a finished migration to `node`: a new
 * request for that node is only carried out once spec.migrateTo was
 * cleared and the controller withdrew the report.
 */
export function lastMigrationFinished(instance: Instance, node: string): boolean {
  const m = migrationReport(instance);
  return m?.targetNode === node && FINISHED.has(m.phase ?? '');
}

export interface MigrationView {
  phase: string;
  /** Memory copied so far, 0–100, when the transfer reports sizes. */
  percent?: number;
  outcome?: 'succeeded' | 'failed';
  /** One line for the user. */
  text: string;
  /** How to fix a failed migration, when the controller said. */
  hint?: string;
}

/** The last migration in a form to show, or undefined when there was none. */
export function migrationView(instance: Instance): MigrationView | undefined {
  const m = migrationReport(instance);
  if (!m?.phase) return undefined;
  const target = m.targetNode ?? 'another node';
  const percent = m.bytesTotal ? Math.min(100, Math.round(((m.bytesTransferred ?? 0) / m.bytesTotal) * 100)) : undefined;
  const mode = m.mode ? ` (${m.mode.toLowerCase()})` : '';
  if (m.phase === 'Completed') {
    const timings = [m.downtimeMs === undefined ? '' : `downtime ${m.downtimeMs} ms`, m.totalTimeMs === undefined ? '' : `total ${m.totalTimeMs} ms`].filter(Boolean);
    return { phase: m.phase, percent: 100, outcome: 'succeeded', text: `Migrated to ${target}${mode}${timings.length ? `: ${timings.join(', ')}` : ''}.` };
  }
  if (m.phase === 'Failed') {
    const [message, hint] = splitHint(m.message ?? 'no message');
    return { phase: m.phase, percent, outcome: 'failed', text: `Migration to ${target} failed (${m.reason ?? 'unknown reason'}): ${message}`, hint };
  }
  return { phase: m.phase, percent, text: `Moving from ${m.sourceNode ?? 'its node'} to ${target}${mode}: ${m.phase}` };
}

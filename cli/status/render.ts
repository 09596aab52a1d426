/**
 * The text of `status`: a summary block (header, nodes with allocation
 * bars, instances and volumes by phase, the convergence bar, the failing
 * items) and the one-line change log of the plain-text watch. Plain text
 * only — the terminal control sequences of the in-place redraw live in the
 * watch loop, never here. Pure.
 */
import type { Failure } from './failures.js';
import type { StateChange, StatusSummary, Usage } from './model.js';
import type { ConnectionLost } from './snapshot.js';

/** Where and when the summary was taken, and how to print names. */
export interface RenderContext {
  server: string;
  now: Date;
  /** -A: names carry their namespace. */
  allNamespaces: boolean;
  /** The namespace asked for (when not -A), for the header of a namespace without a Cluster. */
  namespace?: string;
}

const BAR_WIDTH = 10;
const SHORT_MESSAGE = 100;

/** `[####------]`: `used` of `total` in `width` cells; never full before done, never empty once started. */
export function bar(used: number, total: number | undefined, width = BAR_WIDTH): string {
  if (!total || total <= 0) return `[${'-'.repeat(width)}]`;
  let fill = Math.round((Math.min(used, total) / total) * width);
  if (used > 0 && fill === 0) fill = 1;
  if (used < total && fill === width) fill = width - 1;
  return `[${'#'.repeat(fill)}${'-'.repeat(width - fill)}]`;
}

function usage(label: string, u: Usage): string {
  return `${label} ${bar(u.used, u.total)} ${u.usedText}/${u.totalText ?? '?'}`;
}

/** `HH:MM:SS` in local time. */
export function clock(d: Date): string {
  return [d.getHours(), d.getMinutes(), d.getSeconds()].map((n) => String(n).padStart(2, '0')).join(':');
}

function shorten(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function qualified(namespace: string | undefined, name: string): string {
  return namespace ? `${namespace}/${name}` : name;
}

function byPhase(counts: Record<string, number>): string {
  return Object.entries(counts)
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([phase, n]) => `${phase} ${n}`)
    .join('  ');
}

function header(s: StatusSummary, r: RenderContext): string {
  const clusters = s.clusters.map((c) => `${c.name} (${c.phase})`);
  if (clusters.length === 0) clusters.push(r.namespace ? `${r.namespace} (no Cluster object)` : '(none)');
  const word = clusters.length === 1 ? 'Cluster' : 'Clusters';
  return `${word} ${clusters.join(', ')}   server ${r.server}   ${r.now.toISOString().replace(/\.\d+Z$/, 'Z')}`;
}

function nodeLines(s: StatusSummary, r: RenderContext): string[] {
  if (s.nodes.length === 0) return ['NODES 0   (no agent has registered: start one with cairn agent)'];
  const names = s.nodes.map((n) => (r.allNamespaces ? qualified(n.namespace, n.name) : n.name));
  const phases = s.nodes.map((n) => (n.cordoned ? `${n.phase},SchedulingDisabled` : n.phase));
  const nameWidth = Math.max(...names.map((n) => n.length));
  const phaseWidth = Math.max(...phases.map((p) => p.length));
  const ready = s.nodes.filter((n) => n.phase === 'Ready').length;
  return [
    `NODES ${s.nodes.length} (${ready} Ready)`,
    ...s.nodes.map((n, i) => `  ${names[i]!.padEnd(nameWidth)}  ${phases[i]!.padEnd(phaseWidth)}  ${usage('cpu', n.cpu)}  ${usage('memory', n.memory)}  instances ${n.instances}`),
  ];
}

/** A failing item in one line: `instance demo/big  Unschedulable: 0/2 nodes are available: ...`. */
export function failureLine(f: Failure): string {
  const node = f.node && f.kind !== 'Node' ? ` on ${f.node}` : '';
  return `${f.kind.toLowerCase()} ${qualified(f.namespace, f.name)}${node}  ${f.reason}: ${shorten(f.message, SHORT_MESSAGE)}`;
}

/** The summary block, one string per line. */
export function renderSummary(s: StatusSummary, r: RenderContext): string[] {
  const { converged, total } = s.convergence;
  const lines = [
    header(s, r),
    '',
    ...nodeLines(s, r),
    '',
    `INSTANCES ${s.instances.total}${s.instances.total ? `   ${byPhase(s.instances.byPhase)}` : ''}`,
    `VOLUMES ${s.volumes.total}${s.volumes.total ? `   ${byPhase(s.volumes.byPhase)}` : ''}`,
    '',
    `converged ${bar(converged, total)} ${converged}/${total}`,
  ];
  if (s.failures.length === 0) return lines;
  return [...lines, '', `FAILING ${s.failures.length}`, ...s.failures.map((f) => `  ${failureLine(f)}`), '  (cairn failures shows every detail and how to fix it)'];
}

/** `12:00:01 instance demo/web Pending → Running` (created / deleted for new and gone objects). */
export function renderChange(c: StateChange, now: Date): string {
  const what = `${clock(now)} ${c.kind} ${qualified(c.namespace, c.name)}`;
  if (c.from === undefined) return `${what} created: ${c.to}`;
  if (c.to === undefined) return `${what} deleted`;
  return `${what} ${c.from} → ${c.to}`;
}

/** `12:00:03 converged [########--] 8/10`: the line logged when the count moves. */
export function renderProgress(s: StatusSummary, now: Date): string {
  const { converged, total } = s.convergence;
  return `${clock(now)} converged ${bar(converged, total)} ${converged}/${total}${s.failures.length ? `, ${s.failures.length} failing` : ''}`;
}

/** `connection lost since 12:00:01 (socket hang up), retrying`: the header of a terminal view while the server is away. */
export function renderConnectionLost(lost: ConnectionLost): string {
  return `connection lost since ${clock(lost.since)} (${shorten(lost.error, SHORT_MESSAGE)}), retrying`;
}

/** The line the plain view logs when the connection is lost (`lost`) or back (undefined). */
export function renderConnectionChange(lost: ConnectionLost | undefined, now: Date): string {
  return lost ? `${clock(now)} ${renderConnectionLost(lost)}` : `${clock(now)} connection back`;
}

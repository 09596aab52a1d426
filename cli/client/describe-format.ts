/**
 * The text of `describe`, as kubectl lays it out: the object's identity
 * (name, namespace, labels, annotations, generation, age, finalizers,
 * owner), a WorkItem's last error with its hint up front, Spec and Status as
 * indented fields, the conditions as a table, and the object's Events with
 * kubectl's `5m (x3 over 10m)` ages. Ages are relative to `now`. Pure.
 */
import type { Condition, ObjectMeta } from '../../api/types.js';
// apimachinery's HumanDuration, as the server renders Table ages: a pure function, no server state.
import { humanDuration } from '../../api/human-duration.js';
import { fieldLines, labelled, scalarText, titleCase, type Line } from './describe-fields.js';
import { DESCRIBE_PADDING, tabwrite } from './tabwriter.js';

/** An object to describe. */
export interface DescribedObject {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec?: Record<string, unknown>;
  status?: Record<string, unknown>;
}

/** The parts of a core/v1 Event that describe shows. */
export interface EventRecord {
  metadata?: { creationTimestamp?: string };
  involvedObject?: { kind?: string; uid?: string };
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  firstTimestamp?: string;
  lastTimestamp?: string;
  eventTime?: string;
  series?: { count?: number; lastObservedTime?: string };
  source?: { component?: string };
  reportingComponent?: string;
}

const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
const ERROR_FIRST = ['reason', 'message', 'hint'];

/** The whole description, ending in a newline; `events` undefined when they could not be read. */
export function describeObject(obj: DescribedObject, events: readonly EventRecord[] | undefined, now: number): string {
  const status = obj.status ?? {};
  const { conditions, lastError, ...otherStatus } = status;
  const lines: Line[] = [
    ...identityLines(obj, now),
    ...(isRecord(lastError) ? lastErrorLines(lastError) : []),
    ...section('Spec', obj.spec),
    ...section('Status', otherStatus),
    ...conditionLines(Array.isArray(conditions) ? (conditions as Condition[]) : [], now),
    ...eventLines(events ?? [], now),
  ];
  return `${tabwrite(lines, DESCRIBE_PADDING)}\n`;
}

/** `3m` since an RFC 3339 time, `<unknown>` without one. */
export function ageSince(time: string | undefined, now: number): string {
  const t = time ? Date.parse(time) : NaN;
  return Number.isNaN(t) ? '<unknown>' : humanDuration(now - t);
}

/** An Event's Age cell, as kubectl: `5m`, or `2m (x3 over 10m)` for a repeated one. */
export function eventAge(e: EventRecord, now: number): string {
  const first = ageSince(e.eventTime ?? e.firstTimestamp ?? e.metadata?.creationTimestamp, now);
  if (e.series?.count) return `${ageSince(e.series.lastObservedTime, now)} (x${e.series.count} over ${first})`;
  if ((e.count ?? 1) > 1) return `${ageSince(e.lastTimestamp, now)} (x${e.count} over ${first})`;
  return first;
}

function identityLines(obj: DescribedObject, now: number): Line[] {
  const m = obj.metadata;
  const owner = m.ownerReferences?.find((o) => o.controller) ?? m.ownerReferences?.[0];
  return [
    ['Name:', m.name ?? ''],
    ...(m.namespace ? [['Namespace:', m.namespace]] : []),
    ...listed('Labels:', sortedEntries(m.labels).map(([k, v]) => `${k}=${v}`)),
    ...listed('Annotations:', sortedEntries(m.annotations).flatMap(([k, v]) => (k === LAST_APPLIED ? [] : [`${k}: ${v}`]))),
    ['API Version:', obj.apiVersion ?? ''],
    ['Kind:', obj.kind ?? ''],
    ...(m.generation !== undefined ? [['Generation:', String(m.generation)]] : []),
    ['Created:', m.creationTimestamp ? `${m.creationTimestamp} (${ageSince(m.creationTimestamp, now)} ago)` : '<unknown>'],
    ...(m.deletionTimestamp ? [['Deleting Since:', `${m.deletionTimestamp} (${ageSince(m.deletionTimestamp, now)} ago)`]] : []),
    ...(m.finalizers?.length ? [['Finalizers:', m.finalizers.join(', ')]] : []),
    ...(owner ? [[owner.controller ? 'Controlled By:' : 'Owned By:', `${owner.kind}/${owner.name}`]] : []),
  ];
}

// The first entry beside the label, the others under it; `<none>` for none.
function listed(label: string, entries: string[]): Line[] {
  if (entries.length === 0) return [[label, '<none>']];
  return entries.flatMap((e, i) => labelled(i === 0 ? label : '', e));
}

function sortedEntries(map: Record<string, string> | undefined): [string, string][] {
  return Object.entries(map ?? {}).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
}

function section(title: string, fields: Record<string, unknown> | undefined): Line[] {
  if (!fields || Object.keys(fields).length === 0) return [];
  return [[`${title}:`], ...fieldLines(fields, '  ')];
}

// A WorkItem's lastError, reason, message and hint first: what failed and how to fix it.
function lastErrorLines(err: Record<string, unknown>): Line[] {
  const keys = [...ERROR_FIRST.filter((k) => k in err), ...Object.keys(err).filter((k) => !ERROR_FIRST.includes(k)).sort()];
  return [['Last Error:'], ...keys.flatMap((k) => labelled(`  ${titleCase(k)}:`, scalarText(err[k])))];
}

function conditionLines(conditions: readonly Condition[], now: number): Line[] {
  if (conditions.length === 0) return [['Conditions:', '<none>']];
  const rows = conditions.map((c) => [
    `  ${c.type}`,
    c.status,
    c.reason || '<none>',
    ageSince(c.lastTransitionTime, now),
    c.observedGeneration !== undefined ? String(c.observedGeneration) : '<none>',
    oneLine(c.message),
  ]);
  return [['Conditions:'], ['  Type', 'Status', 'Reason', 'Age', 'ObservedGeneration', 'Message'], ['  ----', '------', '------', '---', '------------------', '-------'], ...rows];
}

function eventLines(events: readonly EventRecord[], now: number): Line[] {
  if (events.length === 0) return [['Events:', '<none>']];
  const rows = [...events]
    .sort((a, b) => eventTime(a) - eventTime(b))
    .map((e) => [`  ${e.type ?? ''}`, e.reason ?? '', eventAge(e, now), e.source?.component || e.reportingComponent || '', oneLine(e.message)]);
  return [['Events:'], ['  Type', 'Reason', 'Age', 'From', 'Message'], ['  ----', '------', '----', '----', '-------'], ...rows];
}

function eventTime(e: EventRecord): number {
  return Date.parse(e.series?.lastObservedTime ?? e.lastTimestamp ?? e.eventTime ?? e.metadata?.creationTimestamp ?? '') || 0;
}

function oneLine(text: string | undefined): string {
  return (text ?? '').replace(/\s*\n\s*/g, ' ');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Core v1 Events as the detail pages show them. Pure. */
import type { KubeObject } from '../api/paths';

export interface KubeEvent extends KubeObject {
  involvedObject: { kind?: string; name?: string; namespace?: string };
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  source?: { component?: string; host?: string };
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  eventTime?: string | null;
}

/** When the event last happened, by the best field it carries. */
export function eventTime(e: KubeEvent): string | undefined {
  return e.lastTimestamp ?? e.eventTime ?? e.firstTimestamp ?? e.metadata.creationTimestamp;
}

/** The field selector for the events about one object. */
export function eventSelector(kind: string, name: string): string {
  return `involvedObject.kind=${kind},involvedObject.name=${name}`;
}

/** Newest first. */
export function sortEvents(events: Iterable<KubeEvent>): KubeEvent[] {
  return [...events].sort((a, b) => (eventTime(b) ?? '').localeCompare(eventTime(a) ?? ''));
}

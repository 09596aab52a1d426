/**
 * Pure helpers for metav1.Condition lists, as apimachinery's
 * meta.SetStatusCondition does them: one entry per type, and
 * lastTransitionTime moves only when status flips, so "Ready since 5m" stays
 * true across reconciles that rewrite reason or message. Nothing here mutates
 * its arguments.
 */
import type { Condition, ConditionStatus, Time } from './types.js';

/** A condition to set; lastTransitionTime is computed by setCondition. */
export type ConditionInput = Omit<Condition, 'lastTransitionTime'> & { lastTransitionTime?: Time };

/** RFC 3339 at second precision, the way metav1.Time serialises. */
export function formatTime(now: Date | Time | number): Time {
  const date = now instanceof Date ? now : new Date(now);
  return date.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/** Returns a copy of conditions with cond set; lastTransitionTime changes only when status flips. */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  cond: ConditionInput,
  now: Date | Time,
): Condition[] {
  const list = conditions ? [...conditions] : [];
  const index = list.findIndex((c) => c.type === cond.type);
  const previous = index >= 0 ? list[index] : undefined;
  const lastTransitionTime =
    previous && previous.status === cond.status
      ? previous.lastTransitionTime
      : (cond.lastTransitionTime ?? formatTime(now));
  const next: Condition = {
    type: cond.type,
    status: cond.status,
    ...(cond.observedGeneration !== undefined ? { observedGeneration: cond.observedGeneration } : {}),
    lastTransitionTime,
    reason: cond.reason,
    message: cond.message,
  };
  if (index >= 0) list[index] = next;
  else list.push(next);
  return list;
}

/** Returns a copy of conditions without the condition of the given type. */
export function removeCondition(conditions: readonly Condition[] | undefined, type: string): Condition[] {
  return (conditions ?? []).filter((c) => c.type !== type);
}

/** The condition of the given type, if present. */
export function getCondition(conditions: readonly Condition[] | undefined, type: string): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/** The status of the condition of the given type, Unknown when absent. */
export function conditionStatus(conditions: readonly Condition[] | undefined, type: string): ConditionStatus {
  return getCondition(conditions, type)?.status ?? 'Unknown';
}

/** Whether the condition of the given type is present with status True. */
export function isTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'True';
}

/** Whether the condition of the given type is present with status False. */
export function isFalse(conditions: readonly Condition[] | undefined, type: string): boolean {
  return getCondition(conditions, type)?.status === 'False';
}

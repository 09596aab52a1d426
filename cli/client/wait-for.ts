/**
 * The `--for` of `cairn wait`, as kubectl reads it: `condition=TYPE[=VALUE]`
 * (type and value compared case-insensitively, VALUE defaulting to True, and
 * a condition that reports an observedGeneration older than the object's
 * generation not yet counting), `delete`, or `jsonpath={PATH}[=VALUE]`
 * (without a value: the path selects something). Pure.
 */
import { InvalidArgumentError } from 'commander';
import { CliError } from './errors.js';
import { jsonPathText, jsonPathValues } from './jsonpath.js';

/** What `wait` waits for. */
export type WaitCondition = { kind: 'condition'; type: string; value: string } | { kind: 'delete' } | { kind: 'jsonpath'; path: string; value?: string };

/** The parts of an object a wait looks at. */
export interface WaitedObject {
  metadata: { generation?: number };
  status?: { conditions?: unknown };
}

const FORMS = 'use condition=Ready, condition=Ready=False, delete, or jsonpath={.status.phase}=Running';

/** Parses `--for` (a commander argument parser: a bad value is an InvalidArgumentError naming the forms). */
export function parseWaitFor(text: string): WaitCondition {
  if (text === 'delete') return { kind: 'delete' };
  if (text.startsWith('condition=')) return parseCondition(text.slice('condition='.length));
  if (text.startsWith('jsonpath=')) return parseJsonPath(text.slice('jsonpath='.length));
  throw new InvalidArgumentError(`unrecognized condition: "${text}"; ${FORMS}`);
}

/** Whether `obj` (undefined: it does not exist) meets the condition. Never throws. */
export function conditionMet(cond: WaitCondition, obj: WaitedObject | undefined): boolean {
  if (cond.kind === 'delete') return obj === undefined;
  if (!obj) return false;
  if (cond.kind === 'condition') return hasCondition(obj, cond.type, cond.value);
  const values = safeValues(cond.path, obj);
  return values.length > 0 && (cond.value === undefined || values.every((v) => jsonPathText(v) === cond.value));
}

/** What `wait` prints after the object's name once the condition holds. */
export function metMessage(cond: WaitCondition): string {
  return cond.kind === 'delete' ? 'deleted' : 'condition met';
}

function parseCondition(rest: string): WaitCondition {
  const [type, value, ...extra] = rest.split('=');
  if (!type || extra.length > 0 || value === '') throw new InvalidArgumentError(`"condition=${rest}" is not a condition; ${FORMS}`);
  return { kind: 'condition', type, value: value ?? 'True' };
}

function parseJsonPath(rest: string): WaitCondition {
  const end = rest.startsWith('{') ? rest.indexOf('}') + 1 : rest.indexOf('=') < 0 ? rest.length : rest.indexOf('=');
  if (end <= 0) throw new InvalidArgumentError(`"jsonpath=${rest}" has no closing "}"; ${FORMS}`);
  const path = rest.slice(0, end);
  const tail = rest.slice(end);
  if (tail !== '' && !tail.startsWith('=')) throw new InvalidArgumentError(`"jsonpath=${rest}": expected "=VALUE" after ${path}; ${FORMS}`);
  try {
    jsonPathValues(path, {}); // a syntax error shows now, not as a wait that never ends
  } catch (err) {
    throw new InvalidArgumentError(err instanceof CliError ? err.message : String(err));
  }
  return { kind: 'jsonpath', path, value: tail === '' ? undefined : tail.slice(1) };
}

function hasCondition(obj: WaitedObject, type: string, value: string): boolean {
  const conditions = Array.isArray(obj.status?.conditions) ? (obj.status.conditions as Record<string, unknown>[]) : [];
  const c = conditions.find((x) => String(x.type).toLowerCase() === type.toLowerCase());
  if (!c || String(c.status).toLowerCase() !== value.toLowerCase()) return false;
  const generation = obj.metadata.generation;
  return typeof c.observedGeneration !== 'number' || generation === undefined || c.observedGeneration >= generation;
}

function safeValues(path: string, obj: unknown): unknown[] {
  try {
    return jsonPathValues(path, obj);
  } catch {
    return [];
  }
}

/**
 * kubectl's JSONPath for `wait --for=jsonpath=...`: one expression, with or
 * without its braces (`{.status.phase}`, `.status.phase`), filters included
 * (`{.status.conditions[?(@.type=="Ready")].status}`), evaluated by
 * jsonpath-plus in its safe mode (no script evaluation). Pure.
 */
import { JSONPath } from 'jsonpath-plus';
import { CliError } from './errors.js';

/** The values `path` selects in `obj` (none when it selects nothing). */
export function jsonPathValues(path: string, obj: unknown): unknown[] {
  const expression = toJsonPathPlus(path);
  try {
    return JSONPath({ path: expression, json: obj as object, wrap: true, eval: 'safe' }) as unknown[];
  } catch (err) {
    throw new CliError(`invalid JSONPath ${path}: ${(err as Error).message}`, 'write it as {.status.phase} or {.status.conditions[?(@.type=="Ready")].status}');
  }
}

/** A selected value as kubectl compares it: strings as they are, numbers and booleans as printed, objects as JSON. */
export function jsonPathText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

function toJsonPathPlus(path: string): string {
  const inner = path.startsWith('{') && path.endsWith('}') ? path.slice(1, -1) : path;
  if (inner.startsWith('$')) return inner;
  if (!inner.startsWith('.') && !inner.startsWith('[')) throw new CliError(`invalid JSONPath ${path}: it must start with "." (or be in braces, as {.status.phase})`);
  return `$${inner}`;
}

/**
 * Typed reading of the query parameters kube defines (dryRun, limit,
 * timeoutSeconds, ...), each rejecting malformed values with a 400.
 */
import { badRequest } from '../errors.js';

/** The query object as express parses it. */
export type Query = Record<string, unknown>;

/** A single-valued string parameter. */
export function str(q: Query, name: string): string | undefined {
  const v = q[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw badRequest(`${name}: must be given at most once`);
  return v;
}

/** A non-negative integer parameter. */
export function int(q: Query, name: string): number | undefined {
  const v = str(q, name);
  if (v === undefined || v === '') return undefined;
  if (!/^\d{1,15}$/.test(v)) throw badRequest(`${name}: Invalid value: ${JSON.stringify(v)}: must be a non-negative integer`);
  return Number(v);
}

/**
 * A boolean parameter, read as kube-apiserver reads one (apimachinery's
 * Convert_Slice_string_To_bool): absent, `false` or `0` (any case) is false,
 * any other value true, so Python's `watch=True` and a bare `watch=` watch.
 */
export function bool(q: Query, name: string): boolean {
  return queryBool(q[name]);
}

/** A query value as express gives it (a string, or an array when repeated: the first counts), as a string. */
export function firstValue(value: unknown): string | undefined {
  const v: unknown = Array.isArray(value) ? value[0] : value;
  return v === undefined ? undefined : String(v);
}

/** The boolean of a query value as express gives it. */
export function queryBool(value: unknown): boolean {
  const v = firstValue(value);
  if (v === undefined) return false;
  return !['false', '0'].includes(v.toLowerCase());
}

/**
 * A flag of pods/log (`follow`, `previous`): true for `true`, `1` or a bare name, undefined when absent,
 * `false` or `0` (the first of repeated values counts); anything else is a 400. The request listener
 * reads `follow` with this too, so that whatever the log handler follows is counted as long-running.
 */
export function logFlag(q: Query, name: string): true | undefined {
  const v = firstValue(q[name]);
  if (v === undefined || v === 'false' || v === '0') return undefined;
  if (v === 'true' || v === '1' || v === '') return true;
  throw badRequest(`query parameter ${name}="${v}" is not a boolean; use true or false`);
}

/** `dryRun=All` from the query, or from a DELETE body's `dryRun: ["All"]`. */
export function dryRun(q: Query, bodyValue?: unknown): boolean {
  const values = [q.dryRun, bodyValue].flat().filter((v) => v !== undefined && v !== '');
  for (const v of values) {
    if (v !== 'All') throw badRequest(`dryRun: Unsupported value: ${JSON.stringify(v)}: supported values: "All"`);
  }
  return values.length > 0;
}

/**
 * The patch formats the API accepts (API.md "PATCH content types"):
 * JSON merge patch (RFC 7386), JSON patch (RFC 6902, via fast-json-patch),
 * and strategic merge patch, which for Cairn's kinds is a merge patch.
 * Server-side apply is in apply.ts.
 */
import fastJsonPatch from 'fast-json-patch';
import { ApiError, badRequest } from '../errors.js';
import { MAX_JSON_PATCH_COPY_BYTES, MAX_JSON_PATCH_OPERATIONS } from '../validation/limits.js';

/** The PATCH content types, by name. */
export const PATCH_TYPES = {
  merge: 'application/merge-patch+json',
  json: 'application/json-patch+json',
  strategic: 'application/strategic-merge-patch+json',
  apply: 'application/apply-patch+yaml',
} as const;

/** A JSON-ish value. */
type Json = unknown;

/** RFC 7386: objects merge key by key, null deletes, anything else replaces. */
export function mergePatch(target: Json, patch: Json): Json {
  if (patch === null || typeof patch !== 'object' || Array.isArray(patch)) return patch;
  const out: Record<string, Json> = target && typeof target === 'object' && !Array.isArray(target) ? { ...(target as object) } : {};
  for (const [k, v] of Object.entries(patch as Record<string, Json>)) {
    if (v === null) delete out[k];
    // defineProperty, so a key named "__proto__" is a field like any other, never the prototype.
    else Object.defineProperty(out, k, { value: mergePatch(out[k], v), enumerable: true, writable: true, configurable: true });
  }
  return out;
}

/**
 * RFC 6902 on a copy of `target`; a bad or failing operation is a 422 naming it and its index. Like
 * kube, at most MAX_JSON_PATCH_OPERATIONS operations, whose copies add up to at most
 * MAX_JSON_PATCH_COPY_BYTES (413 beyond): each `copy` of a value into itself doubles the document, and
 * each `move` copies the value it moves onto (fast-json-patch keeps it to return). A move onto itself
 * is the no-op it is, copying nothing: 1,000 of a large value once cost 34 s.
 */
export function jsonPatch(target: Json, ops: Json): Json {
  if (!Array.isArray(ops)) throw badRequest('json patch must be a JSON array of operations');
  if (ops.length > MAX_JSON_PATCH_OPERATIONS) {
    throw new ApiError(413, 'RequestEntityTooLarge', `The allowed maximum operations in a JSON patch is ${MAX_JSON_PATCH_OPERATIONS}, got ${ops.length}; split the patch`);
  }
  let doc = structuredClone(target);
  let copied = 0;
  ops.forEach((op, index) => {
    try {
      if (isSelfMove(op)) return void mustExist(doc, (op as { from: string }).from);
      copied += copiedBytes(doc, op);
      if (copied > MAX_JSON_PATCH_COPY_BYTES) {
        throw new ApiError(413, 'RequestEntityTooLarge', `json patch operation ${index} copies more than ${MAX_JSON_PATCH_COPY_BYTES} bytes in all; the result would be too large`);
      }
      doc = fastJsonPatch.applyOperation(doc, op as fastJsonPatch.Operation, true, true, true, index).newDocument;
    } catch (err) {
      throw err instanceof ApiError ? err : patchError(err as { name?: string; message?: string }, op, index);
    }
  });
  return doc;
}

/** A move of a value onto itself: a no-op (RFC 6902), which fast-json-patch would still copy the value for. */
function isSelfMove(op: unknown): boolean {
  const { op: kind, from, path } = (op ?? {}) as { op?: unknown; from?: unknown; path?: unknown };
  return kind === 'move' && typeof from === 'string' && from === path;
}

/** Throws, as applyOperation would, when `pointer` names nothing in `doc`. */
function mustExist(doc: Json, pointer: string): void {
  if (fastJsonPatch.getValueByPointer(doc, pointer) === undefined) throw Object.assign(new Error(`Cannot perform the operation at a path that does not exist: ${pointer}`), { name: 'OPERATION_PATH_UNRESOLVABLE' });
}

/** Bytes an operation copies, as JSON: a `copy`'s source, a `move`'s target; 0 for other operations and missing values. */
function copiedBytes(doc: Json, op: unknown): number {
  const { op: kind, from, path } = (op ?? {}) as { op?: unknown; from?: unknown; path?: unknown };
  const copiedFrom = kind === 'copy' ? from : kind === 'move' ? path : undefined;
  if (typeof copiedFrom !== 'string') return 0;
  try {
    return JSON.stringify(fastJsonPatch.getValueByPointer(doc, copiedFrom))?.length ?? 0;
  } catch {
    return 0; // a bad pointer: applyOperation says so
  }
}

function patchError(e: { name?: string; message?: string }, op: unknown, index: number): ApiError {
  const prefix = 'the server rejected our request due to an error in our request';
  if (e.name === 'TEST_OPERATION_FAILED' || /TEST_OPERATION_FAILED/.test(String(e.message))) {
    return new ApiError(422, 'Invalid', `${prefix}: json patch test operation ${JSON.stringify(op)} failed`);
  }
  return new ApiError(422, 'Invalid', `${prefix}: ${firstLine(e.message)} in operation ${index} (${JSON.stringify(op)})`);
}

function firstLine(s: string | undefined): string {
  return (s ?? 'invalid json patch').split('\n')[0]!;
}

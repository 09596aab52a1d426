/**
 * The name of the object a create request is about, noted on its response
 * so the audit entry can carry it: a create's URL has no name (it is in the
 * body, or generated from metadata.generateName). A WeakMap, so nothing is
 * kept once the response is gone and no type has to grow a field.
 */
import type { ServerResponse } from 'node:http';

const names = new WeakMap<ServerResponse, string>();

/** Notes the name a create request asked for or got; later notes win. */
export function noteCreatedName(res: ServerResponse, name: string | undefined): void {
  if (name) names.set(res, name);
}

/** The name noted for this response, if any. */
export function createdName(res: ServerResponse): string | undefined {
  return names.get(res);
}

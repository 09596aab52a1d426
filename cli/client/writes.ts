/**
 * What the writing verbs (apply, delete, apply --prune) share: a DELETE
 * with kube's DeleteOptions, and the suffix kubectl puts on every line of
 * a dry run (their `--dry-run` flag is in verb-flags.ts).
 */
import { objectPath, type ResourceInfo } from './catalog.js';
import type { ClientContext } from './context.js';
import type { ApiObject } from './watch.js';

/** Appended to every summary line of a server-side dry run, as kubectl does. */
export const DRY_RUN_SUFFIX = ' (server dry run)';

/** Deletes one object (dependents in the background, as kubectl asks); resolves with its last state. */
export function deleteObject(ctx: ClientContext, r: ResourceInfo, namespace: string | undefined, name: string, dryRun: boolean): Promise<ApiObject> {
  const body = { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background', ...(dryRun ? { dryRun: ['All'] } : {}) };
  return ctx.rest.request<ApiObject>('DELETE', objectPath(r, namespace, name), { body });
}

/**
 * Server-side apply of one object (PATCH application/apply-patch+yaml with
 * field manager `cairn`), and how `cairn apply` reports it: created when
 * the object was absent before, unchanged when the apply changed nothing the
 * user can see, configured otherwise.
 *
 * Cairn's apiserver returns the live object untouched (same
 * resourceVersion) for an apply that changes nothing (apiserver/rest/apply.ts),
 * which is the quick answer. A different resourceVersion does not yet mean
 * the apply changed anything: the controller may have written the status
 * between the read and the apply, so the outcome then compares the objects
 * without managedFields, resourceVersion and status (which the main endpoint
 * never changes).
 */
import { isDeepStrictEqual } from 'node:util';
import { ApiStatusError, isNotFound, toApiError } from '../../api/client/errors.js';
import { objectPath } from './catalog.js';
import type { ClientContext } from './context.js';
import { formatError } from './errors.js';
import { resourceName } from './printers.js';
import type { Target } from './targets.js';
import type { ApiObject } from './watch.js';
import { DRY_RUN_SUFFIX } from './writes.js';

/** The field manager of every write cairn apply makes. */
export const FIELD_MANAGER = 'cairn';
const APPLY_PATCH = 'application/apply-patch+yaml';

/** What an apply did to one object. */
export type ApplyOutcome = 'created' | 'configured' | 'unchanged';

/** How to apply. */
export interface ApplyOptions {
  /** --dry-run=server: validated and admitted, not stored. */
  dryRun: boolean;
  /** --force-conflicts: take over fields another manager owns. */
  force: boolean;
  /** --field-manager: FIELD_MANAGER unless given. */
  fieldManager?: string;
}

/** The live object a target names, or undefined when it does not exist. */
export async function readLive(ctx: ClientContext, t: Target): Promise<ApiObject | undefined> {
  try {
    return await ctx.rest.request<ApiObject>('GET', objectPath(t.r, t.namespace, t.name));
  } catch (err) {
    if (isNotFound(err)) return undefined;
    throw err;
  }
}

/** Server-side applies the target's manifest; resolves with the object as stored (or as it would be, on a dry run). */
export function applyTarget(ctx: ClientContext, t: Target, opts: ApplyOptions): Promise<ApiObject> {
  const query = { fieldManager: opts.fieldManager ?? FIELD_MANAGER, fieldValidation: 'Strict', force: opts.force || undefined, dryRun: opts.dryRun ? 'All' : undefined };
  // JSON is YAML: the apply patch travels as the manifest's JSON.
  return ctx.rest.request<ApiObject>('PATCH', objectPath(t.r, t.namespace, t.name), { body: JSON.stringify(t.object), headers: { 'Content-Type': APPLY_PATCH }, query });
}

/** The outcome of an apply, from the object before (undefined: it did not exist) and after. */
export function applyOutcome(before: ApiObject | undefined, after: ApiObject): ApplyOutcome {
  if (!before) return 'created';
  if (before.metadata.resourceVersion === after.metadata.resourceVersion) return 'unchanged';
  return isDeepStrictEqual(visibleContent(before), visibleContent(after)) ? 'unchanged' : 'configured';
}

// The object without what changes on every write or is not the apply's doing: the controller and the
// agents add their finalizers on their own schedule, maybe between this command's read and its apply.
function visibleContent(obj: ApiObject): ApiObject {
  const { managedFields: _m, resourceVersion: _r, finalizers: _f, ...metadata } = obj.metadata;
  const { status: _s, ...rest } = obj;
  return { ...rest, metadata: metadata as ApiObject['metadata'] };
}

/** `instance.cairn.dev/web created`, with kubectl's dry-run suffix. */
export function summaryLine(t: Pick<Target, 'r' | 'name'>, what: ApplyOutcome | 'pruned', dryRun: boolean): string {
  return `${resourceName(t.r, t.name)} ${what}${dryRun ? DRY_RUN_SUFFIX : ''}`;
}

/**
 * The report of an object that failed: `Error from server (Invalid): error
 * when applying "FILE": ...`; a field-manager conflict adds how to resolve it.
 */
export function applyErrorText(err: unknown, source: string): string {
  const e = toApiError(err);
  if (!(e instanceof ApiStatusError)) return formatError(e);
  const text = `Error from server (${e.reason}): error when applying "${source}": ${e.message}`;
  return isFieldConflict(e) ? `${text}\n${CONFLICT_HINT}` : text;
}

const CONFLICT_HINT =
  'hint: the fields above are managed by another field manager. Re-run with --force-conflicts to take them over, ' +
  'remove them from your manifest to leave them to their manager, or set them to the live value to share them.';

function isFieldConflict(e: ApiStatusError): boolean {
  const causes = (e.details as { causes?: { reason?: string }[] } | undefined)?.causes ?? [];
  return e.code === 409 && causes.some((c) => c.reason === 'FieldManagerConflict');
}

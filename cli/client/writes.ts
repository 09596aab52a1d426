/**
 * What the writing verbs (apply, delete, apply --prune) share: the
 * `--dry-run` flag, a DELETE with kube's DeleteOptions, and the suffix
 * kubectl puts on every line of a dry run.
 */
import { InvalidArgumentError, Option } from 'commander';
import { objectPath, type ResourceInfo } from './catalog.js';
import type { ClientContext } from './context.js';
import type { ApiObject } from './watch.js';

/** Appended to every summary line of a server-side dry run, as kubectl does. */
export const DRY_RUN_SUFFIX = ' (server dry run)';

/** `--dry-run=server|none` → whether the server should only pretend; `client` is refused. */
export function parseDryRun(value: string): boolean {
  if (value === 'server') return true;
  if (value === 'none') return false;
  if (value === 'client') throw new InvalidArgumentError('--dry-run=client is not supported by cairn: use --dry-run=server, which asks the server to validate and admit without storing');
  throw new InvalidArgumentError(`invalid dry-run value ("${value}"). Must be "none" or "server".`);
}

/** kubectl's `--dry-run=server|none` option; `what` says what the server does on a dry run. */
export function dryRunOption(what: string): Option {
  return new Option('--dry-run <strategy>', `"server": ${what}; "none": do it`).argParser(parseDryRun).default(false, 'none');
}

/** Deletes one object (dependents in the background, as kubectl asks); resolves with its last state. */
export function deleteObject(ctx: ClientContext, r: ResourceInfo, namespace: string | undefined, name: string, dryRun: boolean): Promise<ApiObject> {
  const body = { kind: 'DeleteOptions', apiVersion: 'v1', propagationPolicy: 'Background', ...(dryRun ? { dryRun: ['All'] } : {}) };
  return ctx.rest.request<ApiObject>('DELETE', objectPath(r, namespace, name), { body });
}

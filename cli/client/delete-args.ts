/**
 * What `cairn delete` is asked to delete, with kubectl's rules and messages:
 * `KIND NAME...` or `KIND/NAME...` (read as the read verbs read them,
 * kind-args.ts), `KIND -l SELECTOR` or `KIND --all`, or `-f FILE...` —
 * never a mix, and never nothing. A category selects only its namespaced
 * kinds. Pure given the catalog.
 */
import type { ResourceCatalog } from './catalog.js';
import { CliError } from './errors.js';
import { NAME_ACROSS_NAMESPACES, NAME_WITH_SELECTOR, resolveKindArgs, type KindTarget } from './kind-args.js';

/** The objects a delete names: by manifests, by name, or every object of the kinds that the selection matches. */
export type DeleteRequest = { mode: 'files' } | { mode: 'names'; targets: KindTarget[] } | { mode: 'selection'; targets: KindTarget[]; selector?: string };

/** The selection flags of delete. */
export interface DeleteSelection {
  files: boolean;
  selector?: string;
  all: boolean;
  allNamespaces: boolean;
}

const USAGE_HINT = "name the objects as 'cairn delete KIND NAME...' or 'KIND/NAME', select them with 'KIND -l SELECTOR' or 'KIND --all', or pass -f FILE";

/** Checks the arguments against the flags and says what to delete; throws a CliError in kubectl's words. */
export function parseDeleteArgs(catalog: ResourceCatalog, args: string[], sel: DeleteSelection): DeleteRequest {
  if (sel.selector !== undefined && sel.all) throw new CliError('cannot set --all and --selector at the same time', USAGE_HINT);
  if (sel.files) {
    if (args.length > 0) throw new CliError(`Unexpected args: [${args.join(' ')}]`, 'with -f, the files name the objects; drop the other arguments');
    return { mode: 'files' };
  }
  if (args.length === 0) throw new CliError('You must provide one or more resources by argument or filename.', USAGE_HINT);
  const targets = resolveKindArgs(catalog, args, 'delete');
  const named = targets.some((t) => t.names.length > 0);
  if (sel.selector !== undefined || sel.all) {
    if (named) throw new CliError(sel.all ? 'names cannot be provided together with --all' : NAME_WITH_SELECTOR, USAGE_HINT);
    return { mode: 'selection', targets: withoutCategoryClusterScoped(catalog, args[0]!, targets), selector: sel.selector };
  }
  if (!named) throw new CliError('resource(s) were provided, but no name was specified', USAGE_HINT);
  if (sel.allNamespaces) throw new CliError(NAME_ACROSS_NAMESPACES, 'drop -A, or use -n NAMESPACE');
  return { mode: 'names', targets };
}

// A category (`cairn`) selects its namespaced kinds only, as kubectl's `all` does: deleting a
// Cluster takes its whole namespace, so `delete cairn --all -n demo` must not reach every Cluster.
function withoutCategoryClusterScoped(catalog: ResourceCatalog, kinds: string, targets: KindTarget[]): KindTarget[] {
  const named = new Set(kinds.split(',').flatMap((word) => (catalog.resolve(word).length === 1 ? catalog.resolve(word) : [])));
  return targets.filter((t) => t.r.namespaced || named.has(t.r));
}

/**
 * The objects a read verb's arguments name, in kubectl's two forms:
 * `KIND[,KIND...] [NAME...]` (a category such as `cairn` expands to its
 * kinds; the names apply to each) or `KIND/NAME...`. Pure given the catalog.
 */
import type { ResourceCatalog, ResourceInfo } from './catalog.js';
import { CliError } from './errors.js';

/** One resource type and the names asked of it (none: every object, by selector). */
export interface KindTarget {
  r: ResourceInfo;
  names: string[];
}

/** The targets of `args` (`verb` names the command in messages). */
export function resolveKindArgs(catalog: ResourceCatalog, args: readonly string[], verb: string): KindTarget[] {
  const noType = () => new CliError(`you must specify the type of resource to ${verb}`, `e.g. 'cairn ${verb} instances'; list the types with 'kubectl api-resources'`);
  if (args.length === 0) throw noType();
  if (args.some((a) => a.includes('/'))) return typeNamePairs(catalog, args, verb);
  const [kinds, ...names] = args;
  const words = kinds!.split(',').filter(Boolean);
  if (words.length === 0) throw noType(); // `cairn get ,` or `''`
  return unique(words.flatMap((word) => catalog.resolve(word))).map((r) => ({ r, names }));
}

/** Names in the message `-A` with a NAME gives, as kubectl words it. */
export const NAME_ACROSS_NAMESPACES = 'a resource cannot be retrieved by name across all namespaces';
/** The message a NAME with `-l` gives. */
export const NAME_WITH_SELECTOR = 'name cannot be provided when a selector is specified';

function typeNamePairs(catalog: ResourceCatalog, args: readonly string[], verb: string): KindTarget[] {
  const targets: KindTarget[] = [];
  for (const arg of args) {
    const slash = arg.indexOf('/');
    if (slash <= 0 || slash === arg.length - 1) {
      throw new CliError(
        `there is no need to specify a resource type as a separate argument when passing arguments in resource/name form (e.g. 'cairn ${verb} resource/<resource_name>' instead of 'cairn ${verb} resource resource/<resource_name>')`,
      );
    }
    const r = catalog.resolveOne(arg.slice(0, slash));
    const name = arg.slice(slash + 1);
    const existing = targets.find((t) => t.r === r);
    if (existing) existing.names.push(name);
    else targets.push({ r, names: [name] });
  }
  return targets;
}

function unique(resources: ResourceInfo[]): ResourceInfo[] {
  return resources.filter((r, i) => resources.indexOf(r) === i);
}

/**
 * The one instance a verb that acts on a single instance (restart, migrate) names, as `instance NAME`
 * or `instance/NAME`; a CliError with `usage` otherwise.
 */
export function oneInstance(catalog: ResourceCatalog, args: readonly string[], verb: string, usage: string): { r: ResourceInfo; name: string } {
  const targets = resolveKindArgs(catalog, args, verb);
  const other = targets.find((t) => t.r.kind !== 'Instance');
  if (other) throw new CliError(`cannot ${verb} ${other.r.plural}: only instances ${verb}`, usage);
  const names = targets.flatMap((t) => t.names);
  if (names.length !== 1) throw new CliError(`${verb} takes one instance, got ${names.length}`, `${usage}, or ${usage.replace(/instance NAME/, 'instance/NAME')}`);
  return { r: targets[0]!.r, name: names[0]! };
}

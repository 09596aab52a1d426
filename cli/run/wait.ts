/**
 * `cairn wait`: blocks until objects meet a condition, match a JSONPath
 * value, or are gone — every object concurrently, each through `waitFor`
 * (list, then watch, level-triggered) with one deadline. Prints
 * `instance.cairn.dev/web condition met` (or `deleted`) as each succeeds;
 * exits 1 if any timed out, in kubectl's words.
 */
import type { ResourceInfo } from '../client/catalog.js';
import type { ClientContext } from '../client/context.js';
import { CliError, formatError } from '../client/errors.js';
import { NAME_ACROSS_NAMESPACES, NAME_WITH_SELECTOR, resolveKindArgs, type KindTarget } from '../client/kind-args.js';
import { resourceName } from '../client/printers.js';
import { readObjects } from '../client/read-objects.js';
import { conditionMet, metMessage, type WaitCondition, type WaitedObject } from '../client/wait-for.js';
import { waitFor } from '../client/watch.js';

/** The flags of `wait`, as commander parses them. */
interface WaitFlags {
  for: WaitCondition;
  all?: boolean;
  selector?: string;
  timeout: number;
}

/** One object to wait on. */
interface Waited {
  r: ResourceInfo;
  namespace: string | undefined;
  name: string;
}

/** Runs `cairn wait ARGS...` (a kind and names). */
export async function wait(ctx: ClientContext, args: string[]): Promise<number> {
  const flags = ctx.flags as unknown as WaitFlags;
  const targets = resolveKindArgs(await ctx.catalog(), args, 'wait');
  const { objects, missing } = await objectsToWait(ctx, targets, flags);
  for (const err of missing) process.stderr.write(`${formatError(err)}\n`);
  const results = await Promise.all(objects.map((o) => waitOne(ctx, o, flags)));
  return missing.length > 0 || results.includes(false) ? 1 : 0;
}

async function objectsToWait(ctx: ClientContext, targets: KindTarget[], flags: WaitFlags): Promise<{ objects: Waited[]; missing: unknown[] }> {
  const named = targets.some((t) => t.names.length > 0);
  const selecting = flags.all || flags.selector !== undefined;
  if (named && selecting) throw new CliError(flags.all ? 'names cannot be provided together with --all' : NAME_WITH_SELECTOR, 'name the objects, or select them with --all or -l');
  if (!named && !selecting) throw new CliError('resource(s) were provided, but no name was specified', 'name the objects, or select them with --all or -l');
  if (named && ctx.allNamespaces) throw new CliError(NAME_ACROSS_NAMESPACES, 'drop -A, or use -n NAMESPACE');
  // Waiting for a deletion needs no object: one that is already gone is done.
  if (named && flags.for.kind === 'delete') return { objects: targets.flatMap((t) => t.names.map((name) => ({ r: t.r, namespace: ctx.namespace, name }))), missing: [] };
  const objects: Waited[] = [];
  const missing: unknown[] = [];
  for (const t of targets) {
    const read = await readObjects(ctx, t, { labelSelector: flags.selector });
    objects.push(...read.found.map((obj) => ({ r: t.r, namespace: obj.metadata.namespace ?? ctx.namespace, name: obj.metadata.name })));
    missing.push(...read.missing);
  }
  if (objects.length === 0 && missing.length === 0) throw new CliError('no matching resources found', 'check the kind, the namespace (-n) and the selector with cairn get');
  return { objects, missing };
}

// Resolves true when the object met the condition, false (after printing why) when it did not in time.
async function waitOne(ctx: ClientContext, o: Waited, flags: WaitFlags): Promise<boolean> {
  try {
    await waitFor(ctx, o.r, o.namespace, o.name, (obj) => conditionMet(flags.for, obj as WaitedObject | undefined), { timeoutMs: flags.timeout, what: 'the condition' });
    process.stdout.write(`${resourceName(o.r, o.name)} ${metMessage(flags.for)}\n`);
    return true;
  } catch (err) {
    // waitFor's only CliError is its timeout; say it as kubectl does (plural/name).
    const shown = err instanceof CliError ? new CliError(`timed out waiting for the condition on ${o.r.plural}/${o.name}`, `raise --timeout, or see why with 'cairn describe ${o.r.singular} ${o.name}${o.r.namespaced && o.namespace ? ` -n ${o.namespace}` : ''}'`) : err;
    process.stderr.write(`${formatError(shown)}\n`);
    return false;
  }
}

/**
 * `cairn describe`: each object in detail, kubectl-style — identity, Spec,
 * Status, a Conditions table and the object's Events (core/v1 Events whose
 * involvedObject is this object: same name and namespace by field selector,
 * same kind and uid, so an older object of the same name does not leak in).
 * A missing name is reported on stderr while the others print (exit 1).
 */
import { statusCodeOf } from '../../api/client/errors.js';
import type { ResourceInfo } from '../client/catalog.js';
import type { ClientContext } from '../client/context.js';
import { describeObject, type DescribedObject, type EventRecord } from '../client/describe-format.js';
import { CliError, formatError } from '../client/errors.js';
import { NAME_ACROSS_NAMESPACES, NAME_WITH_SELECTOR, resolveKindArgs } from '../client/kind-args.js';
import { noResourcesMessage } from '../client/printers.js';
import { listNamespace, readObjects } from '../client/read-objects.js';
import { listObjects, type ApiObject } from '../client/watch.js';

/** Runs `cairn describe ARGS...` (a kind and names). */
export async function describe(ctx: ClientContext, args: string[]): Promise<number> {
  const selector = ctx.flags.selector as string | undefined;
  const catalog = await ctx.catalog();
  const targets = resolveKindArgs(catalog, args, 'describe');
  const named = targets.some((t) => t.names.length > 0);
  if (named && selector !== undefined) throw new CliError(NAME_WITH_SELECTOR, 'drop the names, or drop -l');
  if (named && ctx.allNamespaces) throw new CliError(NAME_ACROSS_NAMESPACES, 'drop -A, or use -n NAMESPACE');
  const events = catalog.forKind('v1', 'Event');
  const texts: string[] = [];
  const missing: unknown[] = [];
  for (const t of targets) {
    const read = await readObjects(ctx, t, { labelSelector: selector });
    missing.push(...read.missing);
    for (const obj of read.found) texts.push(describeObject(obj as unknown as DescribedObject, events && (await eventsOf(ctx, events, obj)), Date.now()));
  }
  process.stdout.write(texts.join('\n'));
  for (const err of missing) process.stderr.write(`${formatError(err)}\n`);
  if (texts.length === 0 && !named) process.stderr.write(`${noResourcesMessage(targets.some((t) => listNamespace(ctx, t.r)) ? ctx.namespace : undefined)}\n`);
  return missing.length > 0 ? 1 : 0;
}

// Events live in the object's namespace (`default` for a cluster-scoped object, as the recorder puts them).
async function eventsOf(ctx: ClientContext, events: ResourceInfo, obj: ApiObject): Promise<EventRecord[] | undefined> {
  const { name, namespace, uid } = obj.metadata;
  const fieldSelector = [`involvedObject.name=${name}`, ...(namespace ? [`involvedObject.namespace=${namespace}`] : [])].join(',');
  try {
    const list = await listObjects(ctx, events, { namespace: namespace ?? 'default', fieldSelector });
    return (list.items as unknown as EventRecord[]).filter((e) => e.involvedObject?.kind === obj.kind && (!uid || !e.involvedObject?.uid || e.involvedObject.uid === uid));
  } catch (err) {
    if (statusCodeOf(err) === 403) return undefined; // not allowed to read events: describe the rest
    throw err;
  }
}

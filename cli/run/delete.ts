/**
 * `cairn delete`: objects by name, by label selector, all of a kind, or as
 * named by manifests; one `instance.cairn.dev "web" deleted` line each
 * (dependents go in the background). A missing object is an error unless
 * --ignore-not-found; the others are still deleted. --wait then waits until
 * each object is gone — after its finalizers ran (an Instance or Volume is
 * held until the controller removed its WorkItems).
 */
import { isNotFound } from '../../api/client/errors.js';
import { type ResourceCatalog, type ResourceInfo } from '../client/catalog.js';
import type { ClientContext } from '../client/context.js';
import { parseDeleteArgs, type DeleteRequest } from '../client/delete-args.js';
import { formatError } from '../client/errors.js';
import { listNamespace } from '../client/read-objects.js';
import { manifestsFor } from '../client/manifests.js';
import { kindName } from '../client/printers.js';
import { toTarget } from '../client/targets.js';
import { listObjects, waitFor } from '../client/watch.js';
import { deleteObject, DRY_RUN_SUFFIX } from '../client/writes.js';

interface DeleteFlags {
  filename?: string[];
  recursive?: boolean;
  selector?: string;
  all?: boolean;
  ignoreNotFound?: boolean;
  wait?: boolean;
  timeout: number;
  dryRun: boolean;
}

/** One object to delete. */
interface Victim {
  r: ResourceInfo;
  namespace?: string;
  name: string;
}

/** Runs `cairn delete ARGS...`. */
export async function runDelete(ctx: ClientContext, args: string[]): Promise<number> {
  const flags = ctx.flags as unknown as DeleteFlags;
  const files = flags.filename ?? [];
  const catalog = await ctx.catalog();
  const request = parseDeleteArgs(catalog, args, { files: files.length > 0, selector: flags.selector, all: flags.all ?? false, allNamespaces: ctx.allNamespaces });
  const { victims, failures } = await findVictims(ctx, request, catalog);
  if (victims.length === 0 && failures === 0 && request.mode === 'selection') process.stdout.write('No resources found\n');
  const deleted: (Victim & { uid?: string })[] = [];
  let failed = failures;
  for (const v of victims) {
    try {
      const last = await deleteObject(ctx, v.r, v.namespace, v.name, flags.dryRun);
      deleted.push({ ...v, uid: last.metadata?.uid });
      process.stdout.write(`${kindName(v.r)} "${v.name}" deleted${flags.dryRun ? DRY_RUN_SUFFIX : ''}\n`);
    } catch (err) {
      if (flags.ignoreNotFound && isNotFound(err)) continue;
      failed++;
      process.stderr.write(`${formatError(err)}\n`);
    }
  }
  if (flags.wait && !flags.dryRun) await waitUntilGone(ctx, deleted, flags.timeout);
  return failed > 0 ? 1 : 0;
}

// The objects a request names; a manifest that names no served kind is reported and counted, the rest go on.
async function findVictims(ctx: ClientContext, req: DeleteRequest, catalog: ResourceCatalog): Promise<{ victims: Victim[]; failures: number }> {
  const flags = ctx.flags as unknown as DeleteFlags;
  if (req.mode === 'names') {
    return { victims: req.targets.flatMap(({ r, names }) => names.map((name) => ({ r, namespace: ctx.namespace, name }))), failures: 0 };
  }
  if (req.mode === 'selection') {
    const lists = await Promise.all(req.targets.map(async ({ r }) => ({ r, list: await listObjects(ctx, r, { namespace: listNamespace(ctx, r), labelSelector: req.selector }) })));
    return { victims: lists.flatMap(({ r, list }) => list.items.map((o) => ({ r, namespace: o.metadata.namespace, name: o.metadata.name }))), failures: 0 };
  }
  const rule = { namespace: ctx.namespace, explicit: ctx.explicitNamespace };
  const victims: Victim[] = [];
  let failures = 0;
  for (const m of manifestsFor('delete', flags.filename ?? [], flags)) {
    try {
      victims.push(toTarget(m, catalog, rule));
    } catch (err) {
      failures++;
      process.stderr.write(`${formatError(err)}\n`);
    }
  }
  return { victims, failures };
}

// Waits for each object in turn, all within one deadline; a recreated object (a new uid) counts as gone.
async function waitUntilGone(ctx: ClientContext, deleted: (Victim & { uid?: string })[], timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (const v of deleted) {
    const gone = (obj: { metadata: { uid?: string } } | undefined) => !obj || (v.uid !== undefined && obj.metadata.uid !== v.uid);
    await waitFor(ctx, v.r, v.namespace, v.name, gone, { timeoutMs: Math.max(0, deadline - Date.now()), what: 'deletion' });
  }
}

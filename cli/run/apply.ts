/**
 * `cairn apply -f FILE|DIR|-`: server-side apply of every object of the
 * input, in input order, one summary line each (created / configured /
 * unchanged); an object that fails is reported and the rest still go in
 * (exit 1 at the end). `--prune -l SELECTOR` then deletes what matches the
 * selector but left the input — only when everything applied.
 */
import { applyErrorText, applyOutcome, applyTarget, readLive, summaryLine, type ApplyOptions } from '../client/apply.js';
import type { ClientContext } from '../client/context.js';
import { CliError } from '../client/errors.js';
import { manifestsFor, namespacesFirst } from '../client/manifests.js';
import { listPruneCandidates, pruneObject, pruneScope, selectPrune } from '../client/prune.js';
import { objectKey, toTarget, type Target } from '../client/targets.js';

interface ApplyFlags {
  filename?: string[];
  recursive?: boolean;
  dryRun: boolean;
  forceConflicts?: boolean;
  fieldManager?: string;
  prune?: boolean;
  selector?: string;
}

/** Runs `cairn apply`. */
export async function runApply(ctx: ClientContext): Promise<number> {
  const flags = ctx.flags as unknown as ApplyFlags;
  if (flags.prune && !flags.selector) {
    throw new CliError('--prune needs a label selector (-l)', 'only objects carrying the selected labels may be pruned, e.g. cairn apply -f shop/ --prune -l app=shop');
  }
  const manifests = namespacesFirst(manifestsFor('apply', flags.filename ?? [], flags));
  const catalog = await ctx.catalog();
  const rule = { namespace: ctx.namespace, explicit: ctx.explicitNamespace };
  const opts: ApplyOptions = { dryRun: flags.dryRun, force: flags.forceConflicts ?? false, fieldManager: flags.fieldManager };
  const applied: Target[] = [];
  let failures = 0;
  for (const m of manifests) {
    try {
      const t = toTarget(m, catalog, rule);
      const before = await readLive(ctx, t);
      const after = await applyTarget(ctx, t, opts);
      applied.push(t);
      process.stdout.write(`${summaryLine(t, applyOutcome(before, after), opts.dryRun)}\n`);
    } catch (err) {
      failures++;
      process.stderr.write(`${applyErrorText(err, m.source)}\n`);
    }
  }
  if (failures > 0) {
    if (flags.prune) process.stderr.write('error: nothing pruned, because not every object applied; fix the errors above and apply again\n');
    return 1;
  }
  if (flags.prune) await prune(ctx, applied, flags.selector!, opts.dryRun);
  return 0;
}

async function prune(ctx: ClientContext, applied: Target[], selector: string, dryRun: boolean): Promise<void> {
  const scope = pruneScope(applied, await ctx.catalog(), ctx.explicitNamespace ? ctx.namespace : undefined);
  const keep = new Set(applied.map((t) => objectKey(t.r, t.namespace, t.name)));
  for (const gone of selectPrune(await listPruneCandidates(ctx, scope, selector), keep)) {
    await pruneObject(ctx, gone, dryRun);
    process.stdout.write(`${summaryLine({ r: gone.r, name: gone.obj.metadata.name }, 'pruned', dryRun)}\n`);
  }
}

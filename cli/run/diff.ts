/**
 * `cairn diff -f FILE|DIR|-`: what `cairn apply` would change, as a unified
 * diff of each object's live state against a server-side dry-run apply.
 * kubectl's exit contract: 0 no differences, 1 differences, >1 an error
 * (any error stops the diff: a partial diff would read as "no changes").
 */
import { applyErrorText, applyTarget, readLive } from '../client/apply.js';
import type { ClientContext } from '../client/context.js';
import { diffFileName, diffYaml, runDiffProgram, type DiffPair } from '../client/diff.js';
import { exitCodeOf, formatError } from '../client/errors.js';
import { manifestsFor } from '../client/manifests.js';
import { toTarget } from '../client/targets.js';

interface DiffFlags {
  filename?: string[];
  recursive?: boolean;
  forceConflicts?: boolean;
  fieldManager?: string;
  selector?: string;
}

// A failure of one object of the input, reported with its file.
class ObjectFailure {
  constructor(
    readonly err: unknown,
    readonly source: string,
  ) {}
}

/** Runs `cairn diff`; resolves with its exit code (0 same, 1 different, >1 failed). */
export async function runDiff(ctx: ClientContext): Promise<number> {
  try {
    return runDiffProgram(await diffPairs(ctx), process.env);
  } catch (err) {
    const text = err instanceof ObjectFailure ? applyErrorText(err.err, err.source) : formatError(err, ctx.rest.cluster?.server);
    process.stderr.write(`${text}\n`);
    return Math.max(2, exitCodeOf(err));
  }
}

async function diffPairs(ctx: ClientContext): Promise<DiffPair[]> {
  const flags = ctx.flags as unknown as DiffFlags;
  const manifests = manifestsFor('diff', flags.filename ?? [], flags);
  const catalog = await ctx.catalog();
  const rule = { namespace: ctx.namespace, explicit: ctx.explicitNamespace };
  const pairs: DiffPair[] = [];
  for (const m of manifests) {
    try {
      const t = toTarget(m, catalog, rule);
      const live = await readLive(ctx, t);
      const merged = await applyTarget(ctx, t, { dryRun: true, force: flags.forceConflicts ?? false, fieldManager: flags.fieldManager });
      pairs.push({ file: diffFileName(t.r, t.namespace, t.name), live: diffYaml(live), merged: diffYaml(merged) });
    } catch (err) {
      throw new ObjectFailure(err, m.source);
    }
  }
  return pairs;
}

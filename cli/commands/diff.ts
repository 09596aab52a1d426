/**
 * `cairn diff -f FILE|DIR|-`: what `cairn apply` would change, as a unified
 * diff of each object's live state against a server-side dry-run apply.
 * kubectl's exit contract: 0 no differences, 1 differences, >1 an error
 * (any error stops the diff: a partial diff would read as "no changes").
 */
import type { Command } from 'commander';
import { applyErrorText, applyTarget, readLive } from '../client/apply.js';
import { clientCommand, runWithClient, type ClientContext } from '../client/context.js';
import { diffFileName, diffYaml, runDiffProgram, type DiffPair } from '../client/diff.js';
import { exitCodeOf, formatError } from '../client/errors.js';
import { addFilenameFlags, readManifests, selectManifests } from '../client/manifests.js';
import { toTarget } from '../client/targets.js';

interface DiffFlags {
  filename?: string[];
  recursive?: boolean;
  forceConflicts?: boolean;
  selector?: string;
}

const EXAMPLES = `
Examples:
  # What would applying the directory change?
  cairn diff -f examples/

  # From standard input; exit code 0 when nothing would change, 1 when something would
  cat web.yaml | cairn diff -f - && echo "in sync"

  # With another diff program (kubectl's variable works too)
  CAIRN_EXTERNAL_DIFF="diff -u --color=always" cairn diff -f shop/

The files compared leave out status and what the server rewrites on every write
(metadata.managedFields, resourceVersion, generation, creationTimestamp, uid):
what remains is what the apply would change.

Exit status: 0 no differences, 1 differences found, >1 cairn or diff failed.`;

/** The `diff` verb. */
export function diffCommand(): Command {
  return addFilenameFlags(clientCommand('diff'), 'to compare')
    .description('Diff the live objects against what a server-side apply of the manifests would make them')
    .option('--force-conflicts', 'compare as if apply took over fields another field manager owns')
    .option('-l, --selector <selector>', 'compare only the input objects with these labels')
    .option('--server-side', 'accepted for kubectl compatibility: cairn always diffs a server-side apply')
    .addHelpText('after', EXAMPLES)
    .action(runWithClient(runDiff, { failureExitCode: 2 }));
}

// A failure of one object of the input, reported with its file.
class ObjectFailure {
  constructor(
    readonly err: unknown,
    readonly source: string,
  ) {}
}

async function runDiff(ctx: ClientContext): Promise<number> {
  try {
    return runDiffProgram(await diffPairs(ctx), process.env);
  } catch (err) {
    const text = err instanceof ObjectFailure ? applyErrorText(err.err, err.source) : formatError(err, ctx.kc.getCurrentCluster()?.server);
    process.stderr.write(`${text}\n`);
    return Math.max(2, exitCodeOf(err));
  }
}

async function diffPairs(ctx: ClientContext): Promise<DiffPair[]> {
  const flags = ctx.flags as unknown as DiffFlags;
  const manifests = selectManifests(readManifests(flags.filename ?? [], { recursive: flags.recursive }), flags.selector);
  const catalog = await ctx.catalog();
  const rule = { namespace: ctx.namespace, explicit: ctx.explicitNamespace };
  const pairs: DiffPair[] = [];
  for (const m of manifests) {
    try {
      const t = toTarget(m, catalog, rule);
      const live = await readLive(ctx, t);
      const merged = await applyTarget(ctx, t, { dryRun: true, force: flags.forceConflicts ?? false });
      pairs.push({ file: diffFileName(t.r, t.namespace, t.name), live: diffYaml(live), merged: diffYaml(merged) });
    } catch (err) {
      throw new ObjectFailure(err, m.source);
    }
  }
  return pairs;
}

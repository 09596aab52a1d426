/** `cairn diff`: its flags and help; what it does is in ../run/diff.ts, loaded when it runs. */
import type { Command } from 'commander';
import { clientCommand, runWithClient } from '../client/command.js';
import { addFilenameFlags, fieldManagerOption } from '../client/verb-flags.js';

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
    .addOption(fieldManagerOption())
    .option('-l, --selector <selector>', 'compare only the input objects with these labels')
    .option('--server-side', 'accepted for kubectl compatibility: cairn always diffs a server-side apply')
    .addHelpText('after', EXAMPLES)
    .action(runWithClient(async (ctx) => (await import('../run/diff.js')).runDiff(ctx), { failureExitCode: 2 }));
}

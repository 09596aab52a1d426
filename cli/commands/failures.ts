/** `cairn failures`: its flags and help; what it does is in ../run/failures.ts, loaded when it runs. */
import { InvalidArgumentError, type Command } from 'commander';
import { clientCommand, runWithClient } from '../client/command.js';
import type { ReportOutput } from '../run/failures.js';


function parseOutput(value: string): ReportOutput {
  if (value !== 'text' && value !== 'json' && value !== 'yaml') throw new InvalidArgumentError(`"${value}" is not an output format of failures; use text, json or yaml`);
  return value;
}

/** The `failures` verb. */
export function failuresCommand(): Command {
  return clientCommand('failures', { allNamespaces: true })
    .description('Report everything that fails — Failed WorkItems and failing conditions — grouped by reason, with node, message and how to fix it')
    .option('-o, --output <format>', 'text, json or yaml', parseOutput, 'text')
    .option('--exit-code', 'exit 1 when there are failures (for scripts and CI)')
    .addHelpText(
      'after',
      `
Examples:
  # What fails in the cluster of the current context, and how to fix it
  cairn failures

  # Across every cluster, as JSON
  cairn failures -A -o json

  # In a script: fail when anything fails in cluster demo
  cairn failures -n demo --exit-code`,
    )
    .action(runWithClient(async (ctx) => (await import('../run/failures.js')).runFailures(ctx)));
}

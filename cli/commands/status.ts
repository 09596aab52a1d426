/** `cairn status`: its flags and help; what it does is in ../run/status.ts, loaded when it runs. */
import { InvalidArgumentError, type Command } from 'commander';
import { durationOption } from '../flags.js';
import { clientCommand, runWithClient } from '../client/command.js';
import type { StatusOutput } from '../run/status.js';


function parseOutput(value: string): StatusOutput {
  if (value !== 'text' && value !== 'json') throw new InvalidArgumentError(`"${value}" is not an output format of status; use text or json`);
  return value;
}

/** The `status` verb. */
export function statusCommand(): Command {
  return clientCommand('status', { allNamespaces: true })
    .description('Show the cluster at a glance: nodes and their allocation, instances and volumes by phase, convergence and what fails')
    .option('-w, --watch', 'keep watching: redraw in place on a terminal, print a line per change otherwise; Ctrl-C ends it')
    .option('--until-converged', 'watch until every node, instance and volume has converged and nothing fails (exit 0), or --timeout passes (exit 1); interrupted first, it exits 130 (Ctrl-C), 143 (SIGTERM) or 141 (its output closed)')
    .addOption(durationOption('--timeout <duration>', 'how long --until-converged waits, e.g. 90s, 2m', 300_000))
    .option('-o, --output <format>', 'text or json (with --watch, one JSON document per line)', parseOutput, 'text')
    .addHelpText(
      'after',
      `
Examples:
  # The cluster of the current context at a glance
  cairn status

  # Every cluster, as JSON
  cairn status -A -o json

  # Follow it as it changes (Ctrl-C to stop)
  cairn status -n demo --watch

  # Wait until everything is Ready, failing after 2 minutes
  cairn status --watch --until-converged --timeout 2m`,
    )
    .action(runWithClient(async (ctx) => (await import('../run/status.js')).runStatus(ctx)));
}

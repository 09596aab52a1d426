/**
 * `cairn failures`: the failure report an operator asks for — every Failed
 * WorkItem and every failing condition of Clusters, Nodes, Instances and
 * Volumes, grouped by reason, each with its node, message and how to fix
 * it. --exit-code makes it a check (exit 1 when anything fails).
 */
import { InvalidArgumentError, type Command } from 'commander';
import YAML from 'yaml';
import { clientCommand, runWithClient } from '../client/context.js';
import { collectFailures, groupByReason } from '../status/failures.js';
import { failureReport, renderReport } from '../status/report.js';
import { loadObjects, missingClusterHint } from '../status/snapshot.js';

type ReportOutput = 'text' | 'json' | 'yaml';

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
    .action(
      runWithClient(async (ctx) => {
        const namespace = ctx.allNamespaces ? undefined : ctx.namespace;
        const objects = await loadObjects(ctx, { namespace });
        const groups = groupByReason(collectFailures(objects));
        const report = failureReport(groups, namespace);
        const output = ctx.flags.output as ReportOutput;
        if (output === 'json') process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
        else if (output === 'yaml') process.stdout.write(YAML.stringify(report));
        else process.stdout.write(`${renderReport(report).join('\n')}\n`);
        // An empty namespace is not all clear when it has no Cluster at all: say where the Clusters are.
        const note = await missingClusterHint(ctx, { namespace }, objects.clusters);
        if (note) process.stderr.write(`hint: ${note}\n`);
        return ctx.flags.exitCode && report.count > 0 ? 1 : 0;
      }),
    );
}

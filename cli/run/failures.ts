/**
 * `cairn failures`: the failure report an operator asks for — every Failed
 * WorkItem and every failing condition of Clusters, Nodes, Instances and
 * Volumes, grouped by reason, each with its node, message and how to fix
 * it. --exit-code makes it a check (exit 1 when anything fails).
 */
import YAML from 'yaml';
import type { ClientContext } from '../client/context.js';
import { collectFailures, groupByReason } from '../status/failures.js';
import { failureReport, renderReport } from '../status/report.js';
import { loadObjects, missingClusterHint } from '../status/snapshot.js';

/** How `cairn failures` prints its report. */
export type ReportOutput = 'text' | 'json' | 'yaml';

/** Runs `cairn failures`; resolves with 1 when something fails and --exit-code was given. */
export async function runFailures(ctx: ClientContext): Promise<number> {
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
}

/**
 * `cairn status`: the cluster at a glance — nodes and their allocation,
 * instances and volumes by phase, convergence, what fails — from one list
 * of each kind; --watch follows it (redrawn in place on a terminal, a line
 * per change otherwise); --until-converged waits for convergence.
 */
import type { Cluster } from '../../api/cluster.js';
import type { ClientContext } from '../client/context.js';
import { followStatus } from '../status/follow.js';
import { summarize } from '../status/model.js';
import { renderSummary } from '../status/render.js';
import { loadObjects, missingClusterHint, type StatusScope } from '../status/snapshot.js';
import { JsonLinesView, PlainView, statusDocument, TerminalView, type StatusView, type ViewContext } from '../status/views.js';

/** How `cairn status` prints. */
export type StatusOutput = 'text' | 'json';

function scopeOf(ctx: ClientContext): StatusScope {
  return ctx.allNamespaces ? {} : { namespace: ctx.namespace };
}

function viewContext(ctx: ClientContext): ViewContext {
  return { server: ctx.rest.cluster?.server ?? '', allNamespaces: ctx.allNamespaces, namespace: ctx.allNamespaces ? undefined : ctx.namespace };
}

function viewFor(output: StatusOutput, vc: ViewContext): StatusView {
  if (output === 'json') return new JsonLinesView(process.stdout, vc);
  return process.stdout.isTTY ? new TerminalView(process.stdout, vc) : new PlainView(process.stdout, vc);
}

// A namespace without a Cluster looks all clear: say where the Clusters are (on stderr, the exit code unchanged).
async function noteMissingCluster(ctx: ClientContext, clusters?: readonly Cluster[]): Promise<void> {
  const note = await missingClusterHint(ctx, scopeOf(ctx), clusters);
  if (note) process.stderr.write(`hint: ${note}\n`);
}

async function showOnce(ctx: ClientContext, output: StatusOutput): Promise<void> {
  const objects = await loadObjects(ctx, scopeOf(ctx));
  const summary = summarize(objects);
  const r = { ...viewContext(ctx), now: new Date() };
  const text = output === 'json' ? JSON.stringify(statusDocument(summary, r), null, 2) : renderSummary(summary, r).join('\n');
  process.stdout.write(`${text}\n`);
  await noteMissingCluster(ctx, objects.clusters);
}

/** Runs `cairn status`: once, or following the cluster with --watch / --until-converged. */
export async function runStatus(ctx: ClientContext): Promise<number | void> {
  const output = ctx.flags.output as StatusOutput;
  const untilConverged = !!ctx.flags.untilConverged;
  if (!ctx.flags.watch && !untilConverged) return showOnce(ctx, output);
  await noteMissingCluster(ctx);
  const view = viewFor(output, viewContext(ctx));
  return followStatus(ctx, { scope: scopeOf(ctx), view, untilConverged, timeoutMs: ctx.flags.timeout as number });
}

/**
 * The operator's verbs on nodes and instances, each a declarative request
 * written into the object (the controller carries it out):
 *   cordon / uncordon  Node.spec.unschedulable (uncordon also ends a drain)
 *   drain              Node.spec.drain: true; --wait until status.phase is Drained
 *   restart instance   the cairn.dev/restartedAt annotation, as `kubectl rollout restart`
 */
import type { Command } from 'commander';
import { RESTARTED_AT_ANNOTATION } from '../../api/names.js';
import { parseDuration } from '../flags.js';
import { objectPath, type ResourceCatalog, type ResourceInfo } from '../client/catalog.js';
import { resourceName } from '../client/printers.js';
import { clientCommand, runWithClient, type ClientContext } from '../client/context.js';
import { oneInstance } from '../client/kind-args.js';
import { waitFor, type ApiObject } from '../client/watch.js';

const MERGE_PATCH = { 'Content-Type': 'application/merge-patch+json' };

async function patchObject(ctx: ClientContext, r: ResourceInfo, name: string, patch: object): Promise<ApiObject> {
  return ctx.rest.request<ApiObject>('PATCH', objectPath(r, ctx.namespace, name), { body: patch, headers: MERGE_PATCH, query: { fieldManager: 'cairn' } });
}

async function nodeResource(ctx: ClientContext): Promise<ResourceInfo> {
  return (await ctx.catalog()).resolveOne('nodes.cairn.dev');
}

/** Sets Node.spec fields, printing `node.cairn.dev/NAME <verb>` or `... already <verb>` when nothing changed. */
async function setNodeSpec(ctx: ClientContext, name: string, spec: { unschedulable: boolean; drain?: boolean }, verb: string): Promise<ApiObject> {
  const r = await nodeResource(ctx);
  const before = await ctx.rest.request<ApiObject>('GET', objectPath(r, ctx.namespace, name));
  const unchanged = Object.entries(spec).every(([k, v]) => (before.spec?.[k] ?? false) === v);
  const after = unchanged ? before : await patchObject(ctx, r, name, { spec });
  process.stdout.write(`${resourceName(r, name)} ${unchanged ? 'already ' : ''}${verb}\n`);
  return after;
}

/** `cairn cordon NODE`. */
export function cordonCommand(): Command {
  return clientCommand('cordon')
    .description('Mark a node unschedulable: running instances stay, new ones go elsewhere')
    .argument('<node>', 'node name')
    .addHelpText('after', '\nExamples:\n  cairn cordon node-a -n demo\n  cairn uncordon node-a -n demo')
    .action(runWithClient(async (ctx, node: string) => void (await setNodeSpec(ctx, node, { unschedulable: true }, 'cordoned'))));
}

/** `cairn uncordon NODE`. */
export function uncordonCommand(): Command {
  return clientCommand('uncordon')
    .description('Mark a node schedulable again (also ends a drain)')
    .argument('<node>', 'node name')
    .addHelpText('after', '\nExamples:\n  cairn uncordon node-a -n demo')
    .action(runWithClient(async (ctx, node: string) => void (await setNodeSpec(ctx, node, { unschedulable: false, drain: false }, 'uncordoned'))));
}

/** `cairn drain NODE [--wait]`. */
export function drainCommand(): Command {
  return clientCommand('drain')
    .description('Cordon a node and move its instances elsewhere (Node.spec.drain); --wait until it is empty')
    .argument('<node>', 'node name')
    .option('--wait', 'wait until the node reports phase Drained')
    .option('--timeout <duration>', 'how long --wait waits', parseDuration, 300_000)
    .addHelpText('after', '\nExamples:\n  cairn drain node-b -n demo --wait --timeout 2m\n  cairn uncordon node-b -n demo    # end the drain')
    .action(
      runWithClient(async (ctx, node: string) => {
        await setNodeSpec(ctx, node, { unschedulable: true, drain: true }, 'draining');
        if (!ctx.flags.wait) return;
        const drained = (obj: ApiObject | undefined) => obj?.status?.phase === 'Drained' && obj.status.observedGeneration === obj.metadata.generation;
        const r = await nodeResource(ctx);
        await waitFor(ctx, r, ctx.namespace, node, drained, { timeoutMs: ctx.flags.timeout as number, what: 'phase Drained' });
        process.stdout.write(`${resourceName(r, node)} drained\n`);
      }),
    );
}

/** `cairn restart instance NAME` or `cairn restart instance/NAME`. */
export function restartCommand(): Command {
  return clientCommand('restart')
    .description('Restart an instance once, in place (sets the cairn.dev/restartedAt annotation)')
    .argument('<kind>', 'instance, or instance/NAME')
    .argument('[name]', 'instance name (unless given as instance/NAME)')
    .addHelpText('after', '\nExamples:\n  cairn restart instance web -n demo\n  cairn restart instance/web -n demo')
    .action(
      runWithClient(async (ctx, kind: string, name: string | undefined) => {
        const { r, name: instance } = restartTarget(await ctx.catalog(), name === undefined ? [kind] : [kind, name]);
        await patchObject(ctx, r, instance, { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: new Date().toISOString() } } });
        process.stdout.write(`${resourceName(r, instance)} restarted\n`);
      }),
    );
}

/** The one instance `restart` names; a CliError otherwise. */
export function restartTarget(catalog: ResourceCatalog, args: readonly string[]): { r: ResourceInfo; name: string } {
  return oneInstance(catalog, args, 'restart', 'cairn restart instance NAME');
}

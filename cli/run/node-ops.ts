/**
 * The operator's verbs on nodes and instances, each a declarative request
 * written into the object (the controller carries it out):
 *   cordon / uncordon  Node.spec.unschedulable (uncordon also ends a drain)
 *   drain              Node.spec.drain: true; --wait until status.phase is Drained
 *   restart instance   the cairn.dev/restartedAt annotation, as `kubectl rollout restart`
 */
import { RESTARTED_AT_ANNOTATION } from '../../api/names.js';
import { objectPath, type ResourceCatalog, type ResourceInfo } from '../client/catalog.js';
import { resourceName } from '../client/printers.js';
import type { ClientContext } from '../client/context.js';
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

/** The one instance `restart` names; a CliError otherwise. */
export function restartTarget(catalog: ResourceCatalog, args: readonly string[]): { r: ResourceInfo; name: string } {
  return oneInstance(catalog, args, 'restart', 'cairn restart instance NAME');
}

/** `cairn cordon NODE`. */
export async function cordon(ctx: ClientContext, node: string): Promise<void> {
  await setNodeSpec(ctx, node, { unschedulable: true }, 'cordoned');
}

/** `cairn uncordon NODE`. */
export async function uncordon(ctx: ClientContext, node: string): Promise<void> {
  await setNodeSpec(ctx, node, { unschedulable: false, drain: false }, 'uncordoned');
}

/** `cairn drain NODE [--wait]`. */
export async function drain(ctx: ClientContext, node: string): Promise<void> {
  await setNodeSpec(ctx, node, { unschedulable: true, drain: true }, 'draining');
  if (!ctx.flags.wait) return;
  const drained = (obj: ApiObject | undefined) => obj?.status?.phase === 'Drained' && obj.status.observedGeneration === obj.metadata.generation;
  const r = await nodeResource(ctx);
  await waitFor(ctx, r, ctx.namespace, node, drained, { timeoutMs: ctx.flags.timeout as number, what: 'phase Drained' });
  process.stdout.write(`${resourceName(r, node)} drained\n`);
}

/** `cairn restart ARGS...` (instance NAME, or instance/NAME). */
export async function restart(ctx: ClientContext, args: string[]): Promise<void> {
  const { r, name } = restartTarget(await ctx.catalog(), args);
  await patchObject(ctx, r, name, { metadata: { annotations: { [RESTARTED_AT_ANNOTATION]: new Date().toISOString() } } });
  process.stdout.write(`${resourceName(r, name)} restarted\n`);
}

/**
 * `cairn migrate instance NAME --to NODE [--wait]`: the declarative
 * migration request of docs/migration.md, written into spec.migrateTo (the
 * controller carries it out: live for a running qemu VM, else stop-then-
 * start). A request is carried out once; to ask again for a node whose last
 * migration finished (a retry after a failure), the command clears the
 * field, waits until the controller has withdrawn the old report, then sets
 * it again. With --wait it follows status.migration to the outcome.
 */
import { objectPath, type ResourceCatalog, type ResourceInfo } from '../client/catalog.js';
import type { ClientContext } from '../client/context.js';
import { CliError } from '../client/errors.js';
import { oneInstance } from '../client/kind-args.js';
import { resourceName } from '../client/printers.js';
import { waitFor, type ApiObject } from '../client/watch.js';

const MERGE_PATCH = { 'Content-Type': 'application/merge-patch+json' };

/** What status.migration says about the request to move to a node. */
export type MigrationOutcome = { done: false } | { done: true; ok: boolean; text: string };

/** Runs `cairn migrate ARGS...` (instance NAME, or instance/NAME). */
export async function migrate(ctx: ClientContext, args: string[]): Promise<number> {
  const { r, name } = migrateTarget(await ctx.catalog(), args);
  const node = ctx.flags.to as string;
  const timeoutMs = ctx.flags.timeout as number;
  const path = objectPath(r, ctx.namespace, name);
  const before = await ctx.rest.request<ApiObject>('GET', path);
  if (alreadyThere(before, node)) {
    process.stdout.write(`${resourceName(r, name)} already runs on node ${node}: nothing to migrate\n`);
    return 0;
  }
  if (lastMigrationFinished(before, node)) {
    await patchMigrateTo(ctx, path, null);
    await waitFor(ctx, r, ctx.namespace, name, (obj) => !obj || !lastMigrationFinished(obj, node), {
      timeoutMs,
      what: 'the controller to withdraw the last migration report (is the controller running?)',
    });
  }
  await patchMigrateTo(ctx, path, node);
  process.stdout.write(`${resourceName(r, name)} migrating to node ${node}\n`);
  if (!ctx.flags.wait) return 0;
  const last = await waitFor(ctx, r, ctx.namespace, name, (obj) => !obj || migrationOutcome(obj, node).done, { timeoutMs, what: `the migration to node ${node}` });
  if (!last) throw new CliError(`${resourceName(r, name)} was deleted while migrating`);
  const outcome = migrationOutcome(last, node) as Extract<MigrationOutcome, { done: true }>;
  (outcome.ok ? process.stdout : process.stderr).write(`${resourceName(r, name)} ${outcome.text}\n`);
  return outcome.ok ? 0 : 1;
}

function patchMigrateTo(ctx: ClientContext, path: string, node: string | null): Promise<ApiObject> {
  return ctx.rest.request<ApiObject>('PATCH', path, { body: { spec: { migrateTo: node } }, headers: MERGE_PATCH, query: { fieldManager: 'cairn' } });
}

/** The one instance `migrate` names; a CliError otherwise. */
export function migrateTarget(catalog: ResourceCatalog, args: readonly string[]): { r: ResourceInfo; name: string } {
  return oneInstance(catalog, args, 'migrate', 'cairn migrate instance NAME --to NODE');
}

interface MigrationReport {
  targetNode?: string;
  phase?: string;
  mode?: string;
  reason?: string;
  message?: string;
  downtimeMs?: number;
  totalTimeMs?: number;
}

function report(obj: ApiObject): MigrationReport | undefined {
  return (obj.status as { migration?: MigrationReport } | undefined)?.migration;
}

/** Whether the instance runs on `node` with no migration in flight (moving it there is a no-op). */
export function alreadyThere(obj: ApiObject, node: string): boolean {
  const status = obj.status as { nodeName?: string; phase?: string } | undefined;
  return status?.nodeName === node && status.phase === 'Running';
}

/**
 * Whether status.migration reports a finished (Completed or Failed) migration to `node`: a request for
 * `node` counts as carried out until the controller withdraws that report (it does once spec.migrateTo is cleared).
 */
export function lastMigrationFinished(obj: ApiObject, node: string): boolean {
  const m = report(obj);
  return m?.targetNode === node && (m.phase === 'Completed' || m.phase === 'Failed');
}

/** The outcome of the migration to `node` as status.migration reports it, with the line to print. */
export function migrationOutcome(obj: ApiObject, node: string): MigrationOutcome {
  const m = report(obj);
  if (m?.targetNode !== node) return { done: false };
  const ms = (v: number | undefined) => (v === undefined ? 'unknown' : `${v} ms`);
  if (m.phase === 'Completed') return { done: true, ok: true, text: `migrated to node ${node}${m.mode ? ` (${m.mode.toLowerCase()})` : ''}: downtime ${ms(m.downtimeMs)}, total time ${ms(m.totalTimeMs)}` };
  if (m.phase === 'Failed') return { done: true, ok: false, text: `migration to node ${node} failed (${m.reason ?? 'unknown reason'}): ${m.message ?? 'no message'}` };
  return { done: false };
}

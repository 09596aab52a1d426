/**
 * `cairn get`: objects as kubectl shows them. Tables come from the server
 * (its columns, its ages), one block per kind when several are asked for;
 * yaml/json print one object or a v1 List, `-o name` kind.group/name. A
 * missing name is reported on stderr while the others still print (exit 1).
 * `-w` prints the current state, then one row (or object) per change from a
 * watch until Ctrl-C, SIGTERM or a closed stdout ends it; when the watch's
 * version has expired (410) it re-lists and prints what changed meanwhile.
 */
import { objectPath, type ResourceInfo } from '../client/catalog.js';
import type { ClientContext } from '../client/context.js';
import { CliError, formatError } from '../client/errors.js';
import { followChanges, PrintedVersions, type ChangeSource } from '../client/follow.js';
import { onStdoutClosed } from '../client/interrupt.js';
import { NAME_ACROSS_NAMESPACES, NAME_WITH_SELECTOR, resolveKindArgs, type KindTarget } from '../client/kind-args.js';
import { asList, documentFormatter, kindName, noResourcesMessage, ObjectStream, resourceName } from '../client/printers.js';
import { listNamespace, readEach, readObjects } from '../client/read-objects.js';
import { concatTables, renderTable, TABLE_ACCEPT, TableStream, type ServerTable, type TableRow, type TableView } from '../client/table-printer.js';
import { getTable, listTable } from '../client/tables.js';
import type { OutputFormat } from '../client/verb-flags.js';
import { listObjects, watchObjects, type ApiObject, type Selection } from '../client/watch.js';

/** The flags of `get`, as commander parses them. */
interface GetFlags {
  output: OutputFormat;
  selector?: string;
  fieldSelector?: string;
  watch?: boolean;
  /** false with --no-headers. */
  headers: boolean;
  showLabels?: boolean;
}

/** One kind's share of the output and the names it could not find. */
interface Fetched<T> {
  r: ResourceInfo;
  result: T;
  missing: unknown[];
}

/** Runs `cairn get ARGS...` (kinds and names). */
export async function get(ctx: ClientContext, args: string[]): Promise<number> {
  const flags = ctx.flags as unknown as GetFlags;
  const targets = resolveKindArgs(await ctx.catalog(), args, 'get');
  checkArgs(ctx, targets, flags);
  onStdoutClosed();
  if (flags.watch) return watch(ctx, targets[0]!, flags);
  const missing = humanReadable(flags) ? await printTables(ctx, targets, flags) : await printObjects(ctx, targets, flags);
  for (const err of missing) process.stderr.write(`${formatError(err)}\n`);
  return missing.length > 0 ? 1 : 0;
}

function humanReadable(flags: GetFlags): boolean {
  return flags.output === 'table' || flags.output === 'wide';
}

function checkArgs(ctx: ClientContext, targets: KindTarget[], flags: GetFlags): void {
  const named = targets.some((t) => t.names.length > 0);
  if (named && flags.selector !== undefined) throw new CliError(NAME_WITH_SELECTOR, 'drop the names, or drop -l');
  if (named && ctx.allNamespaces) throw new CliError(NAME_ACROSS_NAMESPACES, 'drop -A, or use -n NAMESPACE');
  if (!flags.watch) return;
  if (targets.length > 1) throw new CliError('you may only specify a single resource type with --watch', 'watch one kind at a time');
  if (targets[0]!.names.length > 1) throw new CliError(`watch is only supported on individual resources and resource collections, but ${targets[0]!.names.length} resources were found`, 'watch one name, or the kind with -l');
}

function selection(ctx: ClientContext, r: ResourceInfo, flags: GetFlags): Selection {
  return { namespace: listNamespace(ctx, r), labelSelector: flags.selector, fieldSelector: flags.fieldSelector };
}

function tableView(ctx: ClientContext, r: ResourceInfo, flags: GetFlags, withKind: boolean): TableView {
  return { wide: flags.output === 'wide', withNamespace: ctx.allNamespaces && r.namespaced, namePrefix: withKind ? `${kindName(r)}/` : '', showLabels: flags.showLabels };
}

async function fetchTables(ctx: ClientContext, targets: KindTarget[], flags: GetFlags): Promise<Fetched<ServerTable | undefined>[]> {
  const fetched: Fetched<ServerTable | undefined>[] = [];
  for (const t of targets) {
    if (t.names.length === 0) {
      fetched.push({ r: t.r, result: await listTable(ctx, t.r, selection(ctx, t.r, flags)), missing: [] });
      continue;
    }
    const { found, missing } = await readEach(t.names, (name) => getTable(ctx, t.r, ctx.namespace, name));
    fetched.push({ r: t.r, result: concatTables(found), missing });
  }
  return fetched;
}

async function printTables(ctx: ClientContext, targets: KindTarget[], flags: GetFlags): Promise<unknown[]> {
  const fetched = await fetchTables(ctx, targets, flags);
  const named = targets.some((t) => t.names.length > 0);
  const kindsWithRows = fetched.filter((f) => (f.result?.rows?.length ?? 0) > 0).length;
  // As kubectl: kind.group/name when several kinds were asked for by selection, or several printed.
  const withKind = (targets.length > 1 && !named) || kindsWithRows > 1;
  const blocks = fetched.flatMap((f) => (f.result ? [renderTable(f.result, tableView(ctx, f.r, flags, withKind), !flags.headers)] : [])).filter(Boolean);
  process.stdout.write(blocks.join(flags.headers ? '\n' : ''));
  const missing = fetched.flatMap((f) => f.missing);
  if (blocks.length === 0 && !named) process.stderr.write(`${noResourcesMessage(targets.some((t) => listNamespace(ctx, t.r)) ? ctx.namespace : undefined)}\n`);
  return missing;
}

async function printObjects(ctx: ClientContext, targets: KindTarget[], flags: GetFlags): Promise<unknown[]> {
  const fetched: Fetched<ApiObject[]>[] = [];
  for (const t of targets) {
    const { found, missing } = await readObjects(ctx, t, { labelSelector: flags.selector, fieldSelector: flags.fieldSelector });
    fetched.push({ r: t.r, result: found, missing });
  }
  const objects = fetched.flatMap((f) => f.result);
  if (flags.output === 'name') {
    process.stdout.write(fetched.flatMap((f) => f.result.map((obj) => `${resourceName(f.r, obj.metadata.name)}\n`)).join(''));
  } else {
    // One name of one kind is a single object (nothing when it is missing); anything else a List.
    const single = targets.length === 1 && targets[0]!.names.length === 1;
    const doc = single ? objects[0] : asList(objects);
    if (doc) process.stdout.write((await documentFormatter(flags.output as 'yaml' | 'json'))(doc));
  }
  return fetched.flatMap((f) => f.missing);
}

async function watch(ctx: ClientContext, t: KindTarget, flags: GetFlags): Promise<number> {
  const name = t.names[0];
  const sel = selection(ctx, t.r, flags);
  if (name) sel.fieldSelector = [`metadata.name=${name}`, flags.fieldSelector].filter(Boolean).join(',');
  const printer = humanReadable(flags) ? tableWatchPrinter(ctx, t, flags, sel) : objectWatchPrinter(ctx, t, flags, sel);
  const rv = await printer.first();
  const source: ChangeSource = { watch: (from, onEvent) => watchObjects(ctx, t.r, sel, from, onEvent, printer.headers), relist: printer.relist };
  return followChanges(source, rv, printer.onChange);
}

/** What `get -w` prints: the current state, each change, and after a relist what changed meanwhile. */
interface WatchPrinter {
  /** Prints the current state; resolves with its resourceVersion. */
  first(): Promise<string | undefined>;
  /** Lists again and prints the objects new or changed since printed; resolves with the list's resourceVersion. */
  relist(): Promise<string | undefined>;
  onChange(type: string, obj: unknown): void;
  /** Headers of the watch request (an Accept asking for Table events). */
  headers?: Record<string, string>;
}

function tableWatchPrinter(ctx: ClientContext, t: KindTarget, flags: GetFlags, sel: Selection): WatchPrinter {
  const name = t.names[0];
  const stream = new TableStream(tableView(ctx, t.r, flags, false), !flags.headers);
  const printed = new PrintedVersions();
  const show = (table: ServerTable, rows: TableRow[] | undefined) => process.stdout.write(stream.print({ ...table, rows }));
  return {
    headers: { Accept: TABLE_ACCEPT },
    async first() {
      const table = name ? await getTable(ctx, t.r, ctx.namespace, name) : await listTable(ctx, t.r, sel);
      for (const row of table.rows ?? []) printed.record(row.object?.metadata);
      show(table, table.rows);
      return table.metadata?.resourceVersion;
    },
    async relist() {
      const table = await listTable(ctx, t.r, sel);
      show(table, printed.relisted(table.rows ?? [], (row) => row.object?.metadata));
      return table.metadata?.resourceVersion;
    },
    onChange(type, obj) {
      const table = obj as ServerTable;
      for (const row of table.rows ?? []) printed.record(row.object?.metadata, type === 'DELETED');
      show(table, table.rows);
    },
  };
}

function objectWatchPrinter(ctx: ClientContext, t: KindTarget, flags: GetFlags, sel: Selection): WatchPrinter {
  const name = t.names[0];
  let stream: ObjectStream;
  const printed = new PrintedVersions();
  const show = (objects: ApiObject[]) => process.stdout.write(objects.map((obj) => stream.print(t.r, obj)).join(''));
  return {
    async first() {
      stream = await ObjectStream.open(flags.output as 'yaml' | 'json' | 'name');
      const list = name ? { metadata: {}, items: [await ctx.rest.request<ApiObject>('GET', objectPath(t.r, ctx.namespace, name))] } : await listObjects(ctx, t.r, sel);
      for (const obj of list.items) printed.record(obj.metadata);
      show(list.items);
      return list.metadata.resourceVersion ?? list.items[0]?.metadata.resourceVersion;
    },
    async relist() {
      const list = await listObjects(ctx, t.r, sel);
      show(printed.relisted(list.items, (obj) => obj.metadata));
      return list.metadata.resourceVersion;
    },
    onChange(type, obj) {
      printed.record((obj as ApiObject).metadata, type === 'DELETED');
      show([obj as ApiObject]);
    },
  };
}

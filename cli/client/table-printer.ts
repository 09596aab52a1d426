/**
 * `get`'s human-readable output, from the server's meta.k8s.io/v1 Table the
 * way kubectl prints it: upper-case headers, priority-0 columns (all with
 * -o wide), a NAMESPACE column first with -A, `kind.group/name` in the name
 * column when several kinds are printed, and cells as the server rendered
 * them (ages included). `TableStream` keeps the columns of the first table
 * so the rows a watch delivers later line up under it. Pure.
 */
import { columnWidths, formatLine, GET_PADDING, tabwrite } from './tabwriter.js';

/** The Accept header that asks the apiserver for a Table (kubectl's, JSON as fallback). */
export const TABLE_ACCEPT = 'application/json;as=Table;v=v1;g=meta.k8s.io,application/json';

/** One column of a Table. */
export interface TableColumn {
  name: string;
  type?: string;
  format?: string;
  priority?: number;
}

/** One row of a Table; `object` is the item's PartialObjectMetadata. */
export interface TableRow {
  cells: unknown[];
  object?: { metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> } };
}

/** A meta.k8s.io/v1 Table as the apiserver returns it. */
export interface ServerTable {
  metadata?: { resourceVersion?: string; continue?: string };
  columnDefinitions: TableColumn[];
  rows?: TableRow[];
}

/** How a table is shown. */
export interface TableView {
  /** -o wide: every column, not only priority 0. */
  wide?: boolean;
  /** A NAMESPACE column first (-A on a namespaced kind). */
  withNamespace?: boolean;
  /** Put before every name, `instance.cairn.dev/` when several kinds are printed. */
  namePrefix?: string;
  /** A LABELS column last (--show-labels). */
  showLabels?: boolean;
}

/** One table of the rows of several (the columns of the first): the rows of names fetched one by one. */
export function concatTables(tables: readonly ServerTable[]): ServerTable | undefined {
  if (tables.length === 0) return undefined;
  return { ...tables[0]!, rows: tables.flatMap((t) => t.rows ?? []) };
}

/** The header cells. */
export function tableHeader(columns: readonly TableColumn[], view: TableView): string[] {
  const names = shownColumns(columns, view).map((i) => columns[i]!.name.toUpperCase());
  return [...(view.withNamespace ? ['NAMESPACE'] : []), ...names, ...(view.showLabels ? ['LABELS'] : [])];
}

/** The cells of every row. */
export function tableRows(table: ServerTable, view: TableView): string[][] {
  const shown = shownColumns(table.columnDefinitions, view);
  const nameColumn = Math.max(0, table.columnDefinitions.findIndex((c) => c.format === 'name'));
  return (table.rows ?? []).map((row) => {
    const meta = row.object?.metadata ?? {};
    const cells = shown.map((i) => (i === nameColumn ? `${view.namePrefix ?? ''}${formatCell(row.cells[i])}` : formatCell(row.cells[i])));
    return [...(view.withNamespace ? [meta.namespace ?? ''] : []), ...cells, ...(view.showLabels ? [formatLabels(meta.labels)] : [])];
  });
}

/** The table as aligned text ending in a newline, or '' when it has no rows. */
export function renderTable(table: ServerTable, view: TableView, noHeaders = false): string {
  const rows = tableRows(table, view);
  if (rows.length === 0) return '';
  return `${tabwrite(noHeaders ? rows : [tableHeader(table.columnDefinitions, view), ...rows], GET_PADDING)}\n`;
}

/** A cell as kubectl prints it: nothing for null, strings cut at the first line break. */
export function formatCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') {
    const cut = value.search(/[\n\r\f]/);
    return cut < 0 ? value : `${value.slice(0, cut)}...`;
  }
  if (typeof value === 'object') return JSON.stringify(value);
  return String(value);
}

/** `a=1,b=2`, or `<none>`. */
export function formatLabels(labels: Record<string, string> | undefined): string {
  const pairs = Object.entries(labels ?? {}).map(([k, v]) => `${k}=${v}`);
  return pairs.length > 0 ? pairs.join(',') : '<none>';
}

/**
 * The table of `get -w`: the first table aligned, then each later row
 * aligned to it (a column only widens); the header waits for the first row.
 */
export class TableStream {
  private widths: number[] = [];
  private headerDue: boolean;

  constructor(
    private readonly view: TableView,
    noHeaders = false,
  ) {
    this.headerDue = !noHeaders;
  }

  /** Text for the rows of a table (the first one or a watch event's one-row table). */
  print(table: ServerTable): string {
    const rows = tableRows(table, this.view);
    if (rows.length === 0) return '';
    const lines = this.headerDue ? [tableHeader(table.columnDefinitions, this.view), ...rows] : rows;
    this.headerDue = false;
    const fresh = columnWidths(lines, GET_PADDING);
    this.widths = fresh.map((w, i) => Math.max(w, this.widths[i] ?? 0));
    return lines.map((cells) => `${formatLine(cells, this.widths)}\n`).join('');
  }
}

function shownColumns(columns: readonly TableColumn[], view: TableView): number[] {
  return columns.flatMap((c, i) => (view.wide || !c.priority ? [i] : []));
}

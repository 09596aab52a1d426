/**
 * Column alignment as Go's text/tabwriter does it for kubectl: every cell but
 * a line's last is padded to the width of its column, and a column's width
 * is shared only by consecutive lines that have a cell in it — so in
 * `describe`, the values under one heading line up without being pushed out
 * by a long key elsewhere. Pure.
 */

/** kubectl's padding between columns: 3 in `get` tables, 2 in `describe`. */
export const GET_PADDING = 3;
export const DESCRIBE_PADDING = 2;

/** Display width of a cell (code points, as tabwriter counts runes). */
export function cellWidth(text: string): number {
  return [...text].length;
}

/** Aligns lines of cells into text (no trailing newline). */
export function tabwrite(lines: readonly (readonly string[])[], padding: number): string {
  const widths: number[][] = lines.map(() => []);
  layoutColumn(lines, 0, 0, lines.length, widths, padding);
  return lines.map((cells, i) => formatLine(cells, widths[i]!)).join('\n');
}

/** One line of cells, each but the last padded to `widths[i]` (or its own width when wider). */
export function formatLine(cells: readonly string[], widths: readonly number[]): string {
  return cells.map((c, i) => (i < cells.length - 1 ? c + ' '.repeat(Math.max(0, (widths[i] ?? 0) - cellWidth(c))) : c)).join('');
}

/** Widths a set of equally shaped lines gives each padded column (for rows printed later, as in `get -w`). */
export function columnWidths(lines: readonly (readonly string[])[], padding: number): number[] {
  const widths: number[] = [];
  for (const cells of lines) cells.forEach((c, i) => (widths[i] = Math.max(widths[i] ?? 0, cellWidth(c) + padding)));
  return widths;
}

// The lines in [start, end) that have a padded cell in `column` form blocks of consecutive lines; each
// block shares one width, and the next column is laid out within each block.
function layoutColumn(lines: readonly (readonly string[])[], column: number, start: number, end: number, widths: number[][], padding: number): void {
  let i = start;
  while (i < end) {
    if (lines[i]!.length - 1 <= column) {
      i++;
      continue;
    }
    let j = i;
    let width = 0;
    for (; j < end && lines[j]!.length - 1 > column; j++) width = Math.max(width, cellWidth(lines[j]![column]!) + padding);
    for (let k = i; k < j; k++) widths[k]![column] = width;
    layoutColumn(lines, column + 1, i, j, widths, padding);
    i = j;
  }
}

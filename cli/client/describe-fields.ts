/**
 * Nested fields as `describe` prints them, kubectl's way for custom
 * resources: keys in Title Case (`nodeName` → `Node Name`, sorted), one
 * `Key:  value` line per scalar, maps indented under their key, lists of
 * scalars one item a line, lists of maps as `- ` items. Lines are cells for
 * the tabwriter, so values under one heading line up. Pure.
 */

/** One output line as tabwriter cells. */
export type Line = string[];

const ACRONYMS = new Set(['API', 'URL', 'UID', 'GUID', 'ID', 'IP']);

/** As kubectl's smartLabelFor: `observedGeneration` → `Observed Generation`; keys with `.`, `/`, digits… stay as they are. */
export function titleCase(key: string): string {
  if (!/^[A-Za-z]+$/.test(key)) return key;
  const words = key.match(/[A-Z]+(?![a-z])|[A-Z]?[a-z]+/g)!;
  return words.map((w) => (ACRONYMS.has(w.toUpperCase()) ? w.toUpperCase() : w[0]!.toUpperCase() + w.slice(1))).join(' ');
}

/** A scalar as text (strings as they are). */
export function scalarText(value: unknown): string {
  return typeof value === 'string' ? value : JSON.stringify(value);
}

/** `label` and a value that may span lines: the first beside the label, the rest under the value column. */
export function labelled(label: string, text: string): Line[] {
  const [first, ...rest] = text.split('\n');
  return [[label, first!], ...rest.map((l) => ['', l])];
}

/** The lines of a map's fields at `indent`, keys sorted; null fields are left out. */
export function fieldLines(value: Record<string, unknown>, indent: string): Line[] {
  return Object.keys(value)
    .sort()
    .flatMap((key) => valueLines(`${indent}${titleCase(key)}:`, value[key], indent));
}

function valueLines(label: string, value: unknown, indent: string): Line[] {
  if (value === null || value === undefined) return [];
  if (isEmpty(value)) return [[label, '<none>']];
  if (Array.isArray(value)) return [[label], ...value.flatMap((item) => listItemLines(item, indent))];
  if (typeof value === 'object') return [[label], ...fieldLines(value as Record<string, unknown>, `${indent}  `)];
  return labelled(label, scalarText(value));
}

// A list item: a scalar on its own line under the key, a map as a `- ` item at the key's indent.
function listItemLines(item: unknown, indent: string): Line[] {
  if (item === null || typeof item !== 'object' || Array.isArray(item) || isEmpty(item)) return [[`${indent}  ${scalarText(item)}`]];
  const lines = fieldLines(item as Record<string, unknown>, `${indent}  `);
  if (lines.length === 0) return [];
  const [first, ...rest] = lines;
  return [[`${indent}- ${first![0]!.slice(indent.length + 2)}`, ...first!.slice(1)], ...rest];
}

function isEmpty(value: unknown): boolean {
  return typeof value === 'object' && value !== null && Object.keys(value).length === 0;
}

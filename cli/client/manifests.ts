/**
 * Reading the manifests of `apply`, `diff` and `delete -f`, as kubectl's
 * resource builder does: `-f FILE|DIR|-` (repeatable), a directory's
 * .yaml/.yml/.json files in name order (subdirectories only with -R),
 * multi-document YAML (JSON is YAML), and `kind: List` expanded into its
 * items. Every object keeps where it came from, so messages can name the
 * file, the document and the line. Parsing is pure; only readManifests
 * touches the file system.
 */
import fs from 'node:fs';
import path from 'node:path';
import YAML, { LineCounter } from 'yaml';
// apimachinery's label selectors, which kubectl also evaluates on the client: a pure parser, no server state.
import { parseLabelSelector } from '../../api/label-selector.js';
import { CliError } from './errors.js';
import type { ApiObject } from './watch.js';

/** One object of the input and where it was read. */
export interface Manifest {
  /** The file as the user named it, or `STDIN`. */
  source: string;
  /** 1-based document number in the file. */
  document: number;
  /** 1-based item number when the document is a List. */
  item?: number;
  object: ApiObject;
}

/** How to read `-f` arguments. */
export interface ReadOptions {
  /** -R: descend into subdirectories. */
  recursive?: boolean;
  /** Reads standard input for `-f -` (injectable for tests). */
  readStdin?: () => string;
}

const MANIFEST_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
const REQUIRED_HINT = 'every object needs apiVersion, kind and metadata.name, e.g. apiVersion: cairn.dev/v1alpha1, kind: Instance';

/** The objects of every `-f` argument, in input order; throws a CliError naming the file on any problem. */
export function readManifests(args: string[], opts: ReadOptions = {}): Manifest[] {
  if (args.length === 0) throw new CliError('must specify -f', 'pass the manifests with -f FILE, -f DIR or -f - (standard input)');
  return args.flatMap((arg) => {
    if (arg === '-') return parseManifests((opts.readStdin ?? readStdin)(), 'STDIN');
    return manifestFiles(arg, opts.recursive ?? false).flatMap((file) => parseManifests(fs.readFileSync(file, 'utf8'), file));
  });
}

/** The files `-f arg` names: the file itself, or a directory's manifest files in name order. */
export function manifestFiles(arg: string, recursive: boolean): string[] {
  const stat = fs.statSync(arg, { throwIfNoEntry: false });
  if (!stat) throw new CliError(`the path "${arg}" does not exist`, 'check the -f argument: a file, a directory, or - for standard input');
  if (!stat.isDirectory()) return [arg];
  // As filepath.Walk: entries in name order, a subdirectory's files where its name sorts.
  return fs
    .readdirSync(arg, { withFileTypes: true })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    .flatMap((e) => {
      const full = path.join(arg, e.name);
      if (e.isDirectory()) return recursive ? manifestFiles(full, true) : [];
      return MANIFEST_EXTENSIONS.has(path.extname(e.name).toLowerCase()) ? [full] : [];
    });
}

/** The objects of one file's text; `source` names it in errors. */
export function parseManifests(text: string, source: string): Manifest[] {
  const lines = new LineCounter();
  const list = YAML.parseAllDocuments(text, { lineCounter: lines });
  // Syntax first: a broken file is reported as such, whatever its earlier documents hold.
  const error = list.flatMap((doc) => doc.errors)[0];
  if (error) {
    const at = error.linePos?.[0];
    const where = at ? ` (line ${at.line}, column ${at.col})` : '';
    throw new CliError(`error parsing "${source}"${where}: ${error.message.split(/ at line \d+|\n/)[0]}`, 'fix the YAML syntax at that line');
  }
  return list.flatMap((doc, i) => {
    const value: unknown = doc.toJS();
    if (value === null || value === undefined) return [];
    return objectsOf(value, source, i + 1, lines.linePos(doc.range[0]).line);
  });
}

// A document's objects: itself, or a List's items; each checked for the fields every object needs.
function objectsOf(value: unknown, source: string, document: number, line: number): Manifest[] {
  const where = (item?: number) => `"${source}" (document ${document}${item ? `, item ${item}` : ''}, line ${line})`;
  if (!isMapping(value)) throw new CliError(`error validating ${where()}: the document is not an object`, REQUIRED_HINT);
  if (!isList(value)) return [{ source, document, object: checked(value, where()) }];
  return (value.items as unknown[]).map((item, i) => {
    if (!isMapping(item)) throw new CliError(`error validating ${where(i + 1)}: the list item is not an object`, REQUIRED_HINT);
    return { source, document, item: i + 1, object: checked(item, where(i + 1)) };
  });
}

function checked(value: Record<string, unknown>, where: string): ApiObject {
  const missing = missingFields(value);
  if (missing.length > 0) throw new CliError(`error validating ${where}: ${missing.map((f) => `${f} not set`).join(', ')}`, REQUIRED_HINT);
  return value as unknown as ApiObject;
}

/** The manifests whose labels match `-l SELECTOR` (all of them without one), as kubectl filters its input. */
export function selectManifests(manifests: Manifest[], selector: string | undefined): Manifest[] {
  if (selector === undefined) return manifests;
  let parsed;
  try {
    parsed = parseLabelSelector(selector);
  } catch (err) {
    throw new CliError(`invalid label selector "${selector}": ${(err as Error).message}`, 'selectors look like app=web, tier!=db, env in (prod,staging)');
  }
  return manifests.filter((m) => parsed.matches(m.object.metadata.labels as Record<string, string> | undefined));
}

/**
 * The manifests a verb acts on (`-f` read, `-l` applied), refusing none at all as kubectl does: an empty
 * input or a mistyped selector must not pass for "nothing to change" (diff) or "deleted" (delete).
 */
export function manifestsFor(verb: string, files: string[], opts: { recursive?: boolean; selector?: string }): Manifest[] {
  const manifests = selectManifests(readManifests(files, { recursive: opts.recursive }), opts.selector);
  if (manifests.length === 0) throw new CliError(`no objects passed to ${verb}`, opts.selector ? `no object of the input has the labels ${opts.selector}` : 'the files hold no objects');
  return manifests;
}

/**
 * The manifests with the namespaces (Clusters, or v1 Namespaces, which are Clusters) first, the rest in
 * input order: objects before their Cluster in the input (a directory read in name order, app.yaml before
 * cluster.yaml) would otherwise fail with "namespaces ... not found".
 */
export function namespacesFirst(manifests: readonly Manifest[]): Manifest[] {
  const isNamespace = (m: Manifest) => (m.object.kind === 'Cluster' && String(m.object.apiVersion).startsWith('cairn.dev/')) || (m.object.kind === 'Namespace' && m.object.apiVersion === 'v1');
  return [...manifests.filter(isNamespace), ...manifests.filter((m) => !isNamespace(m))];
}

/** The required fields a document lacks: apiVersion, kind, metadata.name. */
export function missingFields(value: Record<string, unknown>): string[] {
  const meta = value.metadata;
  const name = isMapping(meta) ? meta.name : undefined;
  return [
    ...(typeof value.apiVersion === 'string' && value.apiVersion ? [] : ['apiVersion']),
    ...(typeof value.kind === 'string' && value.kind ? [] : ['kind']),
    ...(typeof name === 'string' && name ? [] : ['metadata.name']),
  ];
}

// kubectl expands `kind: List` and any `<Kind>List` that carries items.
function isList(value: Record<string, unknown>): boolean {
  return typeof value.kind === 'string' && value.kind.endsWith('List') && Array.isArray(value.items);
}

function isMapping(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function readStdin(): string {
  return fs.readFileSync(0, 'utf8');
}

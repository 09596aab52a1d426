/**
 * Reads the CustomResourceDefinitions in crds/ (the single source of truth
 * for Cairn's kinds) into ResourceDefinitions.
 */
import fs from 'node:fs';
import path from 'node:path';
import { CORE_SCHEMA, loadAll } from 'js-yaml';
import { packagePath } from '../api/package-files.js';
import { ALL_VERBS, type JSONSchemaProps, type PrinterColumn, type ResourceDefinition } from './resources.js';

interface CrdVersion {
  name: string;
  served: boolean;
  storage: boolean;
  schema: { openAPIV3Schema: JSONSchemaProps };
  subresources?: { status?: object };
  additionalPrinterColumns?: PrinterColumn[];
  selectableFields?: { jsonPath: string }[];
}

interface Crd {
  apiVersion: string;
  kind: string;
  spec: {
    group: string;
    scope: 'Namespaced' | 'Cluster';
    names: { kind: string; listKind?: string; plural: string; singular?: string; shortNames?: string[]; categories?: string[] };
    versions: CrdVersion[];
  };
}

/** One ResourceDefinition per served version of every CRD in `dir`. */
export function loadCrds(dir: string): ResourceDefinition[] {
  return fs
    .readdirSync(dir)
    .filter((f) => /\.ya?ml$/.test(f))
    .sort()
    .flatMap((f) => parseCrdFile(path.join(dir, f)))
    .filter((crd) => crd?.kind === 'CustomResourceDefinition')
    .flatMap(crdToDefinitions);
}

/** Each file's documents as JSON, by its text: a process may load crds/ for several servers. */
const parsedFiles = new Map<string, string>();

/**
 * The documents of one CRD file, as fresh objects on every call (callers may keep and change them).
 * js-yaml parses crds/ in about 40 ms, the yaml package in 200 (every apiserver start pays it), and
 * refuses a malformed file, naming it, where yaml would hand on what it could read. The YAML 1.2 core
 * schema, as yaml's default: a date stays a string.
 */
function parseCrdFile(file: string): Crd[] {
  const text = fs.readFileSync(file, 'utf8');
  let json = parsedFiles.get(text);
  if (json === undefined) {
    json = JSON.stringify(loadAll(text, null, { schema: CORE_SCHEMA, filename: file }));
    parsedFiles.set(text, json);
  }
  return JSON.parse(json) as Crd[];
}

/** The definitions a CRD describes. */
export function crdToDefinitions(crd: Crd): ResourceDefinition[] {
  const { group, scope, names } = crd.spec;
  return crd.spec.versions
    .filter((v) => v.served)
    .map((v) => ({
      group,
      version: v.name,
      kind: names.kind,
      listKind: names.listKind ?? `${names.kind}List`,
      plural: names.plural,
      singular: names.singular ?? names.kind.toLowerCase(),
      namespaced: scope === 'Namespaced',
      shortNames: names.shortNames ?? [],
      categories: names.categories ?? [],
      hasStatus: !!v.subresources?.status,
      schema: v.schema.openAPIV3Schema,
      printerColumns: v.additionalPrinterColumns ?? [],
      selectableFields: (v.selectableFields ?? []).map((s) => s.jsonPath.replace(/^\./, '')),
      verbs: ALL_VERBS,
    }));
}

/** The crds/ folder shipped with this package. */
export function defaultCrdDir(): string {
  const dir = packagePath('crds');
  if (!fs.existsSync(dir)) throw new Error(`${dir} not found: reinstall Cairn, or pass --crd-dir`);
  return dir;
}

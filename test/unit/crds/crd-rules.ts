/**
 * The rules crds/*.yaml must follow to install unchanged into a real
 * Kubernetes cluster (kube's structural-schema and CRD validation rules, which
 * we have no kube-apiserver here to apply) plus Cairn's own. Each check returns
 * violations, `<field path>: <what is wrong>`; none means the rule holds.
 * No I/O: the tests read crds/ and examples/ and hand the text or the parsed
 * objects in, and feed hand-made broken ones to prove each check can fail.
 */
import { isDeepStrictEqual } from 'node:util';
import type { Ajv } from 'ajv';
import YAML from 'yaml';
import type { crdToDefinitions } from '../../../apiserver/crd-loader.js';
import type { JSONSchemaProps, PrinterColumn } from '../../../apiserver/resources.js';
import { pruneUnknown } from '../../../apiserver/validation/prune.js';
import { compileValidator, createAjv } from '../../../apiserver/validation/schema-validator.js';

/** `<field path>: <what is wrong>`. */
export type Violation = string;

/** A CustomResourceDefinition as parsed from YAML (the loader's view, plus metadata). */
export type RawCrd = Parameters<typeof crdToDefinitions>[0] & { metadata?: { name?: string } };
type RawVersion = RawCrd['spec']['versions'][number];

const TYPES = ['object', 'array', 'string', 'integer', 'number', 'boolean'];
const SCALARS = ['string', 'integer', 'number', 'boolean'];
const LIST_TYPES = ['atomic', 'set', 'map'];
// The JSONSchemaProps fields apiextensions.k8s.io/v1 knows, less those it rejects (id, $schema, $ref,
// definitions, dependencies, patternProperties, additionalItems). Anything else, a misspelt keyword
// included, is an unknown field: refused by kubectl's strict field validation, or dropped.
const KEYWORDS = new Set([
  'description', 'type', 'format', 'title', 'default', 'maximum', 'exclusiveMaximum', 'minimum', 'exclusiveMinimum',
  'maxLength', 'minLength', 'pattern', 'maxItems', 'minItems', 'uniqueItems', 'multipleOf', 'enum', 'maxProperties',
  'minProperties', 'required', 'items', 'allOf', 'oneOf', 'anyOf', 'not', 'properties', 'additionalProperties',
  'externalDocs', 'example', 'nullable', 'x-kubernetes-preserve-unknown-fields', 'x-kubernetes-embedded-resource',
  'x-kubernetes-int-or-string', 'x-kubernetes-list-map-keys', 'x-kubernetes-list-type', 'x-kubernetes-map-type',
  'x-kubernetes-validations',
]);
// Constructs JavaScript regexps have and Go's RE2 (which kube validates patterns with) lacks.
const NOT_RE2 = /\(\?<?[=!]|\\[1-9]|\\k</;

// ---------------------------------------------------------------------------
// Walking a schema

/** One node of a schema and where it sits. */
interface Site {
  /** `spec.volumes[*].name`; list items are `[*]`, additionalProperties values `{*}`; '' is the root. */
  path: string;
  schema: JSONSchemaProps;
  /** The nearest enclosing list's items path, when the node is (inside) list items. */
  listItems?: string;
  /** `node` for the root's `metadata`, `inside` for what it declares. */
  metadata?: 'node' | 'inside';
}

/** Every node of `root`, parents before children, properties in declaration order. */
export function schemaSites(root: JSONSchemaProps): Site[] {
  const out: Site[] = [];
  const visit = (value: unknown, path: string, listItems: string | undefined, metadata: Site['metadata']) => {
    const schema = isSchema(value) ? value : {};
    out.push({ path, schema, listItems, metadata });
    const inner = metadata ? 'inside' : undefined;
    for (const [key, sub] of Object.entries(schema.properties ?? {})) {
      visit(sub, join(path, key), listItems, path === '' && key === 'metadata' ? 'node' : inner);
    }
    if (isSchema(schema.items)) visit(schema.items, `${path}[*]`, `${path}[*]`, inner);
    if (isSchema(schema.additionalProperties)) visit(schema.additionalProperties, `${path}{*}`, listItems, inner);
  };
  visit(root, '', undefined, undefined);
  return out;
}

function isSchema(value: unknown): value is JSONSchemaProps {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function join(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

/** How a path reads in a message. */
function at(path: string): string {
  return path || '<root>';
}

function json(value: unknown): string {
  return JSON.stringify(value);
}

function checkSites(check: (site: Site) => Violation[]): (root: JSONSchemaProps) => Violation[] {
  return (root) => schemaSites(root).flatMap(check);
}

// ---------------------------------------------------------------------------
// Schema rule groups

/** Every node has a type (or int-or-string / preserve-unknown-fields) and a description; root metadata declares only name/generateName. */
export const typeViolations = checkSites((site) => (site.metadata === 'node' ? rootMetadataViolations(site.schema) : nodeTypeViolations(site)));

function nodeTypeViolations({ path, schema, metadata }: Site): Violation[] {
  const p = at(path);
  const intOrString = schema['x-kubernetes-int-or-string'] === true;
  const preserve = schema['x-kubernetes-preserve-unknown-fields'];
  const out: Violation[] = [];
  if (path === '' && schema.type !== 'object') out.push(`${p}: type must be object at the root, not ${json(schema.type)}`);
  if (schema.type === undefined && !intOrString && preserve !== true) {
    out.push(`${p}: no type (nor x-kubernetes-int-or-string or x-kubernetes-preserve-unknown-fields)`);
  }
  if (schema.type !== undefined && !TYPES.includes(schema.type)) out.push(`${p}: type ${json(schema.type)} is not one of ${TYPES.join(', ')}`);
  if (intOrString && schema.type !== undefined) out.push(`${p}: x-kubernetes-int-or-string must not have a type`);
  if (preserve !== undefined && preserve !== true) out.push(`${p}: x-kubernetes-preserve-unknown-fields must be true or unset`);
  // kube documents ObjectMeta itself; descriptions are ours to require everywhere else.
  if (!metadata && !(typeof schema.description === 'string' && schema.description.trim())) out.push(`${p}: no description`);
  return out;
}

function rootMetadataViolations(schema: JSONSchemaProps): Violation[] {
  const out: Violation[] = [];
  if (schema.type !== 'object') out.push(`metadata: type must be object, not ${json(schema.type)}`);
  for (const key of Object.keys(schema)) {
    if (key !== 'type' && key !== 'properties') out.push(`metadata: may only have type and properties, not ${key}`);
  }
  for (const key of Object.keys(schema.properties ?? {})) {
    if (key !== 'name' && key !== 'generateName') out.push(`metadata.${key}: only name and generateName may be declared`);
  }
  return out;
}

/** properties xor additionalProperties, required names properties, enum values fit the type, items/properties only where they belong. */
export const structureViolations = checkSites(({ path, schema }) => {
  const p = at(path);
  const out: Violation[] = [];
  for (const key of Object.keys(schema)) if (!KEYWORDS.has(key)) out.push(`${p}: ${key} is not supported in a CRD schema`);
  if (schema.uniqueItems === true) out.push(`${p}: uniqueItems cannot be true`);
  if (schema.properties !== undefined && schema.additionalProperties !== undefined) out.push(`${p}: has both properties and additionalProperties`);
  if (schema.additionalProperties === false) out.push(`${p}: additionalProperties cannot be false`);
  for (const name of listOf(schema.required)) if (!schema.properties?.[String(name)]) out.push(`${p}: requires ${json(name)}, which is not a property`);
  for (const value of listOf(schema.enum)) if (!enumFits(schema, value)) out.push(`${p}: enum value ${json(value)} is not of type ${schema.type}`);
  if (schema.type === 'array' && schema.items === undefined) out.push(`${p}: array without items`);
  if (Array.isArray(schema.items as unknown)) out.push(`${p}: items must be one schema, not a list of schemas`);
  if (schema.items !== undefined && schema.type !== 'array') out.push(`${p}: items on type ${json(schema.type)}, only arrays have items`);
  if ((schema.properties !== undefined || schema.additionalProperties !== undefined) && schema.type !== 'object') {
    out.push(`${p}: properties on type ${json(schema.type)}, only objects have properties`);
  }
  return out;
});

function listOf(value: unknown): unknown[] {
  return Array.isArray(value) ? value : value === undefined ? [] : [value];
}

function enumFits(schema: JSONSchemaProps, value: unknown): boolean {
  if (value === null) return schema.nullable === true;
  if (schema['x-kubernetes-int-or-string']) return typeof value === 'string' || Number.isInteger(value);
  switch (schema.type) {
    case 'string':
      return typeof value === 'string';
    case 'integer':
      return Number.isInteger(value);
    case 'number':
      return typeof value === 'number';
    case 'boolean':
      return typeof value === 'boolean';
    case 'array':
      return Array.isArray(value);
    case 'object':
      return isSchema(value);
    default:
      return true;
  }
}

/** x-kubernetes-list-type map lists are keyed by required-or-defaulted scalar item properties; set lists hold scalars. */
export const listTypeViolations = checkSites(({ path, schema }) => {
  const p = at(path);
  const listType = schema['x-kubernetes-list-type'];
  const keys = schema['x-kubernetes-list-map-keys'];
  const out: Violation[] = [];
  if (listType !== undefined && !LIST_TYPES.includes(listType)) out.push(`${p}: x-kubernetes-list-type ${json(listType)} is not one of ${LIST_TYPES.join(', ')}`);
  if (listType !== undefined && schema.type !== 'array') out.push(`${p}: x-kubernetes-list-type on type ${json(schema.type)}, only arrays have one`);
  if (keys !== undefined && listType !== 'map') out.push(`${p}: x-kubernetes-list-map-keys without x-kubernetes-list-type map`);
  if (listType === 'map') out.push(...mapListViolations(p, schema));
  if (listType === 'set' && !SCALARS.includes(schema.items?.type ?? '')) out.push(`${p}: a set holds scalars, not ${json(schema.items?.type)} items`);
  return out;
});

function mapListViolations(p: string, schema: JSONSchemaProps): Violation[] {
  const keys = listOf(schema['x-kubernetes-list-map-keys']).map(String);
  const items = schema.items;
  if (keys.length === 0) return [`${p}: x-kubernetes-list-type map without x-kubernetes-list-map-keys`];
  if (items?.type !== 'object') return [`${p}: x-kubernetes-list-type map needs object items, not ${json(items?.type)}`];
  return keys.flatMap((key, i): Violation[] => {
    const keySchema = items.properties?.[key];
    if (keys.indexOf(key) !== i) return [`${p}: map key ${json(key)} is listed twice`];
    if (!keySchema) return [`${p}: map key ${json(key)} is not a property of the items`];
    const out: Violation[] = [];
    if (!SCALARS.includes(keySchema.type ?? '')) out.push(`${p}: map key ${json(key)} is not a scalar but ${json(keySchema.type)}`);
    if (!listOf(items.required).includes(key) && keySchema.default === undefined) out.push(`${p}: map key ${json(key)} is neither required nor defaulted`);
    return out;
  });
}

/**
 * The apiserver's validator compiles the schema; every pattern compiles (and
 * uses nothing Go's RE2 lacks); every default has no unknown fields and
 * validates against its own schema as kube checks it: as written, without
 * applying the defaults nested inside it.
 */
export function defaultAndPatternViolations(root: JSONSchemaProps): Violation[] {
  const ajv = createAjv();
  const whole = compileError(ajv, root);
  const out: Violation[] = whole ? [`<root>: the apiserver's validator cannot compile the schema: ${whole}`] : [];
  for (const { path, schema } of schemaSites(root)) {
    out.push(...patternViolations(at(path), schema.pattern));
    if (schema.default !== undefined) out.push(...defaultViolations(at(path), schema, ajv));
  }
  return out;
}

function compileError(ajv: Ajv, schema: JSONSchemaProps): string | undefined {
  try {
    compileValidator(ajv, schema);
    return undefined;
  } catch (err) {
    return (err as Error).message;
  }
}

function patternViolations(p: string, pattern: unknown): Violation[] {
  if (pattern === undefined) return [];
  if (typeof pattern !== 'string') return [`${p}: pattern ${json(pattern)} is not a string`];
  try {
    new RegExp(pattern, 'u');
  } catch (err) {
    return [`${p}: pattern ${json(pattern)} does not compile: ${(err as Error).message}`];
  }
  return NOT_RE2.test(pattern) ? [`${p}: pattern ${json(pattern)} uses lookaround or backreferences, which Go's RE2 (kube) lacks`] : [];
}

function defaultViolations(p: string, schema: JSONSchemaProps, ajv: Ajv): Violation[] {
  const value = schema.default;
  const unknown = pruneUnknown(structuredClone(value), schema, p);
  if (unknown.length > 0) return [`${p}: default ${json(value)} has unknown fields ${unknown.join(', ')}`];
  // Validated as the value of a field named by the path, so causes read like kube's: `spec.cpus in body should ...`.
  const wrapper: JSONSchemaProps = { type: 'object', properties: { [p]: withoutDefaults(schema) } };
  let causes;
  try {
    causes = compileValidator(ajv, wrapper)({ [p]: structuredClone(value) });
  } catch (err) {
    return [`${p}: default ${json(value)} cannot be checked: ${(err as Error).message}`];
  }
  return causes.map((c) => `${p}: default ${json(value)} is invalid: ${c.field === p ? '' : `${c.field}: `}${c.message}`);
}

/** `schema` with every `default` removed, so validating a default does not fill in nested ones. */
function withoutDefaults(schema: JSONSchemaProps): JSONSchemaProps {
  const { default: _ignored, ...rest } = schema;
  const out: JSONSchemaProps = { ...rest };
  if (schema.properties) out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, withoutDefaults(v)]));
  if (isSchema(schema.items)) out.items = withoutDefaults(schema.items);
  if (isSchema(schema.additionalProperties)) out.additionalProperties = withoutDefaults(schema.additionalProperties);
  return out;
}

/**
 * Cairn's rule: no `default` anywhere inside list items. Client-side
 * `kubectl apply` compares what it last applied with the defaulted object, so
 * a default inside list items makes every re-apply report "configured".
 */
export const listItemDefaultViolations = checkSites(({ path, schema, listItems }) =>
  listItems !== undefined && schema.default !== undefined
    ? [`${at(path)}: default ${json(schema.default)} inside the list items ${listItems} (client-side kubectl apply would report every re-apply as configured)`]
    : [],
);

// ---------------------------------------------------------------------------
// Resolving JSONPaths (printer columns, selectable fields) in a schema

/** What kube serves for every object's metadata, whatever the CRD declares. */
const OBJECT_META: JSONSchemaProps = {
  type: 'object',
  properties: {
    name: { type: 'string' },
    generateName: { type: 'string' },
    namespace: { type: 'string' },
    uid: { type: 'string' },
    resourceVersion: { type: 'string' },
    generation: { type: 'integer', format: 'int64' },
    creationTimestamp: { type: 'string', format: 'date-time' },
    deletionTimestamp: { type: 'string', format: 'date-time' },
    labels: { type: 'object', additionalProperties: { type: 'string' } },
    annotations: { type: 'object', additionalProperties: { type: 'string' } },
  },
};

const STEPS: [kind: 'field' | 'index' | 'filter', re: RegExp][] = [
  ['field', /^\.([A-Za-z_][A-Za-z0-9_-]*)/],
  ['index', /^\[(\d+|\*)\]/],
  ['filter', /^\[\?\(@\.([A-Za-z_][A-Za-z0-9_]*)\s*==\s*(?:"[^"]*"|'[^']*')\)\]/],
];

/** The schema node a JSONPath such as `.status.conditions[?(@.type=="Ready")].status` reaches, or why it reaches none. */
export function resolveJsonPath(root: JSONSchemaProps, jsonPath: string): { schema: JSONSchemaProps } | { error: string } {
  if (!jsonPath.startsWith('.')) return { error: 'does not start with "."' };
  let schema = root;
  let walked = '';
  for (let rest = jsonPath; rest; ) {
    const step = STEPS.map(([kind, re]) => [kind, re.exec(rest)] as const).find(([, m]) => m);
    if (!step) return { error: `cannot read ${json(rest)}` };
    const [kind, m] = step;
    const next = kind === 'field' ? child(schema, m![1]!, walked === '') : listItems(schema, kind === 'filter' ? m![1] : undefined);
    if (typeof next === 'string') return { error: `${walked || '<root>'} ${next}` };
    schema = next;
    walked += m![0];
    rest = rest.slice(m![0].length);
  }
  return { schema };
}

function child(schema: JSONSchemaProps, name: string, atRoot: boolean): JSONSchemaProps | string {
  if (atRoot && name === 'metadata') return OBJECT_META;
  const found = schema.properties?.[name] ?? (isSchema(schema.additionalProperties) ? schema.additionalProperties : undefined);
  return found ?? `has no field ${json(name)}`;
}

function listItems(schema: JSONSchemaProps, filterKey: string | undefined): JSONSchemaProps | string {
  if (schema.type !== 'array' || !schema.items) return 'is not a list';
  if (filterKey !== undefined && !schema.items.properties?.[filterKey]) return `items have no field ${json(filterKey)} to filter on`;
  return schema.items;
}

function typeOf(schema: JSONSchemaProps): string {
  if (schema['x-kubernetes-int-or-string']) return 'int-or-string';
  return schema.format ? `${schema.type} (${schema.format})` : String(schema.type);
}

// ---------------------------------------------------------------------------
// CRD rule groups

/** Columns have descriptions and resolve to fields of their type; the last one is Age. */
export function printerColumnViolations(columns: PrinterColumn[], schema: JSONSchemaProps): Violation[] {
  const last = columns.at(-1);
  const out: Violation[] = [];
  if (!last || last.name !== 'Age' || last.jsonPath !== '.metadata.creationTimestamp' || last.type !== 'date') {
    out.push(`additionalPrinterColumns: the last column is ${last ? `${last.name} (${last.jsonPath}, ${last.type})` : 'missing'}, want Age (.metadata.creationTimestamp, date)`);
  }
  columns.forEach((column, i) => out.push(...columnViolations(`additionalPrinterColumns[${i}] (${column.name})`, column, schema)));
  return out;
}

function columnViolations(p: string, column: PrinterColumn, schema: JSONSchemaProps): Violation[] {
  const out: Violation[] = [];
  if (!column.description?.trim()) out.push(`${p}: no description`);
  const found = resolveJsonPath(schema, column.jsonPath);
  if ('error' in found) return [...out, `${p}: jsonPath ${column.jsonPath} does not resolve: ${found.error}`];
  const fits = column.type === 'date' ? found.schema.type === 'string' && found.schema.format === 'date-time' : found.schema.type === column.type;
  if (!fits) out.push(`${p}: type ${column.type}, but ${column.jsonPath} is ${typeOf(found.schema)}`);
  return out;
}

/** Selectable fields are simple paths to string, integer or boolean fields (kube allows no other), at most 8, each once. */
export function selectableFieldViolations(fields: { jsonPath: string }[] | undefined, schema: JSONSchemaProps): Violation[] {
  const list = fields ?? [];
  const tooMany = list.length > 8 ? [`selectableFields: ${list.length} entries, kube allows at most 8`] : [];
  const paths = list.map((f) => f.jsonPath);
  return [...tooMany, ...paths.flatMap((jsonPath, i) => selectableFieldViolation(`selectableFields[${i}] (${jsonPath})`, jsonPath, paths.indexOf(jsonPath) !== i, schema))];
}

function selectableFieldViolation(p: string, jsonPath: string, repeated: boolean, schema: JSONSchemaProps): Violation[] {
  if (repeated) return [`${p}: listed twice`];
  if (/[[\]]/.test(jsonPath)) return [`${p}: must be a simple path, without list indexing`];
  const found = resolveJsonPath(schema, jsonPath);
  if ('error' in found) return [`${p}: does not resolve: ${found.error}`];
  if (!['string', 'integer', 'boolean'].includes(found.schema.type ?? '')) return [`${p}: is ${typeOf(found.schema)}, want string, integer or boolean`];
  return [];
}

/** crds/<file> holds exactly one CRD: `<plural>.cairn.dev`, one served and stored v1alpha1 with a status subresource, category cairn, short names, and the scope its kind needs. */
export function identityViolations(crd: RawCrd): Violation[] {
  const { group, scope, names, versions } = crd.spec;
  const scopeWanted = names.kind === 'Cluster' ? 'Cluster' : 'Namespaced';
  const out: Violation[] = [];
  const want = (ok: boolean, violation: Violation) => {
    if (!ok) out.push(violation);
  };
  want(crd.apiVersion === 'apiextensions.k8s.io/v1', `apiVersion: ${json(crd.apiVersion)}, want apiextensions.k8s.io/v1`);
  want(crd.kind === 'CustomResourceDefinition', `kind: ${json(crd.kind)}, want CustomResourceDefinition`);
  want(crd.metadata?.name === `${names.plural}.${group}`, `metadata.name: ${json(crd.metadata?.name)}, want <plural>.<group> ${json(`${names.plural}.${group}`)}`);
  want(group === 'cairn.dev', `spec.group: ${json(group)}, want cairn.dev`);
  want(scope === scopeWanted, `spec.scope: ${json(scope)}, want ${scopeWanted} (Cluster is cluster-scoped, every other kind Namespaced)`);
  want(listOf(names.categories).includes('cairn'), `spec.names.categories: ${json(names.categories)} does not include cairn`);
  want(listOf(names.shortNames).length > 0, `spec.names.shortNames: none`);
  want(versions.length === 1, `spec.versions: ${json(versions.map((v) => v.name))}, want exactly one version, v1alpha1`);
  versions.forEach((v, i) => out.push(...versionViolations(`spec.versions[${i}]`, v)));
  return out;
}

function versionViolations(p: string, v: RawVersion): Violation[] {
  const out: Violation[] = [];
  if (v.name !== 'v1alpha1') out.push(`${p}.name: ${json(v.name)}, want v1alpha1`);
  if (v.served !== true) out.push(`${p}.served: ${json(v.served)}, want true`);
  if (v.storage !== true) out.push(`${p}.storage: ${json(v.storage)}, want true`);
  if (!isDeepStrictEqual(v.subresources, { status: {} })) out.push(`${p}.subresources: ${json(v.subresources)}, want {"status":{}}`);
  return out;
}

// ---------------------------------------------------------------------------
// YAML

const YAML_11 = {
  version: '1.1',
  // kubectl's YAML decoder (go-yaml v2) keeps timestamps as strings when decoding into JSON.
  customTags: (tags: YAML.Tags) => tags.filter((t) => typeof t !== 'object' || t.tag !== 'tag:yaml.org,2002:timestamp'),
} as const;

/** The non-empty documents of a YAML stream as Cairn (YAML 1.2) reads them, and any parse errors or warnings. */
export function parseYaml(text: string, options: YAML.DocumentOptions & YAML.SchemaOptions = {}): { docs: unknown[]; problems: Violation[] } {
  const problems: Violation[] = [];
  const docs: unknown[] = [];
  YAML.parseAllDocuments(text, options).forEach((doc, i) => {
    for (const e of [...doc.errors, ...doc.warnings]) problems.push(`document ${i + 1}: ${e.message.split('\n')[0]}`);
    const value = doc.errors.length ? undefined : doc.toJS();
    if (value !== null && value !== undefined) docs.push(value);
  });
  return { docs, problems };
}

/** Parse problems, and every value kubectl (YAML 1.1: yes/no/on/off/y/n are booleans, 0755 is octal) reads differently from Cairn (YAML 1.2). */
export function yamlReadingViolations(text: string): Violation[] {
  const cairn = parseYaml(text);
  const kubectl = parseYaml(text, YAML_11);
  if (cairn.docs.length !== kubectl.docs.length) return [...cairn.problems, `${cairn.docs.length} documents for Cairn (YAML 1.2) but ${kubectl.docs.length} for kubectl (YAML 1.1)`];
  const several = cairn.docs.length > 1;
  return [
    ...cairn.problems,
    ...cairn.docs.flatMap((doc, i) => differences(doc, kubectl.docs[i], '').map((d) => (several ? `document ${i + 1}: ${d}` : d))),
  ];
}

function differences(a: unknown, b: unknown, path: string): Violation[] {
  if (isDeepStrictEqual(a, b)) return [];
  if (Array.isArray(a) && Array.isArray(b) && a.length === b.length) return a.flatMap((v, i) => differences(v, b[i], `${path}[${i}]`));
  if (isSchema(a) && isSchema(b) && isDeepStrictEqual(Object.keys(a), Object.keys(b))) {
    return Object.keys(a).flatMap((k) => differences(a[k], b[k], join(path, k)));
  }
  return [`${at(path)}: ${json(a)} for Cairn (YAML 1.2) but ${json(b)} for kubectl (YAML 1.1); quote it`];
}

/** The one CustomResourceDefinition in a crds/ file, or why there is not exactly one. */
export function crdFromYaml(text: string): { crd?: RawCrd; problems: Violation[] } {
  const { docs, problems } = parseYaml(text);
  if (problems.length > 0) return { problems };
  const crd = docs[0] as RawCrd | undefined;
  if (docs.length !== 1) return { problems: [`${docs.length} YAML documents, want exactly one CustomResourceDefinition`] };
  if (!isSchema(crd) || !isSchema(crd.spec) || !isSchema(crd.spec.names) || !Array.isArray(crd.spec.versions)) {
    return { problems: ['not a CustomResourceDefinition with spec.names and spec.versions'] };
  }
  return { crd, problems: [] };
}

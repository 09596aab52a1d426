/**
 * Compiles a kind's openAPIV3Schema with ajv and turns ajv's errors into
 * Kubernetes field errors (`spec.cpus: Invalid value: ...`), so a rejected
 * object names the field, the value, and what would be valid. Defaults
 * declared in the schema are applied while validating, as kube does.
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import addFormatsModule from 'ajv-formats';
import type { StatusCause } from '../errors.js';
import type { JSONSchemaProps } from '../resources.js';

// ajv-formats ships CommonJS; under NodeNext its default export is the module object.
const addFormats = addFormatsModule as unknown as (ajv: Ajv) => Ajv;

const kubeKeywords = [
  'x-kubernetes-preserve-unknown-fields',
  'x-kubernetes-int-or-string',
  'x-kubernetes-embedded-resource',
  'x-kubernetes-list-map-keys',
  'x-kubernetes-map-type',
  'x-kubernetes-validations',
  'x-kubernetes-group-version-kind',
];

/** A compiled validator for one kind. */
export type ObjectValidator = (obj: unknown) => StatusCause[];

/** Builds ajv once for all kinds (formats and Kubernetes extension keywords registered). */
export function createAjv(): Ajv {
  const ajv = new Ajv({ allErrors: true, useDefaults: true, strict: false, validateFormats: true });
  addFormats(ajv);
  for (const f of ['int32', 'int64', 'float', 'double', 'byte', 'quantity']) ajv.addFormat(f, true);
  for (const k of kubeKeywords) ajv.addKeyword(k);
  ajv.addKeyword({ keyword: 'x-kubernetes-list-type', type: 'array', schemaType: 'string', errors: true, validate: uniqueListItems });
  return ajv;
}

type ListTypeValidate = ((listType: string, data: unknown[], parentSchema?: JSONSchemaProps, ctx?: { instancePath: string }) => boolean) & { errors?: Partial<ErrorObject>[] };

/**
 * `x-kubernetes-list-type`: a `set` holds each value once, a `map` each combination of its
 * `x-kubernetes-list-map-keys` once, as kube enforces (422, `Duplicate value`): server-side apply merges
 * such lists by those keys, and would otherwise merge only the first of two items with the same key.
 */
const uniqueListItems: ListTypeValidate = (listType, data, parentSchema, ctx) => {
  if (listType !== 'set' && listType !== 'map') return true;
  const keys = listType === 'map' ? ((parentSchema as Record<string, unknown> | undefined)?.['x-kubernetes-list-map-keys'] as string[] | undefined) ?? [] : [];
  const identity = (item: unknown) => JSON.stringify(listType === 'set' || item === null || typeof item !== 'object' ? item : keys.map((k) => (item as Record<string, unknown>)[k]));
  const seen = new Set<string>();
  const errors: Partial<ErrorObject>[] = [];
  data.forEach((item, i) => {
    const id = identity(item);
    if (!seen.has(id)) return void seen.add(id);
    const duplicate = listType === 'set' ? item : Object.fromEntries(keys.map((k) => [k, (item as Record<string, unknown>)[k]]));
    errors.push({ keyword: 'x-kubernetes-list-type', instancePath: `${ctx?.instancePath ?? ''}/${i}`, params: { duplicate }, message: 'Duplicate value' });
  });
  uniqueListItems.errors = errors; // how ajv hears of a custom keyword's errors
  return errors.length === 0;
};

/** Compiles `schema` into a validator that applies defaults and returns field errors. */
export function compileValidator(ajv: Ajv, schema: JSONSchemaProps): ObjectValidator {
  const validate: ValidateFunction = ajv.compile(intOrStringAware(schema));
  return (obj) => (validate(obj) ? [] : (validate.errors ?? []).map((e) => toCause(e, obj)));
}

// `x-kubernetes-int-or-string` fields have no `type`; ajv accepts anything there, so give them one.
function intOrStringAware(schema: JSONSchemaProps): JSONSchemaProps {
  const out: JSONSchemaProps = { ...schema };
  if (schema['x-kubernetes-int-or-string']) {
    delete out.type;
    (out as Record<string, unknown>).anyOf = [{ type: 'integer' }, { type: 'string' }];
  }
  if (schema.properties) {
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, intOrStringAware(v)]));
  }
  if (schema.items) out.items = intOrStringAware(schema.items);
  if (schema.additionalProperties && typeof schema.additionalProperties === 'object') {
    out.additionalProperties = intOrStringAware(schema.additionalProperties);
  }
  return out;
}

/** `/spec/volumes/0/name` → `spec.volumes[0].name`. */
export function fieldPath(instancePath: string): string {
  return instancePath
    .split('/')
    .slice(1)
    .map((seg) => seg.replace(/~1/g, '/').replace(/~0/g, '~'))
    .reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), '');
}

function valueAt(obj: unknown, instancePath: string): unknown {
  let cur = obj;
  for (const seg of instancePath.split('/').slice(1)) {
    if (cur === null || typeof cur !== 'object') return undefined;
    cur = (cur as Record<string, unknown>)[seg.replace(/~1/g, '/').replace(/~0/g, '~')];
  }
  return cur;
}

function toCause(e: ErrorObject, obj: unknown): StatusCause {
  const base = fieldPath(e.instancePath);
  const value = JSON.stringify(valueAt(obj, e.instancePath));
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'required': {
      const field = base ? `${base}.${String(p.missingProperty)}` : String(p.missingProperty);
      return { reason: 'FieldValueRequired', message: 'Required value', field };
    }
    case 'enum': {
      const allowed = (p.allowedValues as unknown[]).map((v) => JSON.stringify(v)).join(', ');
      return { reason: 'FieldValueNotSupported', message: `Unsupported value: ${value}: supported values: ${allowed}`, field: base };
    }
    case 'x-kubernetes-list-type':
      return { reason: 'FieldValueDuplicate', message: `Duplicate value: ${JSON.stringify(p.duplicate)}`, field: base };
    case 'type':
      return { reason: 'FieldValueTypeInvalid', message: `Invalid value: ${value}: ${base} in body must be of type ${String(p.type)}: ${value}`, field: base };
    default:
      return { reason: 'FieldValueInvalid', message: `Invalid value: ${value}: ${base} in body ${kubeWording(e)}`, field: base };
  }
}

function kubeWording(e: ErrorObject): string {
  const p = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case 'minimum':
      return `should be greater than or equal to ${String(p.limit)}`;
    case 'maximum':
      return `should be less than or equal to ${String(p.limit)}`;
    case 'pattern':
      return `should match '${String(p.pattern)}'`;
    case 'minLength':
      return `should be at least ${String(p.limit)} chars long`;
    case 'maxLength':
      return `may not be longer than ${String(p.limit)}`;
    case 'minItems':
      return `should have at least ${String(p.limit)} items`;
    case 'maxItems':
      return `must have at most ${String(p.limit)} items`;
    case 'format':
      return `must be of type ${String(p.format)}`;
    default:
      return e.message ?? 'is invalid';
  }
}

/**
 * ObjectMeta validation as kube's apimachinery does it: names, labels,
 * annotations and finalizers, each error naming its field path.
 */
import type { StatusCause } from '../errors.js';
import type { ObjectMeta } from '../storage/codec.js';

const DNS1123_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const DNS1123_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const QUALIFIED_NAME = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;

const subdomainHelp =
  "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
const labelHelp =
  "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name', or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

/** Which rule names of a kind follow. */
/** How an object's name is checked; RBAC objects, as in kube, only as a URL path segment (`cairn:admin`). */
export type NameRule = 'dns1123-subdomain' | 'dns1123-label' | 'path-segment';

/** Field errors in `meta`, for an object whose names follow `rule`. */
export function validateMetadata(meta: ObjectMeta, rule: NameRule): StatusCause[] {
  return [
    ...validateTypes(meta),
    ...validateName(meta, rule),
    ...validateStringMap(meta.labels, 'metadata.labels', true),
    ...validateStringMap(meta.annotations, 'metadata.annotations', false),
    ...validateFinalizers(meta.finalizers),
  ];
}

// Typed clients (client-go, client-node) cannot decode an object whose metadata has the wrong shapes.
function validateTypes(meta: ObjectMeta): StatusCause[] {
  const causes: StatusCause[] = [];
  if (meta.generateName !== undefined && typeof meta.generateName !== 'string') causes.push(invalidValue('metadata.generateName', meta.generateName, 'must be a string'));
  if (meta.name !== undefined && typeof meta.name !== 'string') causes.push(invalidValue('metadata.name', meta.name, 'must be a string'));
  for (const [field, required] of [['ownerReferences', ['apiVersion', 'kind', 'name', 'uid']], ['managedFields', []]] as const) {
    const list = meta[field];
    if (list === undefined || list === null) continue;
    if (!Array.isArray(list)) {
      causes.push(invalidValue(`metadata.${field}`, list, 'must be a list of objects'));
      continue;
    }
    list.forEach((item, i) => {
      if (item === null || typeof item !== 'object' || Array.isArray(item)) causes.push(invalidValue(`metadata.${field}[${i}]`, item, 'must be an object'));
      else for (const key of required) if (typeof (item as Record<string, unknown>)[key] !== 'string') causes.push(requiredField(`metadata.${field}[${i}].${key}`));
    });
  }
  return causes;
}

function validateName(meta: ObjectMeta, rule: NameRule): StatusCause[] {
  if (!meta.name) {
    return meta.generateName ? [] : [required('metadata.name', 'name or generateName is required')];
  }
  if (rule === 'path-segment') {
    return meta.name === '.' || meta.name === '..' || /[/%]/.test(meta.name) ? [invalidValue('metadata.name', meta.name, "may not be '.' or '..' or contain '/' or '%'")] : [];
  }
  const [re, max, help] = rule === 'dns1123-label' ? [DNS1123_LABEL, 63, labelHelp] : [DNS1123_SUBDOMAIN, 253, subdomainHelp];
  const causes: StatusCause[] = [];
  if (meta.name.length > max) causes.push(invalidValue('metadata.name', meta.name, `must be no more than ${max} characters`));
  if (!re.test(meta.name)) causes.push(invalidValue('metadata.name', meta.name, help));
  return causes;
}

function validateStringMap(map: unknown, path: string, isLabels: boolean): StatusCause[] {
  if (map === undefined || map === null) return [];
  if (typeof map !== 'object' || Array.isArray(map)) return [invalidValue(path, map, 'must be a map of string keys to string values')];
  const causes: StatusCause[] = [];
  for (const [key, value] of Object.entries(map as Record<string, unknown>)) {
    causes.push(...validateQualifiedName(key, path));
    if (typeof value !== 'string') causes.push(invalidValue(`${path}.${key}`, value, 'must be a string'));
    else if (isLabels && (value.length > 63 || !LABEL_VALUE.test(value))) {
      causes.push(invalidValue(`${path}`, value, "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character, at most 63 characters"));
    }
  }
  if (!isLabels && totalBytes(map as Record<string, unknown>) > 256 * 1024) {
    causes.push({ reason: 'FieldValueTooLong', message: 'Too long: must have at most 262144 bytes', field: path });
  }
  return causes;
}

function validateFinalizers(finalizers: unknown): StatusCause[] {
  if (finalizers === undefined || finalizers === null) return [];
  if (!Array.isArray(finalizers)) return [invalidValue('metadata.finalizers', finalizers, 'must be a list of strings')];
  return finalizers.flatMap((f, i) =>
    typeof f === 'string' ? validateQualifiedName(f, `metadata.finalizers[${i}]`) : [invalidValue(`metadata.finalizers[${i}]`, f, 'must be a string')],
  );
}

function totalBytes(map: Record<string, unknown>): number {
  return Object.entries(map).reduce((n, [k, v]) => n + Buffer.byteLength(k) + Buffer.byteLength(String(v)), 0);
}

/** Errors for a `prefix/name` key (labels, annotations, finalizers). */
export function validateQualifiedName(key: string, path: string): StatusCause[] {
  const slash = key.lastIndexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : '';
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const ok =
    name.length > 0 && name.length <= 63 && QUALIFIED_NAME.test(name) &&
    (slash < 0 || (prefix.length > 0 && prefix.length <= 253 && DNS1123_SUBDOMAIN.test(prefix)));
  return ok
    ? []
    : [invalidValue(path, key, "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', or 'my.name', or '123-abc'), with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')")];
}

function requiredField(field: string): StatusCause {
  return { reason: 'FieldValueRequired', message: 'Required value', field };
}

function required(field: string, detail: string): StatusCause {
  return { reason: 'FieldValueRequired', message: `Required value: ${detail}`, field };
}

function invalidValue(field: string, value: unknown, detail: string): StatusCause {
  return { reason: 'FieldValueInvalid', message: `Invalid value: ${JSON.stringify(value)}: ${detail}`, field };
}

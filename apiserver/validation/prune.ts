/**
 * Structural pruning (apiextensions' "pruning"): fields a CRD schema does not
 * declare are removed, and their paths reported so `fieldValidation=Strict`
 * can reject them and `Warn` can warn about them.
 */
import { declaredProperty, type JSONSchemaProps } from '../resources.js';

/** Removes undeclared fields from `value` in place; returns their paths (`spec.foo`, `spec.items[0].bar`). */
export function pruneUnknown(value: unknown, schema: JSONSchemaProps, path = ''): string[] {
  if (schema['x-kubernetes-preserve-unknown-fields'] && !schema.properties) return [];
  if (Array.isArray(value)) {
    return schema.items ? value.flatMap((v, i) => pruneUnknown(v, schema.items!, `${path}[${i}]`)) : [];
  }
  if (value === null || typeof value !== 'object') return [];
  const obj = value as Record<string, unknown>;
  const unknown: string[] = [];
  for (const key of Object.keys(obj)) {
    const child = childPath(path, key);
    const sub = declaredProperty(schema, key) ?? additional(schema);
    // kube drops nulls of non-nullable fields, so a bare `field:` in YAML means "unset" (and gets the default).
    if (sub && obj[key] === null && !sub.nullable) delete obj[key];
    else if (sub) unknown.push(...pruneUnknown(obj[key], sub, child));
    else if (!schema['x-kubernetes-preserve-unknown-fields'] && !embeddedMeta(schema, key)) {
      delete obj[key];
      unknown.push(child);
    }
  }
  return unknown;
}

function additional(schema: JSONSchemaProps): JSONSchemaProps | undefined {
  const ap = schema.additionalProperties;
  if (ap === true) return {} as JSONSchemaProps;
  return ap && typeof ap === 'object' ? ap : undefined;
}

function embeddedMeta(schema: JSONSchemaProps, key: string): boolean {
  return !!schema['x-kubernetes-embedded-resource'] && ['apiVersion', 'kind', 'metadata'].includes(key);
}

function childPath(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

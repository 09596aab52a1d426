/**
 * Admission of an object's content: prune undeclared fields (rejecting them
 * under fieldValidation=Strict, warning under Warn), apply schema defaults,
 * and validate schema and metadata, failing with 422 and field-path causes.
 */
import { ApiError, badRequest, invalid, type StatusCause } from '../errors.js';
import type { ResourceDefinition } from '../resources.js';
import type { KubeObject } from '../storage/codec.js';
import { kindRuleCauses, normalizeKind } from './kind-rules.js';
import { shapeProblem } from './limits.js';
import { validateMetadata, type NameRule } from './metadata.js';
import { pruneUnknown } from './prune.js';
import type { ObjectValidator } from './schema-validator.js';

/** The `fieldValidation` query parameter. */
export type FieldValidation = 'Strict' | 'Warn' | 'Ignore';

const META_FIELDS = new Set([
  'name', 'generateName', 'namespace', 'uid', 'resourceVersion', 'generation', 'creationTimestamp',
  'deletionTimestamp', 'deletionGracePeriodSeconds', 'labels', 'annotations', 'ownerReferences',
  'finalizers', 'managedFields', 'selfLink',
]);

/** Parses `fieldValidation`, defaulting to Warn as kube does. */
export function parseFieldValidation(value: unknown): FieldValidation {
  if (value === undefined || value === '') return 'Warn';
  if (value === 'Strict' || value === 'Warn' || value === 'Ignore') return value;
  throw badRequest(`fieldValidation: unsupported value ${JSON.stringify(value)}: supported values: "Strict", "Warn", "Ignore"`);
}

/** Checks and defaults `obj` in place (`old`: the stored object it updates); returns warnings (unknown fields under Warn). */
export function admitObject(def: ResourceDefinition, validator: ObjectValidator, obj: KubeObject, mode: FieldValidation, old?: KubeObject): string[] {
  checkShape(def, obj);
  const unknown = pruneBody(def, obj);
  if (unknown.length > 0 && mode === 'Strict') {
    const list = unknown.map((f) => `unknown field "${f}"`).join(', ');
    throw new ApiError(400, 'BadRequest', `${def.kind} in version "${def.version}" cannot be handled as a ${def.kind}: strict decoding error: ${list}`, {
      causes: unknown.map((f) => ({ reason: 'FieldValueInvalid', message: `unknown field "${f}"`, field: f })),
    });
  }
  normalizeKind(def, obj);
  const schemaCauses = validator(obj);
  // Kind rules read defaulted, schema-valid fields.
  const ruleCauses = schemaCauses.length === 0 ? kindRuleCauses(def, obj, old) : [];
  const causes = onePerField([...schemaCauses, ...ruleCauses, ...validateMetadata(obj.metadata, nameRule(def))]);
  if (causes.length > 0) throw invalid(def.kind, def.group, obj.metadata.name ?? obj.metadata.generateName ?? '', causes);
  return mode === 'Warn' ? unknown.map((f) => `unknown field "${f}"`) : [];
}

// First: every later step walks the object recursively, and an object stored too deep would break
// every later read and patch of it (a poison object).
function checkShape(def: ResourceDefinition, obj: KubeObject): void {
  const problem = shapeProblem(obj);
  if (!problem) return;
  const field = problem.path.replace(/^\./, '');
  throw invalid(def.kind, def.group, obj.metadata?.name ?? '', [{ reason: 'FieldValueInvalid', field, message: `Invalid value: ${problem.message}; flatten the object` }]);
}

// The schema and the metadata rules can both reject one field (a Cluster's name); report it once.
function onePerField(causes: StatusCause[]): StatusCause[] {
  const seen = new Set<string>();
  return causes.filter((c) => !c.field || (!seen.has(c.field) && !!seen.add(c.field)));
}

function pruneBody(def: ResourceDefinition, obj: KubeObject): string[] {
  const { metadata, ...rest } = obj;
  const unknown = pruneUnknown(rest, def.schema);
  for (const key of Object.keys(obj)) if (key !== 'metadata' && !(key in rest)) delete obj[key];
  for (const key of Object.keys(metadata)) {
    if (!META_FIELDS.has(key)) {
      delete metadata[key];
      unknown.push(`metadata.${key}`);
    }
  }
  return unknown;
}

/** The rule a kind's names follow: a Cluster's name is also a namespace name, so it must be a DNS label. */
export function nameRule(def: ResourceDefinition): NameRule {
  if (def.group === 'rbac.authorization.k8s.io') return 'path-segment';
  return def.kind === 'Cluster' && def.group === 'cairn.dev' ? 'dns1123-label' : 'dns1123-subdomain';
}

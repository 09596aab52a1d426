/**
 * Per-kind rules beyond the schema (what a CRD would state as
 * x-kubernetes-validations): Cairn's own kinds, checked after the schema
 * has applied its defaults. On an update the old object is passed, so a
 * kind's rules can ratchet (check only what changed) and forbid changes.
 */
import { volumeSpecProblems } from '../../api/volume-rules.js';
import type { VolumeSpec } from '../../api/volume.js';
import type { StatusCause } from '../errors.js';
import type { ResourceDefinition } from '../resources.js';
import type { KubeObject } from '../storage/codec.js';
import { configMapCauses, normalizeSecret, secretCauses } from './config-data.js';
import { tokenCauses } from './token-rules.js';

type KindRules = (obj: KubeObject, old: KubeObject | undefined) => StatusCause[];

const RULES: Partial<Record<string, KindRules>> = {
  'cairn.dev/Volume': (obj, old) =>
    !obj.spec || typeof obj.spec !== 'object' ? [] : volumeSpecProblems(obj.spec as VolumeSpec, old?.spec as VolumeSpec | undefined).map((p) => ({
      reason: 'FieldValueInvalid',
      field: p.field,
      message: `Invalid value: ${JSON.stringify(valueAt(obj, p.field))}: ${p.message}`,
    })),
  '/Secret': secretCauses,
  '/ConfigMap': configMapCauses,
  'auth.cairn.dev/Token': tokenCauses,
};

// What a kind's own conversion does to a written object before it is checked (kube folds stringData into data).
const NORMALIZE: Partial<Record<string, (obj: KubeObject) => void>> = {
  '/Secret': normalizeSecret,
};

/** Brings a written object into its stored form, in place, for kinds that have one. */
export function normalizeKind(def: ResourceDefinition, obj: KubeObject): void {
  NORMALIZE[`${def.group}/${def.kind}`]?.(obj);
}

/** The field causes `obj` breaks under its kind's rules (none for kinds without any). */
export function kindRuleCauses(def: ResourceDefinition, obj: KubeObject, old?: KubeObject): StatusCause[] {
  return RULES[`${def.group}/${def.kind}`]?.(obj, old) ?? [];
}

// `spec.options[cluster.quorum-type]` → obj.spec.options['cluster.quorum-type'].
function valueAt(obj: KubeObject, field: string): unknown {
  const parts = field.match(/[^.[\]]+(?=\.|\[|$)|\[[^\]]+\]/g) ?? [];
  return parts.reduce<unknown>((v, p) => (v && typeof v === 'object' ? (v as Record<string, unknown>)[p.replace(/^\[|\]$/g, '')] : undefined), obj);
}

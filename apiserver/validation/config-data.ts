/**
 * What kube's Secret and ConfigMap strategies do beyond the schema:
 * `stringData` folded into `data` (and never stored), `type` defaulted to
 * Opaque, key names and base64 values checked, the 1 MiB limit on the data,
 * and `immutable: true` holding the data fixed. Pure.
 */
import { isDeepStrictEqual } from 'node:util';
import type { StatusCause } from '../errors.js';
import type { KubeObject } from '../storage/codec.js';

// kube's IsConfigMapKey: a file name that is not . or ..
const KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
/** kube's MaxSecretSize, which it applies to ConfigMaps too. */
export const MAX_DATA_BYTES = 1024 * 1024;

type StringMap = Record<string, string>;

/** Folds a Secret's `stringData` into `data` (stringData wins) and defaults its type, in place, as kube's conversion does. */
export function normalizeSecret(obj: KubeObject): void {
  const stringData = obj.stringData as StringMap | undefined | null;
  if (stringData && typeof stringData === 'object') {
    const data: StringMap = { ...((obj.data as StringMap | undefined) ?? {}) };
    for (const [k, v] of Object.entries(stringData)) data[k] = Buffer.from(String(v)).toString('base64');
    obj.data = data;
  }
  delete obj.stringData;
  if (!obj.type) obj.type = 'Opaque';
}

/** The field causes of a Secret (`old`: the stored one, on an update). */
export function secretCauses(obj: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const data = (obj.data ?? {}) as StringMap;
  const causes = [...keyCauses('data', data), ...base64Causes('data', data), ...sizeCauses('data', decodedBytes(data))];
  if (old && old.type !== undefined && obj.type !== old.type) causes.push({ reason: 'FieldValueInvalid', field: 'type', message: `Invalid value: ${JSON.stringify(obj.type)}: field is immutable` });
  return [...causes, ...immutableCauses(obj, old, ['data'])];
}

/** The field causes of a ConfigMap (`old`: the stored one, on an update). */
export function configMapCauses(obj: KubeObject, old: KubeObject | undefined): StatusCause[] {
  const data = (obj.data ?? {}) as StringMap;
  const binary = (obj.binaryData ?? {}) as StringMap;
  const both = Object.keys(binary).filter((k) => k in data);
  const bytes = Object.values(data).reduce((n, v) => n + Buffer.byteLength(v), 0) + decodedBytes(binary);
  return [
    ...keyCauses('data', data),
    ...keyCauses('binaryData', binary),
    ...base64Causes('binaryData', binary),
    ...both.map((k) => ({ reason: 'FieldValueDuplicate', field: `binaryData[${k}]`, message: `Duplicate value: ${JSON.stringify(k)}: a key may be in data or in binaryData, not both` })),
    ...sizeCauses('data', bytes),
    ...immutableCauses(obj, old, ['data', 'binaryData']),
  ];
}

function keyCauses(field: string, map: StringMap): StatusCause[] {
  return Object.keys(map)
    .filter((k) => !KEY.test(k) || k === '.' || k === '..' || k.length > 253)
    .map((k) => ({
      reason: 'FieldValueInvalid',
      field: `${field}[${k}]`,
      message: `Invalid value: ${JSON.stringify(k)}: a valid key must consist of alphanumeric characters, '-', '_' or '.' (at most 253, not . or ..), e.g. 'key.name' or 'KEY_NAME'`,
    }));
}

function base64Causes(field: string, map: StringMap): StatusCause[] {
  return Object.entries(map)
    .filter(([, v]) => typeof v !== 'string' || !BASE64.test(v))
    .map(([k]) => ({ reason: 'FieldValueInvalid', field: `${field}[${k}]`, message: 'Invalid value: the value must be base64 encoded (use stringData for plain text)' }));
}

function sizeCauses(field: string, bytes: number): StatusCause[] {
  if (bytes <= MAX_DATA_BYTES) return [];
  return [{ reason: 'FieldValueTooLong', field, message: `Too long: must have at most ${MAX_DATA_BYTES} bytes, not ${bytes}; keep large data out of the API (a Volume holds files)` }];
}

function immutableCauses(obj: KubeObject, old: KubeObject | undefined, fields: string[]): StatusCause[] {
  if (old?.immutable !== true) return [];
  const causes: StatusCause[] = fields
    .filter((f) => !isDeepStrictEqual(obj[f] ?? {}, old[f] ?? {}))
    .map((f) => ({ reason: 'FieldValueForbidden', field: f, message: 'Forbidden: field is immutable when `immutable` is set; delete and recreate the object to change it' }));
  if (obj.immutable !== true) causes.push({ reason: 'FieldValueForbidden', field: 'immutable', message: 'Forbidden: field is immutable when `immutable` is set' });
  return causes;
}

function decodedBytes(map: StringMap): number {
  return Object.values(map).reduce((n, v) => n + Math.floor((String(v).length * 3) / 4), 0);
}

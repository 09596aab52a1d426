/**
 * Binary quantities as Cairn's CRDs write them: digits with an optional Ki,
 * Mi, Gi or Ti suffix ("64Mi"; bare digits are bytes). A deliberately small
 * subset of Kubernetes' resource.Quantity, enough for memory and storage.
 */
import type { Quantity } from './types.js';

/** The pattern every quantity field of the CRDs carries. */
export const QUANTITY_PATTERN = /^[0-9]+(Ki|Mi|Gi|Ti)?$/;

const UNITS: ReadonlyArray<readonly [string, number]> = [
  ['Ti', 2 ** 40],
  ['Gi', 2 ** 30],
  ['Mi', 2 ** 20],
  ['Ki', 2 ** 10],
];

/** Bytes a quantity stands for; throws on a malformed or unsafe-integer value. */
export function parseQuantity(q: Quantity): number {
  const m = QUANTITY_PATTERN.exec(q);
  if (!m) throw new Error(`invalid quantity "${q}": expected digits with an optional Ki, Mi, Gi or Ti suffix`);
  const unit = UNITS.find(([suffix]) => suffix === m[1]);
  const bytes = Number(q.slice(0, q.length - (m[1]?.length ?? 0))) * (unit ? unit[1] : 1);
  if (!Number.isSafeInteger(bytes)) throw new Error(`quantity "${q}" is too large`);
  return bytes;
}

/** The shortest exact quantity for a number of bytes, e.g. 67108864 → "64Mi". */
export function formatQuantity(bytes: number): Quantity {
  if (!Number.isSafeInteger(bytes) || bytes < 0) throw new Error(`cannot format ${bytes} bytes as a quantity`);
  for (const [suffix, size] of UNITS) {
    if (bytes > 0 && bytes % size === 0) return `${bytes / size}${suffix}`;
  }
  return String(bytes);
}

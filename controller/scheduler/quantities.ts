/**
 * Quantities as the scheduler reads them. The CRDs validate their pattern,
 * but a value can still be too large to be exact; such a value is a
 * permanent error in one object's spec or status, so it is reported naming
 * that object and field rather than as a bare parse failure.
 */
import { parseQuantity } from '../../api/quantity.js';
import type { Quantity } from '../../api/types.js';

/** A quantity in an object the scheduler read does not parse; fix the named field. */
export class InvalidQuantityError extends Error {
  override readonly name = 'InvalidQuantityError';

  constructor(
    readonly field: string,
    cause: unknown,
  ) {
    super(`${field}: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
  }
}

/** Bytes of a quantity; `field` names where it came from (e.g. `Instance ns/a spec.memory`) for the error. */
export function bytesOf(quantity: Quantity, field: string): number {
  try {
    return parseQuantity(quantity);
  } catch (err) {
    throw new InvalidQuantityError(field, err);
  }
}

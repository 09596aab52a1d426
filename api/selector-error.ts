/**
 * The one error type label and field selector parsing may throw, so request
 * handlers can map it to a 400 BadRequest without catching anything else.
 */

/** A label or field selector that does not parse; the message uses apimachinery's wording. */
export class SelectorError extends Error {
  override readonly name = 'SelectorError';

  /** Creates the error; `cause` keeps any underlying failure for debugging. */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

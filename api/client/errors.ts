/**
 * Errors from the apiserver as client code needs to tell them apart:
 * client-node throws ApiException with the HTTP code and the Status body
 * (sometimes as text); this turns either into one named error.
 */

/** A failed API call: HTTP code, Status reason and message. */
export class ApiStatusError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: unknown,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = 'ApiStatusError';
  }
}

interface StatusBody {
  reason?: string;
  message?: string;
  details?: unknown;
}

function parseBody(body: unknown): StatusBody {
  if (typeof body === 'string') {
    try {
      return JSON.parse(body) as StatusBody;
    } catch {
      return { message: body };
    }
  }
  return body && typeof body === 'object' ? (body as StatusBody) : {};
}

/** Converts anything a client-node call threw into an ApiStatusError when it carries an HTTP code. */
export function toApiError(err: unknown): unknown {
  if (err instanceof ApiStatusError) return err;
  const { code: c, statusCode: sc } = (err ?? {}) as { code?: unknown; statusCode?: unknown };
  const code = typeof c === 'number' ? c : sc;
  if (typeof code !== 'number') return err;
  const status = parseBody((err as { body?: unknown }).body);
  const message = status.message ?? (err as Error).message ?? `HTTP ${code}`;
  return new ApiStatusError(code, status.reason ?? String(code), message, status.details, { cause: err });
}

/** HTTP code of an API error, or undefined for other errors (network, bugs). */
export function statusCodeOf(err: unknown): number | undefined {
  const e = toApiError(err);
  return e instanceof ApiStatusError ? e.code : undefined;
}

/** Whether the object does not exist (404). */
export const isNotFound = (err: unknown): boolean => statusCodeOf(err) === 404;
/** Whether a write lost an optimistic-concurrency race or the object already exists (409). */
export const isConflict = (err: unknown): boolean => statusCodeOf(err) === 409;
/** Whether a watch or list asked for a resourceVersion that was compacted away (410). */
export const isGone = (err: unknown): boolean => statusCodeOf(err) === 410;

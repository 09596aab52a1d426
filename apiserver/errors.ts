/**
 * Errors the API returns, each rendered as a Kubernetes `Status` with the
 * matching HTTP code and reason (API.md "Errors"). Handlers throw these;
 * the HTTP layer turns any of them into a response, and anything else into a
 * 500 that is logged (a 500 is always a bug in Cairn).
 */

/** One field-level cause of an Invalid or BadRequest error. */
export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

/** What the error is about, for the Status `details`. */
export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

/** An error with an HTTP code and a Kubernetes reason. */
export class ApiError extends Error {
  constructor(
    readonly code: number,
    readonly reason: string,
    message: string,
    readonly details?: StatusDetails,
  ) {
    super(message);
    this.name = 'ApiError';
  }

  /** The `meta/v1 Status` body for this error. */
  toStatus(): Record<string, unknown> {
    const status: Record<string, unknown> = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    if (this.details) status.details = this.details;
    return status;
  }
}

/** `<plural>.<group>` as kube names a resource in messages (`instances.cairn.dev`). */
export function qualifiedResource(plural: string, group: string): string {
  return group ? `${plural}.${group}` : plural;
}

/** 404 for an object. */
export function notFound(plural: string, group: string, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(plural, group)} "${name}" not found`, { name, group, kind: plural });
}

/** 409 AlreadyExists for a create of an existing name. */
export function alreadyExists(plural: string, group: string, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(plural, group)} "${name}" already exists`, { name, group, kind: plural });
}

/** 409 Conflict for a stale resourceVersion or a failed precondition. */
export function conflict(plural: string, group: string, name: string, why: string): ApiError {
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(plural, group)} "${name}": ${why}`,
    { name, group, kind: plural },
  );
}

/** 422 Invalid with one cause per field. */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): ApiError {
  const list = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const summary = list.length === 1 ? list[0] : `[${list.join(', ')}]`;
  return new ApiError(422, 'Invalid', `${kind}${group ? '.' + group : ''} "${name}" is invalid: ${summary}`, {
    name,
    group,
    kind,
    causes,
  });
}

/**
 * 504 for a resourceVersion this store has not reached (kube's "Too large resource version"): client-go
 * then lists again without one, instead of taking an older state for a newer.
 */
export function tooLargeResourceVersion(asked: number, current: number | string): ApiError {
  return new ApiError(504, 'Timeout', `Too large resource version: ${asked}, current: ${current}`, { causes: [{ reason: 'ResourceVersionTooLarge', message: 'Too large resource version' }], retryAfterSeconds: 1 });
}

/** 400 BadRequest. */
export function badRequest(message: string, causes?: StatusCause[]): ApiError {
  return new ApiError(400, 'BadRequest', message, causes ? { causes } : undefined);
}

/** 410 Expired: a resourceVersion or continue token older than the last compaction. */
export function expired(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

/** 405 MethodNotAllowed for a verb a resource does not support. */
export function methodNotAllowed(message: string): ApiError {
  return new ApiError(405, 'MethodNotAllowed', message);
}

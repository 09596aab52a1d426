/**
 * Failures of agent operations as the operator reads them in a WorkItem's
 * status.lastError: a reason from ERROR_REASONS, a message saying what failed
 * where, and a hint saying how to fix it. Drivers throw OperationError; the
 * worker turns anything else (errno errors, bugs) into one with classify().
 * Pure: no I/O, so both the worker and the agent process may use it.
 */
import type { ErrorReason, WorkItemError } from '../../api/workitem.js';

/** A failed operation with its ErrorReason and a how-to-fix hint. */
export class OperationError extends Error {
  override readonly name = 'OperationError';

  constructor(
    readonly reason: ErrorReason,
    message: string,
    readonly hint?: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }

  /** The shape of WorkItemStatus.lastError. */
  toWorkItemError(operationId?: string, time?: string): WorkItemError {
    return {
      reason: this.reason,
      message: this.message,
      ...(this.hint !== undefined ? { hint: this.hint } : {}),
      ...(operationId !== undefined ? { operationId } : {}),
      ...(time !== undefined ? { time } : {}),
    };
  }
}

/** Where a failure happened, for messages and hints. */
export interface FailureContext {
  /** What the agent was doing, e.g. "creating replica data-0". */
  doing: string;
  node: string;
  path?: string;
}

/** Reasons that retrying the same spec cannot fix; the agent should wait for a spec change instead. */
const PERMANENT: ReadonlySet<ErrorReason> = new Set<ErrorReason>(['InvalidSpec', 'DriverUnavailable']);

/** Whether an operation that failed for this reason is worth retrying with backoff. */
export function isRetryable(reason: ErrorReason): boolean {
  return !PERMANENT.has(reason);
}

function errnoCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? code : undefined;
}

function errnoReason(code: string | undefined): ErrorReason {
  switch (code) {
    case 'ENOSPC':
    case 'EDQUOT':
      return 'NoSpace';
    case 'EACCES':
    case 'EPERM':
    case 'EROFS':
      return 'PermissionDenied';
    case 'ENOENT':
      return 'NotFound';
    case 'ETIMEDOUT':
      return 'Timeout';
    default:
      return 'Unknown';
  }
}

/** The operator's fix for a reason, in the words of the context. */
export function hintFor(reason: ErrorReason, ctx: FailureContext): string {
  const where = ctx.path ?? 'the data dir';
  switch (reason) {
    case 'NoSpace':
      return `free space on the filesystem of ${where} on node ${ctx.node}, or lower the requested size`;
    case 'PermissionDenied':
      return `the agent on node ${ctx.node} may not write ${where}: check its ownership and mode, and that the filesystem is not read-only`;
    case 'NotFound':
      return `${where} does not exist on node ${ctx.node}: create it or fix the path in the spec`;
    case 'Timeout':
      return `check why ${ctx.doing} is slow on node ${ctx.node}, or raise spec.timeoutSeconds of the WorkItem`;
    default:
      return `see the agent log on node ${ctx.node} for details`;
  }
}

/** Any thrown value as an OperationError: OperationErrors pass through, errno errors get their reason and hint. */
export function classify(err: unknown, ctx: FailureContext): OperationError {
  if (err instanceof OperationError) return err;
  const reason = errnoReason(errnoCode(err));
  const detail = err instanceof Error ? err.message : String(err);
  return new OperationError(reason, `${ctx.doing} on node ${ctx.node} failed: ${detail}`, hintFor(reason, ctx), { cause: err });
}

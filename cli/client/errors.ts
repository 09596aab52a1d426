/**
 * How the client verbs report failure, in kubectl's words: an API error is
 * `Error from server (NotFound): instances.cairn.dev "web" not found`, a
 * refused connection names the server, anything the user got wrong is
 * `error: ...` with a hint. Every failure exits non-zero.
 */
import { ApiStatusError, toApiError } from '../../api/client/errors.js';

/** A failure the user can fix: a message, a hint, and the exit code. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly hint?: string,
    readonly exitCode = 1,
  ) {
    super(message);
    this.name = 'CliError';
  }
}

/** The exit code of a failed command. */
export function exitCodeOf(err: unknown): number {
  return err instanceof CliError ? err.exitCode : 1;
}

/** The text a failed command prints on stderr. */
export function formatError(err: unknown, server?: string): string {
  const e = toApiError(err);
  if (e instanceof ApiStatusError) return `Error from server (${e.reason}): ${e.message}`;
  if (e instanceof CliError) return `error: ${e.message}${e.hint ? `\nhint: ${e.hint}` : ''}`;
  const code = (e as { code?: string; cause?: { code?: string } })?.cause?.code ?? (e as { code?: string })?.code;
  if (code === 'ECONNREFUSED' && server) return `The connection to the server ${server} was refused - did you specify the right host or port?`;
  if (code === 'ENOTFOUND' && server) return `Unable to connect to the server ${server}: no such host`;
  return `error: ${(e as Error)?.message ?? String(e)}`;
}

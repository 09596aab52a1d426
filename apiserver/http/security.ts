/**
 * The three checks every request passes before it is served: who sent it
 * (401 when nobody), whether they may (403 naming the identity, verb and
 * resource), and, once answered, an audit entry when it could change state.
 */
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import { ApiError } from '../errors.js';
import { createdName } from '../audit/created-name.js';
import type { AuditSink } from '../audit/audit-sink.js';
import { MUTATING_VERBS, type RequestAttributes } from '../auth/attributes.js';
import type { Authenticator } from '../auth/authenticator.js';
import { forbidden, type Authorizer, type WriteAdmission } from '../auth/authorizer.js';
import { impersonatedUser } from '../auth/impersonation.js';
import type { UserInfo } from '../auth/user.js';

/** Authentication, authorization and audit of one apiserver process. */
export interface Security {
  authenticator: Authenticator;
  authorizer: Authorizer;
  audit: AuditSink;
}

/** The 401 for a missing or unknown token. */
export function unauthorized(why = 'send a valid bearer token (see the admin.kubeconfig in the server data dir, or cairn user create)'): ApiError {
  return new ApiError(401, 'Unauthorized', `Unauthorized: ${why}`);
}

/**
 * The user the request acts as: its token's (401 when the token is missing, unknown, expired or
 * revoked), or the one its Impersonate-* headers name, when its token's user may impersonate (403 else,
 * audited under the caller's own name: an attempt to act as someone else is worth a line, read or write).
 */
export async function authenticateRequest(sec: Security, headers: IncomingHttpHeaders, path: string): Promise<UserInfo> {
  const r = await sec.authenticator.authenticate(headers.authorization);
  if (!r) throw unauthorized();
  if ('refused' in r) throw unauthorized(r.refused);
  try {
    return await impersonatedUser(sec.authorizer, r.user, headers);
  } catch (err) {
    if (err instanceof ApiError && err.code === 403) {
      const target = headers['impersonate-user'];
      recordAudit(sec, { user: r.user, verb: 'impersonate', resource: { apiGroup: '', resource: 'users', ...(typeof target === 'string' ? { name: target } : {}) } }, path, 403);
    }
    throw err;
  }
}

/** How often a long-lived connection (a node's tunnel, a console, a followed log) checks that it may go on. */
const TOKEN_RECHECK_MS = 5_000;

/**
 * Calls `end` once `ended()` gives the reason a long-lived connection may go on no longer, asked every
 * TOKEN_RECHECK_MS. A check that fails (a lookup error) ends nothing; an `end` that throws is logged by
 * nobody and asked again no more, so it must close its connection without throwing. Returns the stop.
 */
export function endWhen(ended: () => Promise<string | undefined>, end: (why: string) => void): () => void {
  let stopped = false;
  const stop = () => {
    stopped = true;
    clearInterval(timer);
  };
  const check = async () => {
    const why = await ended();
    if (stopped || why === undefined) return;
    stop();
    end(why);
  };
  const timer = setInterval(() => void check().catch(() => undefined), TOKEN_RECHECK_MS);
  timer.unref();
  return stop;
}

/** Why the bearer token of `headers` authenticates no more (revoked, deleted, expired); undefined while it does. */
export async function tokenEnded(sec: Security, headers: IncomingHttpHeaders): Promise<string | undefined> {
  const r = await sec.authenticator.authenticate(headers.authorization);
  if (r && 'user' in r) return undefined;
  return r ? r.refused : 'its token is no longer known (deleted)';
}

/**
 * Ends a long-lived connection once the token it was opened with no longer authenticates: `cairn token
 * revoke` ends a console or a followed log as it ends the token's next request.
 */
export function endWhenTokenEnds(sec: Security, headers: IncomingHttpHeaders, end: (why: string) => void): () => void {
  return endWhen(() => tokenEnded(sec, headers), end);
}

/** Throws 403 unless the request is allowed; returns the admission check its writes must pass, if any. */
export async function authorizeRequest(sec: Security, a: RequestAttributes): Promise<WriteAdmission | undefined> {
  const d = await sec.authorizer.authorize(a);
  if (d.decision !== 'allow') throw forbidden(a, d.reason ?? '');
  return d.admit;
}

/** Records the request in the audit log once answered, when it could change state. */
export function auditWhenAnswered(sec: Security, res: ServerResponse, a: RequestAttributes, path: string): void {
  const mutating = a.resource ? MUTATING_VERBS.has(a.verb) : a.verb !== 'get' && a.verb !== 'head';
  if (!mutating) return;
  res.once('finish', () => recordAudit(sec, a, path, res.statusCode, a.resource?.name ?? createdName(res)));
}

/** Writes the audit entry of a request answered with `code` (a WebSocket upgrade records 101). */
export function recordAudit(sec: Security, a: RequestAttributes, path: string, code: number, name = a.resource?.name): void {
  const r = a.resource;
  sec.audit.record({
    time: new Date().toISOString(),
    user: a.user.name,
    groups: a.user.groups,
    ...(a.user.impersonatedBy ? { impersonatedBy: a.user.impersonatedBy } : {}),
    verb: a.verb,
    path,
    ...(r ? { apiGroup: r.apiGroup, resource: r.resource } : {}),
    ...(r?.subresource ? { subresource: r.subresource } : {}),
    ...(r?.namespace ? { namespace: r.namespace } : {}),
    ...(name ? { name } : {}),
    code,
  });
}

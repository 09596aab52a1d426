/**
 * Where the apiserver reports each mutating request once it has been
 * answered (see audit-log.ts for the file it goes to).
 */

/** One audited request. */
export interface AuditEntry {
  /** When the response was sent, RFC 3339 with milliseconds. */
  time: string;
  user: string;
  groups: string[];
  /** Who the request authenticated as, when it acted as `user` by impersonation (kube's impersonatedUser, the other way round). */
  impersonatedBy?: string;
  verb: string;
  /** The request path without its query. */
  path: string;
  apiGroup?: string;
  resource?: string;
  subresource?: string;
  namespace?: string;
  name?: string;
  /** The HTTP status code sent. */
  code: number;
}

/** Receives audit entries; must not throw. */
export interface AuditSink {
  record(entry: AuditEntry): void;
}

/** The sink when no audit log is configured. */
export const noAudit: AuditSink = { record: () => undefined };

/**
 * The audit log: one JSON line per mutating request, appended to a file
 * that rotates by size the way logrotate does (audit.log → audit.log.1 → …
 * → audit.log.<N-1>; the oldest is dropped), created 0600 in a 0700
 * directory.
 *
 * The file is written by rotating-file-stream: it writes the queued lines
 * one by one to an open file, in order, without blocking the event loop, and
 * rotates only between two writes, so every line stays whole. (winston's own
 * File transport was tried first and lost entries written in a burst around
 * a rotation, and did not rotate at all while its file was being opened.)
 *
 * Concurrency: only one process may own the file, because rotation renames
 * it. An apiserver pool worker (node:cluster) therefore never opens it: its
 * sink forwards entries to the primary over the IPC channel, and the
 * primary's AuditLogFile writes them (worker-pool.ts).
 */
import cluster from 'node:cluster';
import fs from 'node:fs';
import path from 'node:path';
import { createStream, type RotatingFileStream } from 'rotating-file-stream';
import type { Logger } from 'winston';
import { noAudit, type AuditEntry, type AuditSink } from './audit-sink.js';
import { AuditForwarder } from './audit-forwarding.js';

/** Where the audit log goes and how it rotates. */
export interface AuditLogOptions {
  path: string;
  /** Size at which the file is rotated; it may exceed it by one line. Default 100 MiB. */
  maxSizeBytes: number;
  /** Files kept, the current one included (at least 2). Default 5. */
  maxFiles: number;
}

/** An audit sink that must be closed to flush what it holds. */
export interface AuditLog extends AuditSink {
  /** Resolves once every recorded entry is written (or handed to the primary). */
  close(): Promise<void>;
}

// The review APIs (SelfSubjectAccessReview, TokenReview, ...) are POSTs that store nothing: reads.
const REVIEW_GROUPS = new Set(['authorization.k8s.io', 'authentication.k8s.io']);

/** Whether an entry belongs in the audit log: any mutating request but a review. Pure. */
export function isAudited(entry: AuditEntry): boolean {
  return entry.apiGroup === undefined || !REVIEW_GROUPS.has(entry.apiGroup);
}

/** The line written for an entry: JSON with a stable key order, no newline. Pure. */
export function auditLine(e: AuditEntry): string {
  const { time, user, groups, impersonatedBy, verb, apiGroup, resource, subresource, namespace, name, code, path: requestPath } = e;
  return JSON.stringify({ time, user, groups, impersonatedBy, verb, apiGroup, resource, subresource, namespace, name, code, path: requestPath });
}

/** The audit log of this process: none, the file, or (in a pool worker) the primary's file. */
export function openAuditLog(o: AuditLogOptions | undefined, log: Logger): AuditLog {
  if (!o) return { ...noAudit, close: async () => undefined };
  return cluster.isWorker ? new AuditForwarder(log) : new AuditLogFile(o, log);
}

/** The audit log file, owned by this process. */
export class AuditLogFile implements AuditLog {
  private readonly stream: RotatingFileStream;

  /** Opens (creating as needed) the file; throws when the options cannot work. */
  constructor(o: AuditLogOptions, log: Logger) {
    if (!Number.isInteger(o.maxFiles) || o.maxFiles < 2) throw new Error(`--audit-log-max-files must be at least 2 (the current file and one rotated), not ${o.maxFiles}`);
    if (!Number.isInteger(o.maxSizeBytes) || o.maxSizeBytes <= 0) throw new Error(`--audit-log-max-size must be a whole number of bytes above 0, not ${o.maxSizeBytes}`);
    const dir = path.dirname(o.path);
    const base = path.basename(o.path);
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    if (fs.existsSync(o.path)) fs.chmodSync(o.path, 0o600);
    this.stream = createStream((index: number | Date | null) => (typeof index === 'number' ? `${base}.${index}` : base), {
      path: dir + path.sep,
      size: `${o.maxSizeBytes}B`,
      rotate: o.maxFiles - 1,
      mode: 0o600,
    });
    this.stream.on('error', (err: Error) => log.error('cannot write the audit log', { path: o.path, error: err.message }));
  }

  /** Queues the entry's line; never throws. */
  record(entry: AuditEntry): void {
    if (isAudited(entry) && this.stream.writable) this.stream.write(`${auditLine(entry)}\n`);
  }

  /** Writes what is queued and closes the file. */
  close(): Promise<void> {
    return new Promise((resolve) => this.stream.end(() => resolve()));
  }
}

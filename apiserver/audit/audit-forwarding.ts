/**
 * Audit entries of an apiserver pool worker, carried to the primary over
 * node:cluster's IPC channel: the primary alone owns (and rotates) the audit
 * log file. IPC messages from one worker arrive in the order sent; entries
 * of different workers interleave as their requests did.
 */
import type { Logger } from 'winston';
import type { AuditEntry, AuditSink } from './audit-sink.js';

const AUDIT_MESSAGE = 'cairn-audit-entry';

/** An IPC message carrying one audit entry. */
export interface AuditMessage {
  type: typeof AUDIT_MESSAGE;
  entry: AuditEntry;
}

/** The entry a worker's message carries, or undefined when it is another message. */
export function auditEntryOf(message: unknown): AuditEntry | undefined {
  const m = message as Partial<AuditMessage> | null;
  return m?.type === AUDIT_MESSAGE && typeof m.entry === 'object' ? m.entry : undefined;
}

/** In a pool worker: sends each entry to the primary. */
export class AuditForwarder implements AuditSink {
  private pending = 0;
  private drained: (() => void) | null = null;
  private warned = false;

  /** Creates the forwarder; `log` reports a lost channel once. */
  constructor(private readonly log: Logger) {}

  /** Sends the entry; never throws. */
  record(entry: AuditEntry): void {
    const message: AuditMessage = { type: AUDIT_MESSAGE, entry };
    this.pending++;
    try {
      process.send!(message, undefined, {}, (err) => this.sent(err));
    } catch (err) {
      this.sent(err as Error);
    }
  }

  /** Resolves once every entry has been handed to the channel, so the worker may exit without losing any. */
  close(): Promise<void> {
    if (this.pending === 0) return Promise.resolve();
    return new Promise((resolve) => (this.drained = resolve));
  }

  private sent(err: Error | null): void {
    if (err && !this.warned) {
      this.warned = true;
      this.log.error('cannot send audit entries to the primary process; they are lost until it is back', { error: err.message });
    }
    if (--this.pending === 0) this.drained?.();
  }
}

/**
 * The node's fence (docs/fencing.md): one Lease, <cluster>/node-<name>,
 * is both the node's heartbeat and its right to run instances. The agent
 * renews it every interval. Holding it without a gap makes a *term*; an
 * instance runs only inside a term, so:
 * - when renewals fail for the safe window (duration − fence-stop grace −
 *   margin, counted from the moment the last successful renewal was sent)
 *   the term ends: `onUnsafe` asks the reconciler to stop every instance;
 * - each renewal pushes the node's deadline file forward (expiry − 1.5 s),
 *   which every instance's shim watches: a dead agent's instances die by
 *   themselves before the lease expires;
 * - a renewal that finds the lease taken meanwhile (the controller revokes
 *   the lease of a node it fails over, by compare-and-swap) or that comes
 *   after the window lapsed starts a new term: `onNewTerm`. Claims of
 *   instances (claims.ts) are valid only in the term they were made in.
 *
 * Concurrency model: one timer renews every interval, twice as often while
 * failing (a request is bounded by the interval, so a hung connection never
 * stops later attempts: nextRenewalDelayMs); a
 * second timer fires at the end of the safe window and is re-armed by each
 * success. Both run on the agent's event loop; callers only read.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { KubeConfig, V1Lease } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { nodeLeaseName } from '../../api/names.js';
import { withTimeout, type Clock, type TimerHandle } from '../../runtime/clock.js';
import { LeaseLock } from '../../runtime/lease-lock.js';

/** Longest grace a fence stop gives an instance (SIGTERM, then SIGKILL): the lease will not wait for a long one. */
export const FENCE_STOP_GRACE_MS = 2_000;
/** Room between the end of a fence stop and the deadline of the shims' watchdogs. */
const STOP_MARGIN_MS = 2_000;
/** The shims' watchdogs kill instances this long before the lease expires (after the agent's own stop, before expiry). */
const HARD_DEADLINE_MARGIN_MS = 1_500;

/**
 * When to try the next renewal: one interval after the last one was sent, and half an interval after a
 * failed one. Counting from the send (not from the answer) keeps an attempt that waited out its timeout
 * (one interval) from costing a whole interval more: the next goes at once. Failures that answer fast are
 * retried twice as often, so a request that went to an etcd member cut off behind the apiserver is
 * followed by more attempts within the safe window.
 */
export function nextRenewalDelayMs(ok: boolean, sentAt: number, now: number, intervalMs: number): number {
  return Math.max(0, sentAt + (ok ? intervalMs : intervalMs / 2) - now);
}

/** What a restarted agent needs to continue the term of its previous run (persisted by the local store). */
export interface FenceRecord {
  /** Local id of the term. */
  term: string;
  /** The lease's acquireTime in that term. */
  acquiredAt: string;
  /** Clock time the last successful renewal was sent. */
  lastRenewAt: number;
  /** The same moment on the monotonic clock (Clock.monotonic), and the boot it counts in: what the window is timed by. */
  lastRenewMonotonic?: number;
  bootId?: string;
}

/** Settings of a NodeFence. */
export interface NodeFenceOptions {
  cluster: string;
  nodeName: string;
  intervalMs: number;
  leaseDurationSeconds: number;
  /** The file the instances' shims read their deadline from (epoch ms). */
  deadlineFile: string;
  clock: Clock;
  /** This boot's id: a restored record's monotonic time counts only in the boot it was taken in. */
  bootId?: string;
  log: Logger;
  /** The term ended: every instance must be stopped now. */
  onUnsafe(): void;
  /** A new term began: instances may be claimed and started again. */
  onNewTerm(): void;
  /** After each renewal attempt, with whether it renewed. */
  onResult?(ok: boolean): void;
  /** After each successful renewal: persist record() now, so a restarted agent continues this term. */
  onRenewed?(): void;
}

/**
 * When a restored record's last renewal was sent, on this process's monotonic clock: its own reading when
 * taken in this boot; else its wall-clock time carried over (a record of an older agent, without one).
 * Undefined, no term to continue, when it comes from another boot.
 */
function restoredMonotonic(r: FenceRecord, o: Pick<NodeFenceOptions, 'clock' | 'bootId'>): number | undefined {
  if (r.lastRenewMonotonic !== undefined && r.bootId !== undefined) return r.bootId === o.bootId ? r.lastRenewMonotonic : undefined;
  return o.clock.monotonic() - (o.clock.now() - r.lastRenewAt);
}

/** The node lease and the terms of holding it. */
export class NodeFence {
  private readonly lock: LeaseLock;
  private termId: string | undefined;
  private acquiredAt: string | undefined;
  private lastRenewAt = 0;
  // When the last renewal was sent, on the monotonic clock: the safe window is timed by it, so a wall-clock
  // step back (NTP, a resumed VM) cannot stretch a term past the lease the controller counts.
  private lastRenewMonotonic = 0;
  private terms = 0;
  private renewTimer: TimerHandle | undefined;
  private unsafeTimer: TimerHandle | undefined;
  private stopped = false;
  // Whether onUnsafe was called since the last renewal (the end of a term is reported once, by whichever
  // sees it first), and when, on the timers' clock.
  private unsafeReported = false;
  private unsafeReportedAt = 0;

  constructor(
    kubeConfig: KubeConfig,
    private readonly opts: NodeFenceOptions,
    restored?: FenceRecord,
  ) {
    this.lock = new LeaseLock(kubeConfig, { namespace: opts.cluster, name: nodeLeaseName(opts.nodeName), identity: opts.nodeName, leaseDurationSeconds: opts.leaseDurationSeconds, clock: opts.clock });
    const restoredAt = restored && restoredMonotonic(restored, opts);
    if (restored && restoredAt !== undefined && this.windowLeft(restoredAt) > 0) {
      ({ term: this.termId, acquiredAt: this.acquiredAt, lastRenewAt: this.lastRenewAt } = restored);
      this.lastRenewMonotonic = restoredAt;
      this.armUnsafeTimer();
    }
  }

  /** ms from a renewal until the term ends without another: the lease duration less a fence stop and a margin. */
  static safeWindowMs(leaseDurationSeconds: number): number {
    const duration = leaseDurationSeconds * 1000;
    return Math.max(duration / 2, duration - FENCE_STOP_GRACE_MS - STOP_MARGIN_MS);
  }

  /** The current term's id while it is safe to run instances; undefined otherwise. */
  get term(): string | undefined {
    return this.isSafe() ? this.termId : undefined;
  }

  /** Clock time of the last successful renewal (0 = none yet). */
  get lastRenewed(): number {
    return this.lastRenewAt;
  }

  /** The node lease as last renewed (kept in the agent's metadata copy, for a restore of etcd). */
  get lease(): V1Lease | undefined {
    return this.lock.lease;
  }

  /** Whether instances may run now. */
  isSafe(): boolean {
    return this.msUntilUnsafe() > 0;
  }

  /** ms until the term ends unless renewed (0 = ended, or none yet). */
  msUntilUnsafe(): number {
    return this.termId === undefined ? 0 : this.windowLeft(this.lastRenewMonotonic);
  }

  /** What to persist so a restarted agent continues this term. */
  record(): FenceRecord | undefined {
    if (this.termId === undefined || this.acquiredAt === undefined) return undefined;
    return { term: this.termId, acquiredAt: this.acquiredAt, lastRenewAt: this.lastRenewAt, lastRenewMonotonic: this.lastRenewMonotonic, bootId: this.opts.bootId };
  }

  /** Renews now and then every interval. */
  start(): void {
    void this.tick();
  }

  /** Stops renewing (the lease then expires, and the shims' watchdogs stop the instances, unless an agent renews it again). */
  stop(): void {
    this.stopped = true;
    this.renewTimer?.cancel();
    this.unsafeTimer?.cancel();
  }

  /** One renewal attempt; resolves whether it renewed. */
  async renew(): Promise<boolean> {
    const sentAt = { wall: this.opts.clock.now(), monotonic: this.opts.clock.monotonic() };
    let ok = false;
    try {
      const answer = await withTimeout<boolean | undefined>(this.opts.clock, this.lock.tryAcquireOrRenew(), this.opts.intervalMs, undefined);
      if (answer === undefined) throw new Error(`no answer from the apiserver within ${this.opts.intervalMs} ms`);
      ok = answer;
      if (!ok) this.opts.log.error('node lease is held by another identity; is a second agent running with this node name?', { holder: this.lock.observedHolder });
    } catch (err) {
      this.opts.log.warn('node lease renewal failed', { error: String(err), msUntilFenced: this.msUntilUnsafe() });
    }
    if (ok) this.renewed(sentAt);
    this.opts.onResult?.(ok);
    return ok;
  }

  private renewed(sentAt: { wall: number; monotonic: number }): void {
    const acquiredAt = this.lock.heldSince;
    const continues = this.termId !== undefined && acquiredAt === this.acquiredAt && this.windowLeft(this.lastRenewMonotonic, sentAt.monotonic) > 0;
    this.lastRenewAt = sentAt.wall;
    this.lastRenewMonotonic = sentAt.monotonic;
    this.acquiredAt = acquiredAt;
    this.unsafeReported = false;
    this.writeDeadline();
    this.armUnsafeTimer();
    if (!continues) this.termId = `${acquiredAt ?? 'unknown'}#${++this.terms}`;
    this.opts.onRenewed?.();
    if (continues) return;
    this.opts.log.info('node lease held: a new fencing term begins', { term: this.termId });
    this.opts.onNewTerm();
  }

  private windowLeft(lastRenewMonotonic: number, at = this.opts.clock.monotonic()): number {
    return Math.max(0, lastRenewMonotonic + NodeFence.safeWindowMs(this.opts.leaseDurationSeconds) - at);
  }

  private armUnsafeTimer(): void {
    this.unsafeTimer?.cancel();
    this.unsafeTimer = this.opts.clock.setTimer(() => {
      if (this.stopped) return;
      // Early (a timer that ran ahead of the monotonic clock): look again when the window really ends.
      if (this.isSafe()) return this.armUnsafeTimer();
      this.reportUnsafe();
    }, this.msUntilUnsafe() + 1);
  }

  private reportUnsafe(): void {
    if (this.unsafeReported) return;
    this.unsafeReported = true;
    this.unsafeReportedAt = this.opts.clock.elapsed();
    this.opts.log.warn('node lease not renewed within the safe window: stopping every instance', { lastRenewAt: new Date(this.lastRenewAt).toISOString() });
    this.opts.onUnsafe();
  }

  private async tick(): Promise<void> {
    if (this.stopped) return;
    if (this.termId !== undefined && !this.isSafe()) {
      // The term ended: its fence stops get their time before a renewal may begin a new term, in which the
      // old term's copies would run on. The window may also have run out while the timers stood still (a
      // suspended machine's monotonic clock, boot time, counts the suspend; its timers do not), so that the
      // renewal falls due before the end-of-term timer: the end is reported here then.
      const graceLeft = this.unsafeReported ? this.unsafeReportedAt + FENCE_STOP_GRACE_MS - this.opts.clock.elapsed() : FENCE_STOP_GRACE_MS;
      if (graceLeft > 0) {
        this.renewTimer = this.opts.clock.setTimer(() => void this.tick(), graceLeft);
        this.reportUnsafe();
        return;
      }
    }
    // On the monotonic clock: a wall-clock step back would otherwise put the next renewal off by the step.
    const sentAt = this.opts.clock.monotonic();
    const ok = await this.renew();
    const delayMs = nextRenewalDelayMs(ok, sentAt, this.opts.clock.monotonic(), this.opts.intervalMs);
    if (!this.stopped) this.renewTimer = this.opts.clock.setTimer(() => void this.tick(), delayMs);
  }

  // Atomic (rename) so a shim never reads half a number; not fsynced: a crash that loses it also stopped the instances.
  private writeDeadline(): void {
    const deadlineMs = Math.floor(this.lastRenewAt + this.opts.leaseDurationSeconds * 1000 - HARD_DEADLINE_MARGIN_MS);
    const tmp = `${this.opts.deadlineFile}.tmp`;
    try {
      fs.mkdirSync(path.dirname(tmp), { recursive: true });
      fs.writeFileSync(tmp, `${deadlineMs}\n`);
      fs.renameSync(tmp, this.opts.deadlineFile);
    } catch (err) {
      this.opts.log.warn('cannot write the fencing deadline file; instances stop at their previous deadline', { file: this.opts.deadlineFile, error: String(err) });
    }
  }
}

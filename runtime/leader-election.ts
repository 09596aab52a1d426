/**
 * Leader election over a Lease with client-go's semantics: candidates try
 * to acquire every retryPeriod; the leader renews every retryPeriod and,
 * if no renewal succeeds for renewDeadline, stops leading at once (the
 * caller exits non-zero and its supervisor restarts it as a follower).
 * Leadership alone does not fence: every side effect of the controller is
 * conditional on resourceVersions, and a deposed leader stops acting before
 * its lease can be taken (renewDeadline < leaseDuration).
 */
import type { Logger } from 'winston';
import { realClock, sleep, withTimeout, type Clock } from './clock.js';
import type { LeaseLock } from './lease-lock.js';

/** Timings of leader election, in milliseconds (lease duration is the lock's). */
export interface LeaderElectionTimings {
  leaseDurationMs: number;
  renewDeadlineMs: number;
  retryPeriodMs: number;
}

/** client-go's defaults: 15 s lease, 10 s renew deadline, 2 s retry. */
export const DEFAULT_LEADER_TIMINGS: LeaderElectionTimings = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };

/** Throws unless leaseDuration > renewDeadline > 1.2 × retryPeriod, as client-go requires. */
export function validateLeaderTimings(t: LeaderElectionTimings): void {
  if (!(t.leaseDurationMs > t.renewDeadlineMs)) {
    throw new Error(`--lease-duration (${t.leaseDurationMs} ms) must be greater than --renew-deadline (${t.renewDeadlineMs} ms)`);
  }
  if (!(t.renewDeadlineMs > 1.2 * t.retryPeriodMs)) {
    throw new Error(`--renew-deadline (${t.renewDeadlineMs} ms) must be greater than 1.2 × --retry-period (${t.retryPeriodMs} ms)`);
  }
}

/** Callbacks and dependencies of a LeaderElector. */
export interface LeaderElectorOptions {
  lock: LeaseLock;
  timings: LeaderElectionTimings;
  log: Logger;
  clock?: Clock;
  /** Called once when this process becomes leader. */
  onStartedLeading(): void;
  /**
   * Called once when leadership is lost or given up; may return when the work it led has stopped. A leader
   * shutting down releases the lease only after that, or never (it then expires) if it takes longer than the
   * renew deadline: released at once, a successor could act while this one's last writes are in flight.
   */
  onStoppedLeading(reason: string): unknown;
  /** Called when another identity is seen holding the lease. */
  onNewLeader?(identity: string): void;
}

/** Runs one candidate through acquire → lead → lose. */
export class LeaderElector {
  private readonly clock: Clock;
  private leading = false;
  private lastRenew = 0;

  constructor(private readonly opts: LeaderElectorOptions) {
    validateLeaderTimings(opts.timings);
    this.clock = opts.clock ?? realClock;
  }

  /** Whether this process leads and renewed within the renew deadline (for /healthz). */
  get healthy(): boolean {
    return !this.leading || this.clock.now() - this.lastRenew < this.opts.timings.renewDeadlineMs + this.opts.timings.retryPeriodMs;
  }

  /** Whether this process currently leads. */
  get isLeader(): boolean {
    return this.leading;
  }

  /** Acquires, then renews until leadership is lost (resolves 'lost') or signal aborts (releases, resolves 'stopped'). */
  async run(signal: AbortSignal): Promise<'lost' | 'stopped'> {
    if (!(await this.acquire(signal))) return 'stopped';
    this.leading = true;
    this.opts.onStartedLeading();
    const outcome = await this.renewLoop(signal);
    this.leading = false;
    const stopped = this.opts.onStoppedLeading(outcome === 'lost' ? `failed to renew the lease within ${this.opts.timings.renewDeadlineMs} ms` : 'shutting down');
    if (outcome === 'stopped') await this.release(stopped);
    return outcome;
  }

  // Stop acting before giving the lease up (a successor may take it at once): the release waits for the
  // work to stop, and each wait lasts no longer than the renew deadline, so a hung apiserver cannot keep a
  // stopping process alive. Work still going then keeps the lease until it expires.
  private async release(stopped: unknown): Promise<void> {
    const deadline = this.opts.timings.renewDeadlineMs;
    const ended = await withTimeout(this.clock, Promise.resolve(stopped).then(() => true, () => true), deadline, false);
    if (!ended) {
      this.opts.log.warn('work still in flight after the renew deadline; leaving the leader lease to expire', { lease: this.opts.lock.opts.name });
      return;
    }
    await withTimeout(this.clock, this.opts.lock.release().catch(() => undefined), deadline, undefined);
  }

  private async acquire(signal: AbortSignal): Promise<boolean> {
    let lastSeen: string | undefined;
    while (!signal.aborted) {
      const started = this.clock.now();
      if (await this.attempt(this.opts.timings.renewDeadlineMs)) {
        this.lastRenew = started;
        return true;
      }
      const holder = this.opts.lock.observedHolder;
      if (holder && holder !== lastSeen) this.opts.onNewLeader?.(holder);
      lastSeen = holder;
      await sleep(this.clock, this.jittered(), signal);
    }
    return false;
  }

  private async renewLoop(signal: AbortSignal): Promise<'lost' | 'stopped'> {
    const { renewDeadlineMs, retryPeriodMs } = this.opts.timings;
    while (!signal.aborted) {
      // Never past the deadline: a leader that cannot renew must stop when it runs out, not a retry period later.
      await sleep(this.clock, Math.min(retryPeriodMs, Math.max(0, this.lastRenew + renewDeadlineMs - this.clock.now())), signal);
      if (signal.aborted) break;
      const remaining = this.lastRenew + renewDeadlineMs - this.clock.now();
      const started = this.clock.now();
      if (remaining > 0 && (await this.attempt(remaining))) {
        // Counted from when the renewal was sent, the time its renewTime says: others time the lease from
        // its commit, and a slow answer must not stretch this leader's reign past theirs.
        this.lastRenew = started;
        continue;
      }
      // A renewal that timed out or was refused (a conflict, another holder) is otherwise silent until leadership is lost.
      const sinceRenewMs = this.clock.now() - this.lastRenew;
      this.opts.log.warn('leader lease not renewed', { lease: this.opts.lock.opts.name, attemptMs: this.clock.now() - started, sinceRenewMs, holder: this.opts.lock.observedHolder });
      if (sinceRenewMs >= renewDeadlineMs) return 'lost';
    }
    return 'stopped';
  }

  /** One try, bounded by timeoutMs so a hung request cannot outlive the deadline. */
  private async attempt(timeoutMs: number): Promise<boolean> {
    try {
      return await withTimeout(this.clock, this.opts.lock.tryAcquireOrRenew(), timeoutMs, false);
    } catch (err) {
      this.opts.log.warn('leader lease attempt failed', { lease: this.opts.lock.opts.name, error: String(err) });
      return false;
    }
  }

  private jittered(): number {
    return this.opts.timings.retryPeriodMs * (1 + Math.random() * 0.2);
  }
}

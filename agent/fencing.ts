/**
 * Fencing leases: while an instance runs here, this agent holds the Lease
 * <cluster>/instance-<name> and renews it. The controller starts the
 * instance elsewhere only after that lease has expired, so an agent that
 * cannot renew (apiserver down, partition) must stop the instance before
 * expiry: it is "unsafe" from lastRenew + duration − (grace + 2 s), and
 * the reconciler stops it then. Renewal times are persisted so a restarted
 * agent knows its deadlines even while the apiserver is unreachable.
 * Each renewal also pushes the instance's deadline file forward
 * (lease expiry − 1.5 s): the instance's shim kills it when that passes, the
 * backstop for an agent that died (see drivers/process/launch.ts).
 *
 * Concurrency model: one renew timer renews every held lease every
 * duration/3, and every 2 s after a round with a failure (so several
 * failed attempts fit in the safe window);
 * acquire/release are called by reconciles, one per key at a time.
 */
import fs from 'node:fs';
import path from 'node:path';
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'winston';
import { withTimeout, type Clock, type TimerHandle } from '../runtime/clock.js';
import { LeaseLock } from '../runtime/lease-lock.js';

/** How often a held lease is renewed: a third of its duration (failed renewals are retried sooner, see RETRY_MS). */
function renewPeriodMs(spec: FenceSpec): number {
  return (spec.durationSeconds * 1000) / 3;
}

/** After a round with a failed renewal, the next round comes this soon, so one failure does not eat the safe window. */
const RETRY_MS = 2000;

/**
 * The shim's watchdog kills the instance this long before its lease expires:
 * after the agent's own graceful stop would have begun (the safe window ends
 * at least 2 s before expiry), with room for the watchdog's wake-up latency.
 */
const HARD_DEADLINE_MARGIN_MS = 1500;

/** Settings of a Fencing manager. */
export interface FencingOptions {
  cluster: string;
  nodeName: string;
  clock: Clock;
  log: Logger;
  /** A held lease became unsafe (renewals failing); the key's reconcile must stop the instance. */
  onUnsafe(key: string): void;
  onRenewResult?(ok: boolean): void;
}

/** One lease to hold for a WorkItem key. */
export interface FenceSpec {
  leaseName: string;
  durationSeconds: number;
  /** The instance's stop grace period: the deadline leaves room for it. */
  graceMs: number;
  /** Where the instance's shim reads its hard deadline (epoch ms). */
  deadlineFile?: string;
}

interface Held extends FenceSpec {
  lock: LeaseLock;
  lastRenew: number;
}

/** The fencing leases of this node's instances. */
export class Fencing {
  private readonly held = new Map<string, Held>();
  private timer: TimerHandle | undefined;
  private lastRoundFailed = false;

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly opts: FencingOptions,
    /** Last renewal times persisted by a previous run, by key. */
    private readonly restored: Record<string, number> = {},
  ) {}

  /** ms from a renewal until the instance must be stopped. */
  static safeWindowMs(spec: FenceSpec): number {
    const duration = spec.durationSeconds * 1000;
    return Math.max(duration / 3, duration - spec.graceMs - 2000);
  }

  /** Takes or renews the lease for key; resolves the holder when someone else holds it. */
  async acquire(key: string, spec: FenceSpec): Promise<{ ok: true } | { ok: false; holder?: string }> {
    let h = this.held.get(key);
    // Held and renewed within the renew period: the timer keeps it; no request per reconcile.
    if (h && h.leaseName === spec.leaseName && this.opts.clock.now() - h.lastRenew < renewPeriodMs(h)) return { ok: true };
    if (!h || h.leaseName !== spec.leaseName) {
      const lock = this.lockFor(spec);
      h = { ...spec, lock, lastRenew: this.restored[key] ?? 0 };
    }
    // Bounded: under a partition a request may hang rather than fail, and the caller must still be
    // able to stop the instance before the lease expires.
    // Nothing runs under a lease never held: then the whole renew period is the budget.
    const everHeld = this.held.has(key) || this.restored[key] !== undefined;
    const budget = Math.min(renewPeriodMs(spec), everHeld ? Math.max(500, this.msUntilUnsafe(key, spec)) : Infinity);
    const ok = await withTimeout<boolean | undefined>(this.opts.clock, h.lock.tryAcquireOrRenew(), budget, undefined);
    if (ok === undefined) throw new Error(`lease ${spec.leaseName}: no answer from the apiserver within ${budget} ms`);
    if (!ok) return { ok: false, holder: h.lock.observedHolder };
    h.lastRenew = this.opts.clock.now();
    Object.assign(h, spec);
    this.held.set(key, h);
    this.writeDeadline(key, h);
    this.ensureTimer();
    return { ok: true };
  }

  /**
   * ms until key's instance must be stopped (0 = now). `spec` gives the
   * window of a lease known only from a previous run's renewal time (not
   * held yet in this run: the apiserver has been unreachable since start).
   */
  msUntilUnsafe(key: string, spec?: FenceSpec): number {
    const h = this.held.get(key);
    const last = h?.lastRenew ?? this.restored[key];
    if (last === undefined) return 0;
    const timing = h ?? spec;
    const window = timing ? Fencing.safeWindowMs(timing) : 0;
    return Math.max(0, last + window - this.opts.clock.now());
  }

  /** Whether key's lease was renewed recently enough for its instance to keep running. */
  isSafe(key: string, spec?: FenceSpec): boolean {
    return this.msUntilUnsafe(key, spec) > 0;
  }

  /**
   * Gives up key's lease (the instance has stopped) so another node may take over at once. It clears the
   * holder rather than deleting the lease: a node may not delete leases; the controller deletes it with its Instance.
   */
  async release(key: string, deadlineFile?: string): Promise<void> {
    const h = this.held.get(key);
    this.drop(key, deadlineFile ?? h?.deadlineFile);
    await h?.lock.release();
  }

  /**
   * Hands key's lease to node `successor` (the target of a live migration, once the guest left this
   * node): stops renewing it first, so no renewal races the hand-over, then swaps the holder in one
   * compare-and-swap. Rejects (for a retry) on a conflict or when another node holds it.
   */
  async handOver(key: string, spec: FenceSpec, successor: string): Promise<void> {
    const h = this.held.get(key);
    const lock = h?.lock ?? this.lockFor(spec);
    this.held.delete(key);
    await lock.handOver(successor);
    this.drop(key, spec.deadlineFile);
  }

  /**
   * Stops holding key's lease without touching the API (its instance is gone: let the lease expire),
   * and deletes its deadline file (`deadlineFile` names it when this run never held the lease).
   */
  drop(key: string, deadlineFile = this.held.get(key)?.deadlineFile): void {
    this.held.delete(key);
    delete this.restored[key];
    if (deadlineFile) fs.rmSync(deadlineFile, { force: true });
  }

  /** Last renewal times, for persisting (including those of a previous run not renewed yet in this one). */
  renewals(): Record<string, number> {
    return { ...this.restored, ...Object.fromEntries([...this.held].map(([k, h]) => [k, h.lastRenew])) };
  }

  /** Stops the renew timer (leases then expire unless released). */
  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }

  private lockFor(spec: FenceSpec): LeaseLock {
    return new LeaseLock(this.kubeConfig, { namespace: this.opts.cluster, name: spec.leaseName, identity: this.opts.nodeName, leaseDurationSeconds: spec.durationSeconds, clock: this.opts.clock });
  }

  // Atomic (rename) so the shim never reads half a number; not fsynced: a crash that loses it also stopped the instance.
  private writeDeadline(key: string, h: Held): void {
    if (!h.deadlineFile) return;
    const deadlineMs = Math.floor(h.lastRenew + h.durationSeconds * 1000 - HARD_DEADLINE_MARGIN_MS);
    const tmp = `${h.deadlineFile}.tmp`;
    try {
      writeCreatingDir(tmp, `${deadlineMs}\n`);
      fs.renameSync(tmp, h.deadlineFile);
    } catch (err) {
      this.opts.log.warn('cannot write the fencing deadline file; the instance stops at its previous deadline', { workItem: key, file: h.deadlineFile, error: String(err) });
    }
  }

  private ensureTimer(): void {
    if (this.timer || this.held.size === 0) return;
    const every = this.lastRoundFailed ? RETRY_MS : Math.min(...[...this.held.values()].map(renewPeriodMs));
    this.timer = this.opts.clock.setTimer(() => {
      this.timer = undefined;
      void this.renewAll().finally(() => this.ensureTimer());
    }, every);
  }

  private async renewAll(): Promise<void> {
    const results = await Promise.all([...this.held].map(([key, h]) => this.renewOne(key, h)));
    this.lastRoundFailed = results.includes(false);
  }

  private async renewOne(key: string, h: Held): Promise<boolean> {
    let ok = false;
    try {
      ok = await withTimeout(this.opts.clock, h.lock.tryAcquireOrRenew(), (h.durationSeconds * 1000) / 4, false);
    } catch (err) {
      this.opts.log.warn('fencing lease renewal failed', { workItem: key, lease: h.leaseName, error: String(err) });
    }
    this.opts.onRenewResult?.(ok);
    if (ok && this.held.get(key) === h) {
      h.lastRenew = this.opts.clock.now();
      this.writeDeadline(key, h);
    }
    if (!ok && !this.isSafe(key)) this.opts.onUnsafe(key);
    return ok;
  }
}

// The directory exists but for the first write of a cluster's first instance: no mkdir per renewal.
function writeCreatingDir(file: string, text: string): void {
  try {
    fs.writeFileSync(file, text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, text);
  }
}

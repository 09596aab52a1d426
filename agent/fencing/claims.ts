/**
 * Instance claims (docs/fencing.md): the Lease <cluster>/instance-<name>
 * names the one node that may run an instance. Unlike the node lease it is
 * never renewed and never taken over because it looks old: a node claims it
 * only when it is free or already its own, by compare-and-swap, and gives
 * it up by clearing the holder (stopped), or hands it to a live migration's
 * target. The controller deletes the claim of a node it failed over, and
 * only after revoking that node's lease.
 *
 * A claim counts only in the node term it was made in: after a gap in the
 * node lease, every instance is claimed again (one write each) before it
 * starts, so a claim the controller deleted meanwhile is never used.
 *
 * Concurrency model: called by reconciles, one per key at a time; the map
 * is only touched on the agent's event loop.
 */
import type { KubeConfig, V1Lease } from '@kubernetes/client-node';
import { instanceLeaseName } from '../../api/names.js';
import type { WorkItem } from '../../api/workitem.js';
import { withTimeout, type Clock } from '../../runtime/clock.js';
import { LeaseLock } from '../../runtime/lease-lock.js';

/** The name of an instance's claim (its fencing Lease). */
export function claimNameOf(item: WorkItem): string {
  return item.spec.instance?.fencing?.leaseName ?? instanceLeaseName(item.spec.owner.name);
}

/** Settings of the claims of a node. */
export interface ClaimOptions {
  cluster: string;
  nodeName: string;
  /** Written into claims for display: the node lease's duration. */
  leaseDurationSeconds: number;
  clock: Clock;
  /** Told each time key's claim (the Lease `leaseName`) was made in a term (or given up: undefined), to persist it. */
  onChange?: (key: string, term: string | undefined, leaseName: string) => void;
  /** Makes the lock of one claim (tests); default a LeaseLock that never takes a claim over. */
  newLock?: (leaseName: string) => ClaimLock;
}

/** What a claim needs of its Lease: runtime/lease-lock.ts. */
export type ClaimLock = Pick<LeaseLock, 'tryAcquireOrRenew' | 'release' | 'handOver' | 'observedHolder' | 'lease'> & { opts: { name: string } };

/** How long after a claim write was sent giving the claim up waits for it (an agent's API calls get 5 s each). */
const ATTEMPT_WAIT_MS = 4_000;

/** Outcome of a claim: held, or held by another node (`holder`). */
export type ClaimResult = { ok: true } | { ok: false; holder?: string };

interface Claim {
  lock: ClaimLock;
  term?: string;
}

/** The instance claims this node holds, by WorkItem key. */
export class InstanceClaims {
  private readonly claims = new Map<string, Claim>();
  /** Claim writes under way, by key, with when each was sent: their caller may have stopped waiting (a time budget), not the request. */
  private readonly attempts = new Map<string, { write: Promise<boolean>; sentAt: number }>();
  /** Releases of claims that landed after their give-up, by key: a new claim waits for them (see claim()). */
  private readonly rereleases = new Map<string, Promise<void>>();

  constructor(
    private readonly kubeConfig: KubeConfig,
    private readonly opts: ClaimOptions,
  ) {}

  /** Whether key's claim was made in `term` (so its instance may start or resume now). */
  holds(key: string, term: string | undefined): boolean {
    return term !== undefined && this.claims.get(key)?.term === term;
  }

  /** Claims `leaseName` for key in `term`: one write, unless already claimed in this term. */
  async claim(key: string, leaseName: string, term: string): Promise<ClaimResult> {
    if (this.holds(key, term)) return { ok: true };
    // A release still clearing a claim that landed late would otherwise clear this one (it reads again on a conflict).
    // Awaited only when there is one: the attempt below must be registered at once, for a give-up that follows.
    const rereleasing = this.rereleases.get(key);
    if (rereleasing) await rereleasing;
    const c = this.entry(key, leaseName);
    const attempt = { write: c.lock.tryAcquireOrRenew(), sentAt: this.opts.clock.elapsed() };
    this.attempts.set(key, attempt);
    const ok = await attempt.write.finally(() => {
      if (this.attempts.get(key) === attempt) this.attempts.delete(key);
    });
    if (!ok) return { ok: false, holder: c.lock.observedHolder };
    // Given up while the write was under way, past the wait for it (attemptSettled): the claim landed after the
    // release, so it is released again, or it would hold the instance off its next node for as long as this node lives.
    if (this.claims.get(key) !== c) {
      if (!this.claims.has(key)) this.rerelease(key, c.lock);
      return { ok: false };
    }
    c.term = term;
    this.opts.onChange?.(key, term, leaseName);
    return { ok: true };
  }

  /** Gives key's claim up (its instance has stopped), so another node may claim it at once. */
  async release(key: string, leaseName: string): Promise<void> {
    await this.attemptSettled(key);
    const c = this.entry(key, leaseName);
    this.forget(key);
    await c.lock.release();
  }

  /**
   * Hands key's claim to node `successor` in one compare-and-swap (a live migration's switch-over); a
   * claim that is gone or held by another node is left alone ('not held': this node has none to give).
   */
  async handOver(key: string, leaseName: string, successor: string): Promise<'handed' | 'not held'> {
    await this.attemptSettled(key);
    const c = this.entry(key, leaseName);
    this.forget(key);
    return c.lock.handOver(successor);
  }

  /** Takes back the claims a previous run made in `term` (the term this run continues). */
  restore(term: string, keys: readonly string[], leaseNameOf: (key: string) => string | undefined): void {
    for (const key of keys) {
      const leaseName = leaseNameOf(key);
      if (leaseName) this.entry(key, leaseName).term = term;
    }
  }

  /** key's claim as this node last read or wrote it (kept in the agent's metadata copy). */
  lease(key: string): V1Lease | undefined {
    return this.claims.get(key)?.lock.lease;
  }

  /** Gives key's claim up if this node made one, then forgets it; a claim already deleted or taken is left alone. */
  async releaseIfClaimed(key: string): Promise<void> {
    await this.attemptSettled(key);
    const c = this.claims.get(key);
    if (!c) return;
    await c.lock.release();
    this.forget(key);
  }

  /** Forgets key's claim without touching the API. */
  forget(key: string): void {
    const c = this.claims.get(key);
    if (c && this.claims.delete(key)) this.opts.onChange?.(key, undefined, c.lock.opts.name);
  }

  private rerelease(key: string, lock: ClaimLock): void {
    const done: Promise<void> = lock
      .release()
      .catch(() => undefined)
      .finally(() => {
        if (this.rereleases.get(key) === done) this.rereleases.delete(key);
      });
    this.rereleases.set(key, done);
  }

  /**
   * Waits for a claim write of key still under way: a release that read the claim before such a write
   * landed would leave it held by this node, with no WorkItem left here to give it up, and the instance's
   * next node waiting on it for as long as this node lives.
   */
  private async attemptSettled(key: string): Promise<void> {
    const attempt = this.attempts.get(key);
    if (!attempt) return;
    // Bounded from when it was sent, not from each wait: a write on a connection a partition left dead may never
    // answer, and every retry of a give-up cut short by its caller's budget would otherwise wait anew, for good.
    const left = attempt.sentAt + ATTEMPT_WAIT_MS - this.opts.clock.elapsed();
    if (left > 0) await withTimeout(this.opts.clock, attempt.write.catch(() => false), left, false);
  }

  private entry(key: string, leaseName: string): Claim {
    let c = this.claims.get(key);
    if (!c || c.lock.opts.name !== leaseName) {
      const lock = this.opts.newLock?.(leaseName) ?? new LeaseLock(this.kubeConfig, { namespace: this.opts.cluster, name: leaseName, identity: this.opts.nodeName, leaseDurationSeconds: this.opts.leaseDurationSeconds, clock: this.opts.clock, takeOverExpired: false });
      c = { lock };
      this.claims.set(key, c);
    }
    return c;
  }
}

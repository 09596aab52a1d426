/**
 * One coordination.k8s.io/v1 Lease held by one identity, with client-go's
 * resourcelock semantics. Used for the controller's leader election, each
 * agent's node heartbeat and each instance's fencing lease.
 *
 * Expiry is judged from when *this process* last saw the record change
 * (observedAt + leaseDurationSeconds), never from the holder's renewTime,
 * so clock skew between machines cannot make a live lease look expired.
 * Every write is a PUT carrying the resourceVersion read, so two
 * candidates racing for an expired lease cannot both win. A lock made with
 * `takeOverExpired: false` is a claim rather than a lease: it is taken
 * only when free (no holder) or already ours, never because it looks
 * expired (an agent's instance claims, docs/fencing.md).
 */
import { CoordinationV1Api, type KubeConfig, type V1Lease } from '@kubernetes/client-node';
import { isConflict, isNotFound, toApiError } from '../api/client/errors.js';
import { realClock, type Clock } from './clock.js';

/** Tries of a release that keeps meeting concurrent writes. */
const RELEASE_ATTEMPTS = 3;

/** Identity and timing of a LeaseLock. */
export interface LeaseLockOptions {
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds: number;
  clock?: Clock;
  labels?: Record<string, string>;
  /** Whether a lease held by another identity may be taken once it looks expired (default true). */
  takeOverExpired?: boolean;
}

/** A lease this process tries to hold. */
export class LeaseLock {
  private readonly api: CoordinationV1Api;
  private readonly clock: Clock;
  private observed: { record: string; at: number; lease: V1Lease } | undefined;

  constructor(
    kubeConfig: KubeConfig,
    readonly opts: LeaseLockOptions,
  ) {
    this.api = kubeConfig.makeApiClient(CoordinationV1Api);
    this.clock = opts.clock ?? realClock;
  }

  /** The lease as last read or written by this process (undefined before the first). */
  get lease(): V1Lease | undefined {
    return this.observed?.lease;
  }

  /** Holder of the lease as last observed. */
  get observedHolder(): string | undefined {
    return this.observed?.lease.spec?.holderIdentity ?? undefined;
  }

  /**
   * When this identity acquired the lease it holds (its acquireTime as last written): a change means
   * the lease was lost in between, and a term of holding it began anew.
   */
  get heldSince(): string | undefined {
    const spec = this.observed?.lease.spec;
    if (spec?.holderIdentity !== this.opts.identity) return undefined;
    return spec.acquireTime === undefined ? undefined : new Date(spec.acquireTime as unknown as string | Date).toISOString();
  }

  /** Creates, renews or takes over (when expired, or free) the lease; resolves whether this identity holds it. */
  async tryAcquireOrRenew(): Promise<boolean> {
    const { namespace, name, identity } = this.opts;
    const now = new Date(this.clock.now());
    if (await this.renewHeld(now)) return true;
    // A claim not seen yet is usually new (an instance placed here): create it first, one request; read only when it exists.
    if (!this.observed && this.opts.takeOverExpired === false && (await this.create(now))) return true;
    let current: V1Lease;
    try {
      current = await this.api.readNamespacedLease({ namespace, name });
    } catch (err) {
      if (!isNotFound(err)) throw toApiError(err);
      return this.create(now);
    }
    this.observe(current);
    const holder = current.spec?.holderIdentity;
    if (holder && holder !== identity && (this.opts.takeOverExpired === false || !this.observedExpired())) return false;
    const takingOver = holder !== identity;
    const spec = {
      ...current.spec,
      holderIdentity: identity,
      leaseDurationSeconds: this.opts.leaseDurationSeconds,
      renewTime: now,
      acquireTime: takingOver ? now : (current.spec?.acquireTime ?? now),
      // As client-go: any change of holder counts, including taking a released (holderless) lease.
      leaseTransitions: (current.spec?.leaseTransitions ?? 0) + (takingOver ? 1 : 0),
    };
    return this.write({ ...current, spec });
  }

  /** Gives the lease up if this identity holds it, so a successor need not wait for expiry. */
  async release(): Promise<void> {
    // A conflict is a write between the read and ours (a renewal of this very holder, say): read again, for
    // a release that gave up there would leave the lease held.
    for (let attempt = 0; ; attempt++) {
      try {
        const current = await this.read();
        if (current.spec?.holderIdentity === this.opts.identity) await this.replaceHolder(current, undefined, 1);
        return;
      } catch (err) {
        if (isNotFound(err)) return;
        if (!isConflict(err) || attempt >= RELEASE_ATTEMPTS - 1) throw toApiError(err);
      }
    }
  }

  /**
   * Hands the lease to `successor` if this identity holds it, for a full duration from now (the
   * switch-over of a live migration): never free in between. Resolves once `successor` holds it, or
   * once it is clear this identity has nothing to give: the lease is gone, or another holds it (as
   * release() does; rejecting, a caller retrying would never get past it). A conflict (a concurrent
   * renewal) rejects, for the caller to retry.
   */
  async handOver(successor: string): Promise<'handed' | 'not held'> {
    const current = await this.read().catch((err: unknown) => {
      if (isNotFound(err)) return undefined;
      throw toApiError(err);
    });
    const holder = current?.spec?.holderIdentity;
    if (holder === successor) return 'handed';
    if (!current || holder !== this.opts.identity) return 'not held';
    await this.replaceHolder(current, successor, this.opts.leaseDurationSeconds).catch((err: unknown) => {
      throw toApiError(err);
    });
    return 'handed';
  }

  private read(): Promise<V1Lease> {
    return this.api.readNamespacedLease({ namespace: this.opts.namespace, name: this.opts.name });
  }

  private async replaceHolder(current: V1Lease, holder: string | undefined, leaseDurationSeconds: number): Promise<void> {
    const now = new Date(this.clock.now());
    const transitions = (current.spec?.leaseTransitions ?? 0) + (holder ? 1 : 0);
    await this.api.replaceNamespacedLease({
      namespace: this.opts.namespace,
      name: this.opts.name,
      body: { ...current, spec: { ...current.spec, holderIdentity: holder, leaseDurationSeconds, renewTime: now, acquireTime: now, ...(holder ? { leaseTransitions: transitions } : {}) } },
    });
  }

  /** Deletes the lease if this identity holds it. */
  async delete(): Promise<void> {
    const { namespace, name, identity } = this.opts;
    try {
      const current = await this.api.readNamespacedLease({ namespace, name });
      if (current.spec?.holderIdentity && current.spec.holderIdentity !== identity) return;
      await this.api.deleteNamespacedLease({ namespace, name, body: { preconditions: { resourceVersion: current.metadata?.resourceVersion } } });
    } catch (err) {
      if (!isNotFound(err) && !isConflict(err)) throw toApiError(err);
    }
  }

  /**
   * Renews without reading first when the last lease we wrote is ours (one
   * request instead of two; agents renew one lease per instance). A 409
   * means someone else wrote it since: fall back to read-then-decide.
   */
  private async renewHeld(now: Date): Promise<boolean> {
    const last = this.observed?.lease;
    if (!last || last.spec?.holderIdentity !== this.opts.identity) return false;
    try {
      this.observe(await this.api.replaceNamespacedLease({ namespace: this.opts.namespace, name: this.opts.name, body: { ...last, spec: { ...last.spec, renewTime: now, leaseDurationSeconds: this.opts.leaseDurationSeconds } } }));
      return true;
    } catch (err) {
      if (isConflict(err) || isNotFound(err)) return false;
      throw toApiError(err);
    }
  }

  private observe(lease: V1Lease): void {
    const s = lease.spec ?? {};
    const record = JSON.stringify([s.holderIdentity, s.renewTime, s.acquireTime, s.leaseDurationSeconds]);
    if (this.observed?.record !== record) this.observed = { record, at: this.clock.now(), lease };
    else this.observed.lease = lease;
  }

  private observedExpired(): boolean {
    if (!this.observed) return true;
    const duration = this.observed.lease.spec?.leaseDurationSeconds ?? this.opts.leaseDurationSeconds;
    return this.observed.at + duration * 1000 <= this.clock.now();
  }

  private async create(now: Date): Promise<boolean> {
    const { namespace, name, identity, leaseDurationSeconds, labels } = this.opts;
    const body: V1Lease = {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name, namespace, labels },
      spec: { holderIdentity: identity, leaseDurationSeconds, acquireTime: now, renewTime: now, leaseTransitions: 0 },
    };
    try {
      this.observe(await this.api.createNamespacedLease({ namespace, body }));
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw toApiError(err);
    }
  }

  private async write(lease: V1Lease): Promise<boolean> {
    try {
      this.observe(await this.api.replaceNamespacedLease({ namespace: this.opts.namespace, name: this.opts.name, body: lease }));
      return true;
    } catch (err) {
      if (isConflict(err)) return false;
      throw toApiError(err);
    }
  }
}

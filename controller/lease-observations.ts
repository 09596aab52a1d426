/**
 * Remembers, per Lease, when this controller last saw its record change
 * (holder, renewTime, duration). That local time, plus the lease duration,
 * is when the lease expires as far as this controller may assume — the
 * rule client-go's leader election uses. A restarted controller starts
 * observing afresh, so it waits a full duration before declaring anything
 * expired: slower failover, never an early one.
 */
import type { LeaseObject } from './cache.js';
import type { LeaseView } from './node-health.js';

/** Observation times of leases, keyed namespace/name. */
export class LeaseObservations {
  private readonly seen = new Map<string, { record: string; at: number; renewed: boolean }>();

  /** The lease as observed at now (records the time when its record changed). */
  view(lease: LeaseObject | undefined, now: number): LeaseView | undefined {
    if (!lease) return undefined;
    const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
    const s = lease.spec ?? {};
    const record = JSON.stringify([s.holderIdentity, s.renewTime, s.leaseDurationSeconds, s.acquireTime]);
    let entry = this.seen.get(key);
    // A record seen for the first time proves nothing about its holder being alive now; a change of it does.
    if (!entry || entry.record !== record) this.seen.set(key, (entry = { record, at: now, renewed: entry !== undefined }));
    return { holder: s.holderIdentity ?? undefined, durationSeconds: s.leaseDurationSeconds ?? 0, observedAtMs: entry.at, renewalObserved: entry.renewed };
  }

  /** Forgets a deleted lease. */
  forget(namespace: string, name: string): void {
    this.seen.delete(`${namespace}/${name}`);
  }
}

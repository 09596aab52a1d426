/**
 * Remembers, per Lease, when this controller last saw its record change
 * (holder, renewTime, duration). That local time, plus the lease duration,
 * is when the lease expires as far as this controller may assume — the
 * rule client-go's leader election uses. A restarted controller starts
 * observing afresh, so it waits a full duration before declaring anything
 * expired: slower failover, never an early one. The same holds for a
 * lease that goes missing (deleted): its absence counts from when this
 * controller saw it go, not from some older event.
 */
import type { LeaseObject } from './cache.js';
import type { LeaseView } from './node-health.js';

/** Observation times of leases, keyed namespace/name. */
export class LeaseObservations {
  private readonly seen = new Map<string, { record: string; at: number; renewed: boolean }>();
  // Leases seen missing (deleted, or not there at the first look), and since when.
  private readonly missing = new Map<string, number>();

  /** The lease as observed at now (records the time when its record changed). */
  view(lease: LeaseObject | undefined, now: number): LeaseView | undefined {
    if (!lease) return undefined;
    const key = `${lease.metadata.namespace}/${lease.metadata.name}`;
    const s = lease.spec ?? {};
    const record = JSON.stringify([s.holderIdentity, s.renewTime, s.leaseDurationSeconds, s.acquireTime]);
    this.missing.delete(key);
    let entry = this.seen.get(key);
    // A record seen for the first time proves nothing about its holder being alive now; a change of it does.
    if (!entry || entry.record !== record) this.seen.set(key, (entry = { record, at: now, renewed: entry !== undefined }));
    return { holder: s.holderIdentity ?? undefined, durationSeconds: s.leaseDurationSeconds ?? 0, observedAtMs: entry.at, renewalObserved: entry.renewed };
  }

  /** A lease was deleted at now: what was seen of it no longer counts, and its absence starts. */
  deleted(namespace: string, name: string, now: number): void {
    this.seen.delete(`${namespace}/${name}`);
    this.missing.set(`${namespace}/${name}`, now);
  }

  /** When this controller first saw the lease missing; now, when this is the first look. */
  missingSince(namespace: string, name: string, now: number): number {
    const key = `${namespace}/${name}`;
    const since = this.missing.get(key) ?? now;
    this.missing.set(key, since);
    return since;
  }

  /** Forgets the lease altogether (its node is gone). */
  forget(namespace: string, name: string): void {
    this.seen.delete(`${namespace}/${name}`);
    this.missing.delete(`${namespace}/${name}`);
  }
}

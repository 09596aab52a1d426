/**
 * etcd leases for objects that expire (Events, after kube's event TTL).
 * One lease per `reuseSeconds` window (a minute, or the TTL if shorter) is shared by every object written in
 * that window, as kube-apiserver's lease manager does, so a burst of events
 * costs one LeaseGrant rather than one each.
 */
import type { EtcdStore } from './etcd-store.js';

/** Hands out etcd leases that outlive their objects' TTL by at most `reuseSeconds`. */
export class LeaseManager {
  private current: { id: Promise<string>; grantedAt: number } | null = null;

  constructor(
    private readonly etcd: EtcdStore,
    private readonly ttlSeconds: number,
    private readonly reuseSeconds = Math.min(60, ttlSeconds),
    private readonly now: () => number = Date.now,
  ) {}

  /** A lease id whose expiry is between ttl and ttl + reuseSeconds from now. */
  leaseFor(): Promise<string> {
    const t = this.now();
    if (!this.current || t - this.current.grantedAt > this.reuseSeconds * 1000) {
      const id = this.etcd.grantLease(this.ttlSeconds + this.reuseSeconds);
      id.catch(() => (this.current = null));
      this.current = { id, grantedAt: t };
    }
    return this.current.id;
  }
}

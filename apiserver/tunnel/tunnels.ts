/**
 * Which apiserver replica holds each node's tunnel. A replica keeps its own
 * tunnels in memory and announces each in etcd (`/cairn/tunnels/<cluster>/<node>`
 * → its peer URL), under an etcd lease it keeps alive: when the replica
 * dies, its announcements vanish with the lease. A request that lands on
 * another replica is forwarded to the holder (forward.ts).
 */
import type { Etcd3, Lease } from 'etcd3';
import type { Logger } from 'winston';
import type { NodeTunnel } from './node-tunnel.js';

const PREFIX = '/cairn/tunnels/';
const LEASE_TTL_SECONDS = 10;

/** Where a node's tunnel is: here, at another replica, or nowhere. */
export type TunnelRoute = { local: NodeTunnel } | { peer: string } | undefined;

/** This replica's tunnels and the directory of everyone's. */
export class Tunnels {
  private readonly local = new Map<string, NodeTunnel>();
  private lease: Lease | undefined;

  constructor(
    private readonly etcd: Etcd3,
    readonly peerUrl: string,
    private readonly log: Logger,
    private readonly counted: (open: number) => void = () => undefined,
  ) {}

  /** Takes a newly opened tunnel of a node, ending the one it replaces. */
  attach(cluster: string, tunnel: NodeTunnel): void {
    const key = tunnelKey(cluster, tunnel.node);
    const old = this.local.get(key);
    this.local.set(key, tunnel);
    this.counted(this.local.size);
    if (old && old !== tunnel) old.close('a newer tunnel of this node replaced it');
    tunnel.onClosed(() => {
      if (this.local.get(key) !== tunnel) return;
      this.local.delete(key);
      this.counted(this.local.size);
      void this.withdraw(key);
    });
    void this.announce(key);
  }

  /** Where the node's tunnel is now. */
  async route(cluster: string, node: string): Promise<TunnelRoute> {
    const key = tunnelKey(cluster, node);
    const here = this.local.get(key);
    if (here?.open) return { local: here };
    const holder = await this.etcd.get(key).string();
    return holder && holder !== this.peerUrl ? { peer: holder } : undefined;
  }

  /** Closes every tunnel and drops the announcements (on shutdown). */
  async close(): Promise<void> {
    for (const t of this.local.values()) t.close('the apiserver is shutting down');
    this.local.clear();
    await this.lease?.revoke().catch(() => undefined);
  }

  private async announce(key: string): Promise<void> {
    try {
      await this.currentLease().put(key).value(this.peerUrl).exec();
    } catch (err) {
      this.log.warn('cannot announce a tunnel in etcd; other replicas will not find it', { key, error: String(err) });
    }
  }

  private async withdraw(key: string): Promise<void> {
    await this.etcd.if(key, 'Value', '==', this.peerUrl).then(this.etcd.delete().key(key)).commit().catch(() => undefined);
  }

  /** The lease the announcements live under; a lost one (etcd unreachable too long) is replaced and everything announced again. */
  private currentLease(): Lease {
    if (this.lease) return this.lease;
    const lease = this.etcd.lease(LEASE_TTL_SECONDS);
    lease.on('lost', () => {
      if (this.lease !== lease) return;
      this.lease = undefined;
      for (const key of this.local.keys()) void this.announce(key);
    });
    this.lease = lease;
    return lease;
  }
}

function tunnelKey(cluster: string, node: string): string {
  return `${PREFIX}${cluster}/${node}`;
}

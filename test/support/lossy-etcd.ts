/**
 * Loses the answers of etcd transactions that did commit, the way a leader
 * change does: etcd applies the Txn, then the member that forwarded it
 * answers "etcdserver: leader changed" (gRPC UNAVAILABLE). The loss is
 * injected below the `etcd3` client's retry policy, at the gRPC service
 * client of each host, so the client's own retry re-sends the transaction
 * exactly as it does in production.
 */
import type { Etcd3 } from 'etcd3';

type Callback = (err: Error | null, res?: unknown) => void;
type GrpcMethod = (payload: unknown, metadata: unknown, options: unknown, cb: Callback) => void;
interface PoolHost {
  getServiceClient(name: string): Record<string, unknown>;
}

/** Counts of what the lossy client did. */
export interface LossyTxns {
  /** Transactions sent to etcd, retries included. */
  sent: number;
  /** Committed transactions whose answer was replaced by an error. */
  lost: number;
  /** Makes the answer of each of the next `n` transactions be lost after etcd applied it. */
  loseNext(n?: number): void;
}

/** Wraps `client` (in place) so that armed transactions commit but answer UNAVAILABLE. */
export function loseTxnAnswers(client: Etcd3): LossyTxns {
  let armed = 0;
  const state: LossyTxns = { sent: 0, lost: 0, loseNext: (n = 1) => (armed += n) };
  // The connection pool and its hosts are private to etcd3; a leader change lives exactly there.
  const hosts = (client as unknown as { pool: { hosts: PoolHost[] } }).pool.hosts;
  for (const host of hosts) {
    const original = host.getServiceClient.bind(host);
    host.getServiceClient = (name) => {
      const service = original(name);
      if (name !== 'KV') return service;
      const txn = (service.txn as GrpcMethod).bind(service);
      const lossyTxn: GrpcMethod = (payload, metadata, options, cb) => {
        state.sent++;
        txn(payload, metadata, options, (err, res) => {
          if (err || armed === 0) return cb(err, res);
          armed--;
          state.lost++;
          cb(Object.assign(new Error('14 UNAVAILABLE: etcdserver: leader changed'), { code: 14, details: 'etcdserver: leader changed' }));
        });
      };
      return new Proxy(service, { get: (target, prop, receiver) => (prop === 'txn' ? lossyTxn : Reflect.get(target, prop, receiver)) });
    };
  }
  return state;
}

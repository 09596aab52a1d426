/**
 * Group commit of the apiserver's writes: while `inFlight` transactions are
 * on their way to etcd, the writes that arrive wait and then leave together
 * as one etcd transaction (txn-codec.ts's encodeTxnBatch). Under load that
 * saves most of each write's HTTP/2 stream, etcd proposal and watch message;
 * a write that finds a free slot leaves at once, alone and unchanged, so an
 * idle apiserver adds no delay.
 *
 * A batch holds each key at most once (etcd refuses a transaction that
 * writes a key twice; a second write of a key waits for the next batch),
 * at most `maxOps` writes and `maxBytes` of them. etcd refuses a whole batch
 * for what one of its writes carries (a lease that expired, a request too
 * large for its limits): such a batch, refused with nothing applied, is sent
 * again write by write, so each gets its own answer. Any other failure
 * (etcd unavailable, out of space, a batch that may have been applied) is
 * every write's, as it would have been had each gone alone.
 */
import { EtcdLeaseInvalidError, GRPCInvalidArgumentError, GRPCResourceExhastedError } from 'etcd3';
import type { TxnSender } from './txn-client.js';
import type { TxnIfMod, TxnOutcome } from './txn-codec.js';

/** A sender that can also send several transactions on distinct keys as one. */
export interface BatchTxnSender extends TxnSender {
  txnBatch(txns: readonly TxnIfMod[]): Promise<TxnOutcome[]>;
}

export interface GroupCommitLimits {
  /** Transactions (single or batched) on their way at once. */
  inFlight: number;
  /** Writes in one batch: etcd refuses more than --max-txn-ops (128 by default) at one level. */
  maxOps: number;
  /** Bytes of writes in one batch, well under etcd's --max-request-bytes (1.5 MiB by default). */
  maxBytes: number;
}

export const GROUP_COMMIT_LIMITS: GroupCommitLimits = { inFlight: 2, maxOps: 64, maxBytes: 512 * 1024 };

interface Pending {
  txn: TxnIfMod;
  resolve(outcome: TxnOutcome): void;
  reject(err: unknown): void;
}

export class GroupCommit implements TxnSender {
  private queue: Pending[] = [];
  private inFlight = 0;

  /** `onSent`: told the number of writes in each transaction sent (1 for a write alone). */
  constructor(
    private readonly sender: BatchTxnSender,
    private readonly onSent: (writes: number) => void = () => undefined,
    private readonly limits: GroupCommitLimits = GROUP_COMMIT_LIMITS,
  ) {}

  txnIfMod(txn: TxnIfMod): Promise<TxnOutcome> {
    return new Promise((resolve, reject) => {
      this.queue.push({ txn, resolve, reject });
      this.pump();
    });
  }

  private pump(): void {
    while (this.inFlight < this.limits.inFlight && this.queue.length > 0) {
      const batch = this.nextBatch();
      this.inFlight++;
      void this.send(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  // The oldest writes that fit the limits, each key once; the rest keep their place in the queue.
  private nextBatch(): Pending[] {
    const batch: Pending[] = [];
    const rest: Pending[] = [];
    const keys = new Set<string>();
    let bytes = 0;
    for (const p of this.queue) {
      const key = p.txn.key.toString('latin1');
      const size = txnBytes(p.txn);
      const fits = batch.length === 0 || (batch.length < this.limits.maxOps && bytes + size <= this.limits.maxBytes && !keys.has(key));
      if (fits) {
        batch.push(p);
        keys.add(key);
        bytes += size;
      } else rest.push(p);
    }
    this.queue = rest;
    return batch;
  }

  private async send(batch: Pending[]): Promise<void> {
    if (batch.length === 1) return this.sendAlone(batch[0]!);
    this.onSent(batch.length);
    let outcomes: TxnOutcome[];
    try {
      outcomes = await this.sender.txnBatch(batch.map((p) => p.txn));
    } catch (err) {
      if (!refusedForAWrite(err)) for (const p of batch) p.reject(err);
      else await Promise.all(batch.map((p) => this.sendAlone(p)));
      return;
    }
    batch.forEach((p, i) => p.resolve(outcomes[i]!));
  }

  private sendAlone(p: Pending): Promise<void> {
    this.onSent(1);
    return this.sender.txnIfMod(p.txn).then(p.resolve, p.reject);
  }
}

// etcd's refusals of a whole transaction for what one write in it carries; nothing was applied.
function refusedForAWrite(err: unknown): boolean {
  return err instanceof EtcdLeaseInvalidError || err instanceof GRPCInvalidArgumentError || err instanceof GRPCResourceExhastedError;
}

function txnBytes(t: TxnIfMod): number {
  return t.key.length + ('put' in t.then ? t.then.put.length : 0);
}

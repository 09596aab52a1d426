/**
 * Where EtcdStore sends its write transactions (txn-codec.ts's TxnIfMod).
 *
 * The apiserver sends them over thin HTTP/2 channels (grpc-channel.ts) with
 * the fault handling the etcd3 client gives every other call, restated here:
 * each attempt goes to a member in random order, skipping one whose circuit
 * breaker is open (the same per-host policy, fault-handling.ts, with its
 * NOSPACE handling), gets the point-call deadline, and a recoverable failure
 * is re-sent up to three attempts in all (etcd3's default global policy) and
 * reconnects that member. EtcdStore recognises a re-sent write that had
 * committed. Tools and tests that hold only an etcd3 client send the same
 * transaction through it (etcd3Txns).
 */
import { handleWhen, isBrokenCircuitError, retry, type IPolicy } from 'cockatiel';
import { isRecoverableError, type Etcd3 } from 'etcd3';
import { POINT_CALL_DEADLINE_MS } from './fault-handling.js';
import { GrpcChannel, wasSent, type ChannelTls } from './grpc-channel.js';
import { EtcdNoSpaceError } from './no-space.js';
import { decodeTxnOutcome, encodeTxnIfMod, type TxnIfMod, type TxnOutcome } from './txn-codec.js';

/** Sends EtcdStore's write transactions. */
export interface TxnSender {
  txnIfMod(t: TxnIfMod): Promise<TxnOutcome>;
}

const TXN_METHOD = '/etcdserverpb.KV/Txn';

interface Host {
  channel: GrpcChannel;
  policy: IPolicy;
}

/**
 * A write that failed after at least one attempt reached etcd: it may have been applied. Not answered as
 * a 503 with Retry-After, which client-go retries by itself for any verb: a create, a generateName, a
 * JSON patch that appends would then be carried out twice.
 */
export class AmbiguousWriteError extends Error {
  override readonly name = 'AmbiguousWriteError';

  constructor(cause: unknown) {
    super(`etcd did not answer a write that reached it, so it may or may not have been applied: ${String((cause as Error)?.message ?? cause)}`, { cause });
  }
}

/** The write transactions over one thin channel per etcd member. */
export class ThinTxnClient implements TxnSender {
  private readonly hosts: Host[];
  private readonly attempts = retry(handleWhen(isRecoverableError), { maxAttempts: 3 });

  /** `hostPolicy`: a fresh per-member policy (the etcd3 client's `faultHandling.host`). */
  constructor(endpoints: string[], hostPolicy: () => IPolicy, tls?: ChannelTls) {
    this.hosts = endpoints.map((e) => ({ channel: new GrpcChannel(e, tls), policy: hostPolicy() }));
  }

  async txnIfMod(t: TxnIfMod): Promise<TxnOutcome> {
    const message = encodeTxnIfMod(t);
    let failure: unknown;
    let sent: unknown;
    const send = (c: GrpcChannel) =>
      c.unary(TXN_METHOD, message, POINT_CALL_DEADLINE_MS).catch((err: unknown) => {
        failure = err;
        if (wasSent(err)) sent = err;
        return Promise.reject(err);
      });
    try {
      const order = inTurn(shuffled(this.hosts)); // a re-sent attempt goes to the next member, as in etcd3
      const outcome = decodeTxnOutcome(await this.attempts.execute(() => this.onSomeMember(order, send)));
      return sent ? { ...outcome, resent: true } : outcome;
    } catch (err) {
      // A NOSPACE refusal says more (507, and how to free space) than an earlier attempt's open outcome.
      if (sent && !(err instanceof EtcdNoSpaceError)) throw new AmbiguousWriteError(sent);
      // As etcd3 does: when the last attempt found every breaker open, the failure that opened them says more.
      throw isBrokenCircuitError(err) && failure ? failure : err;
    }
  }

  /** Closes every member's connection. */
  close(): void {
    for (const h of this.hosts) h.channel.close();
  }

  // One attempt: the next member in `order` whose breaker lets the call through. A call that reached
  // a member fails as it failed there; when no breaker let it through, the last refusal says so.
  private async onSomeMember<T>(order: Iterator<Host>, call: (channel: GrpcChannel) => Promise<T>): Promise<T> {
    let refusal: unknown;
    for (let i = 0; i < this.hosts.length; i++) {
      const host = order.next().value as Host;
      let reached = false;
      try {
        return await host.policy.execute(() => {
          reached = true;
          return call(host.channel);
        });
      } catch (err) {
        if (err instanceof Error && isRecoverableError(err)) host.channel.reset();
        if (reached) throw err;
        refusal = err;
      }
    }
    throw refusal ?? new Error('no etcd endpoints');
  }
}

/** The write transactions through an etcd3 client and its own fault handling. */
export function etcd3Txns(client: Etcd3): TxnSender {
  return {
    async txnIfMod(t) {
      const write = 'put' in t.then ? { request_put: { key: t.key, value: t.then.put, lease: t.then.lease } } : { request_delete_range: { key: t.key } };
      const res = await client.kv.txn({
        compare: [{ key: t.key, target: 'Mod', result: 'Equal', mod_revision: String(t.modRevision) }],
        success: [write],
        failure: [{ request_range: { key: t.key } }],
      });
      const kv = res.responses[0]?.response_range?.kvs?.[0];
      return { succeeded: res.succeeded, revision: Number(res.header.revision), ...(kv ? { kv } : {}) };
    },
  };
}

function* inTurn<T>(items: T[]): Iterator<T> {
  for (;;) yield* items;
}

function shuffled<T>(items: T[]): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

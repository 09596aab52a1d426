/**
 * The etcd client's per-host policy: a circuit breaker that opens on
 * failures of the host (refused connections, timeouts) and nothing else.
 *
 * etcd3 counts gRPC RESOURCE_EXHAUSTED as a recoverable host failure, and
 * NOSPACE comes with that code: left alone, three refused writes would open
 * the breaker and cut off reads too, and each one would also be retried and
 * make etcd3 reset the host's gRPC clients. So a NOSPACE refusal is turned
 * into an EtcdNoSpaceError inside the breaker: not counted, not retried, no
 * reset. Policies run per call, with no state besides the breaker's own.
 */
import { circuitBreaker, ConsecutiveBreaker, handleWhen, type IPolicy } from 'cockatiel';
import { isRecoverableError } from 'etcd3';
import { isNoSpace } from './no-space.js';

/** True for an error that says the etcd host is unreachable or failing, as opposed to refusing one request. */
export function isHostFailure(err: unknown): boolean {
  return err instanceof Error && isRecoverableError(err) && !isNoSpace(err);
}

/**
 * A fresh policy for one etcd host. `onNoSpace` gets each NOSPACE refusal
 * and returns the error to throw instead (it also tells the alarm monitor).
 */
export function etcdHostPolicy(onNoSpace: (cause: unknown) => Error): IPolicy {
  // etcd3's default breaker stays open for 5 s after etcd comes back; 1 s lets an
  // embedded etcd restarted by its supervisor serve again almost at once.
  const breaker = circuitBreaker(handleWhen(isHostFailure), { halfOpenAfter: 1000, breaker: new ConsecutiveBreaker(3) });
  return {
    _altReturn: undefined as never,
    onSuccess: breaker.onSuccess,
    onFailure: breaker.onFailure,
    execute: (fn, signal) =>
      breaker.execute(async (context) => {
        try {
          return await fn(context);
        } catch (err) {
          throw isNoSpace(err) ? onNoSpace(err) : err;
        }
      }, signal),
  };
}

/**
 * Longest wait for one attempt of a single-key call before another member is tried: under the node
 * lease's renewal timeout (its heartbeat interval, 1-2 s), so that a renewal whose call went to a cut
 * member is retried on another one and still answered in time.
 */
export const POINT_CALL_DEADLINE_MS = 1_000;
/** Longest wait for one attempt of anything else that is not a stream (a page of a scan, a compaction). */
export const LONG_CALL_DEADLINE_MS = 30_000;

/** What etcd3 tells the call-options factory about a call. */
export interface EtcdCallContext {
  service: string;
  method: string;
  isStream: boolean;
  params?: unknown;
}

/**
 * The deadline of one attempt of an etcd call. Without one, a call sent to a member that a partition
 * cut off waits until TCP gives up (minutes), and etcd3 picks members at random: a third of the calls
 * to a three-member cluster would hang for as long as the cut lasts, node lease renewals among them.
 * With it the attempt fails with DEADLINE_EXCEEDED, which etcd3 retries on another member and counts
 * against the cut member's circuit breaker (three in a row and it is skipped). A write whose answer
 * was lost this way is recognised by EtcdStore on the retry. Streams (watches, lease keep-alives) get
 * no deadline: the watch cache's stream to a cut member stalls until the cut heals, and consistent
 * reads meanwhile fall back to etcd after a second (rest/lister.ts).
 */
export function etcdCallOptions(context: EtcdCallContext): { deadline?: number } {
  if (context.isStream) return {};
  const params = (context.params ?? {}) as { range_end?: unknown };
  const point = context.service === 'KV' && ['range', 'put', 'txn', 'deleteRange'].includes(context.method) && !params.range_end;
  return { deadline: Date.now() + (point || context.service === 'Lease' ? POINT_CALL_DEADLINE_MS : LONG_CALL_DEADLINE_MS) };
}

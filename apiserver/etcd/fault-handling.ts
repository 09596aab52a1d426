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

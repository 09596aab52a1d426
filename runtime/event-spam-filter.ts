/**
 * client-go's EventSourceObjectSpamFilter: each object an Event is about has a token bucket (25 at
 * most, one more every 5 minutes), and an Event with no token left is dropped. A reconcile that
 * fails on every retry would otherwise write its Event (a create, then a count bump) on every
 * attempt, for as long as it fails. Pure arithmetic over the times it is given.
 */

/** Events about one object in a burst, and how often one more is allowed after it (client-go's defaults). */
export const SPAM_BURST = 25;
export const SPAM_REFILL_MS = 5 * 60_000;
const MAX_OBJECTS = 4096;

/** Decides, per object, whether one more Event about it may be written now. */
export class EventSpamFilter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  /** Takes a token of `object`'s bucket at `now` (ms) if one is left; whether one was. */
  allow(object: string, now: number): boolean {
    const last = this.buckets.get(object);
    const tokens = last ? Math.min(SPAM_BURST, last.tokens + (now - last.at) / SPAM_REFILL_MS) : SPAM_BURST;
    const allowed = tokens >= 1;
    // Most recent last: the oldest object is forgotten first, and starts again with a full bucket.
    this.buckets.delete(object);
    this.buckets.set(object, { tokens: allowed ? tokens - 1 : tokens, at: now });
    if (this.buckets.size > MAX_OBJECTS) this.buckets.delete(this.buckets.keys().next().value!);
    return allowed;
  }
}

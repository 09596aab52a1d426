/**
 * When this controller first saw each value of a slot, on its own clock.
 * Timestamps other processes write (an agent's joinedAt or finishedAt) are
 * on their clocks, which may be hours off (docs/fencing.md, clock
 * assumptions): "how long ago" is measured from when the controller saw
 * them instead, as lease expiry is (lease-observations.ts). In memory: a
 * restarted controller sees every value anew, which only waits longer.
 * One entry per slot (a brick of a Volume), replaced when its value changes.
 */
export class FirstSeen {
  private readonly seen = new Map<string, { value: string; at: number }>();

  /** When `value` was first seen in `slot`: `now` if it is new there. */
  at(slot: string, value: string, now: number): number {
    const s = this.seen.get(slot);
    if (s?.value === value) return s.at;
    this.seen.set(slot, { value, at: now });
    return now;
  }
}

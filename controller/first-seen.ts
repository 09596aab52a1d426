/**
 * When this controller first saw each value of a slot, on its own clock.
 * Timestamps other processes write (an agent's joinedAt or finishedAt) are
 * on their clocks, which may be hours off (docs/fencing.md, clock
 * assumptions): "how long ago" is measured from when the controller saw
 * them instead, as lease expiry is (lease-observations.ts). A value that
 * changes while the controller watches counts from that moment. A value
 * already there when it first looks (after a restart, say) counts from
 * what it claims, but never from the future: a restarted controller then
 * finds settled what was settled, and writes nothing new, while a clock
 * ahead of its own cannot hold a settle for hours.
 * One entry per slot (a brick of a Volume), replaced when its value changes
 * and dropped with its object.
 */
export class FirstSeen {
  private readonly seen = new Map<string, { value: string; at: number }>();

  /** When `value` was first seen in `slot`; `claimed` is the time the value itself states (its timestamp). */
  at(slot: string, value: string, now: number, claimed: number): number {
    const s = this.seen.get(slot);
    if (s?.value === value) return s.at;
    const at = s ? now : Math.min(now, Number.isNaN(claimed) ? now : claimed);
    this.seen.set(slot, { value, at });
    return at;
  }

  /** Drops every slot whose name starts with `prefix` (their object is gone). */
  forget(prefix: string): void {
    for (const slot of this.seen.keys()) if (slot.startsWith(prefix)) this.seen.delete(slot);
  }
}

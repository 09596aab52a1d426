/**
 * A fixed-capacity ring of items ordered by a non-decreasing revision, with
 * a binary search for "everything after revision N" (the watch cache's
 * replay window).
 */

/** A bounded, revision-ordered buffer; pushing past capacity drops the oldest item. */
export class RevisionRing<T extends { rev: number }> {
  private items: (T | undefined)[];
  private start = 0;
  private size = 0;

  constructor(readonly capacity: number) {
    this.items = new Array(capacity);
  }

  /** Appends, returning the dropped oldest item when full. */
  push(item: T): T | undefined {
    if (this.size < this.capacity) {
      this.items[(this.start + this.size++) % this.capacity] = item;
      return undefined;
    }
    const dropped = this.items[this.start];
    this.items[this.start] = item;
    this.start = (this.start + 1) % this.capacity;
    return dropped;
  }

  /** Every item with rev > `rev`, oldest first. */
  after(rev: number): T[] {
    let lo = 0;
    let hi = this.size;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.at(mid).rev <= rev) lo = mid + 1;
      else hi = mid;
    }
    const out: T[] = [];
    for (let i = lo; i < this.size; i++) out.push(this.at(i));
    return out;
  }

  /** Empties the ring. */
  clear(): void {
    this.items = new Array(this.capacity);
    this.start = 0;
    this.size = 0;
  }

  get length(): number {
    return this.size;
  }

  private at(i: number): T {
    return this.items[(this.start + i) % this.capacity] as T;
  }
}

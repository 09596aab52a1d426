/**
 * "What is etcd's revision now?" for consistent reads from the watch cache,
 * shared between concurrent readers. A reader may only use an answer to a
 * question asked after it arrived (else it could miss a write acknowledged
 * just before it), so readers that arrive while a fetch is in flight wait
 * for the next one, and all of them share it: N reads per round trip.
 */

/** Coalesces concurrent requests for the current revision. */
export class RevisionBarrier {
  private inflight: Promise<number> | null = null;
  private next: Promise<number> | null = null;

  constructor(private readonly fetchRevision: () => Promise<number>) {}

  /** A revision read from etcd after this call was made. */
  current(): Promise<number> {
    if (!this.inflight) return this.start();
    if (!this.next) {
      const after = () => {
        this.next = null;
        return this.start();
      };
      this.next = this.inflight.then(after, after);
    }
    return this.next;
  }

  private start(): Promise<number> {
    const p = this.fetchRevision();
    this.inflight = p;
    const clear = () => {
      if (this.inflight === p) this.inflight = null;
    };
    p.then(clear, clear);
    return p;
  }
}

/**
 * Skips reconciles that would act on a version of an object this process
 * has itself already replaced. Right after a write the informer still
 * holds the old version for a moment; reconciling it would only produce a
 * 409 and a backoff. The watch event of our own write wakes the key again,
 * so skipping loses nothing. resourceVersions are compared for equality
 * only (they are opaque), and each key remembers just its last few.
 */

const REMEMBERED = 4;

/** Versions this process has superseded, per object key. */
export class StaleGuard {
  private readonly superseded = new Map<string, string[]>();

  /** Records that the version rv of key has been replaced by a write of ours. */
  replaced(key: string, rv: string | undefined): void {
    if (!rv) return;
    const list = this.superseded.get(key) ?? [];
    list.push(rv);
    if (list.length > REMEMBERED) list.shift();
    this.superseded.set(key, list);
  }

  /** Whether obj is a version we already replaced (the cache lags behind our own write). */
  isStale(key: string, rv: string | undefined): boolean {
    return !!rv && (this.superseded.get(key)?.includes(rv) ?? false);
  }

  /** Forgets a deleted object. */
  forget(key: string): void {
    this.superseded.delete(key);
  }
}

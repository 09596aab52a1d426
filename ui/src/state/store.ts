/**
 * The keyed store one watched collection is kept in, and the pure reducer
 * that applies watch events to it. Objects are keyed `namespace/name`. A
 * store never goes back in time: an event older than what the store already
 * reflects (a late event of a watch that was replaced by a relist, or a
 * duplicate) is ignored, for the store as a whole (its resourceVersion)
 * and for each object (its own resourceVersion). Unchanged objects keep
 * their identity, so views can skip re-rendering them.
 */
import type { KubeObject } from '../api/paths';

/** One line of a watch stream. */
export type WatchEvent<T> =
  | { type: 'ADDED' | 'MODIFIED' | 'DELETED'; object: T }
  | { type: 'BOOKMARK'; object: { metadata: { resourceVersion?: string } } }
  | { type: 'ERROR'; object: { code?: number; message?: string; reason?: string } };

export interface Collection<T> {
  readonly items: ReadonlyMap<string, T>;
  /** Everything up to this resourceVersion is reflected; a watch resumes from here. */
  readonly resourceVersion: string;
  /** Whether a list has been loaded (until then the collection is only a placeholder). */
  readonly synced: boolean;
}

/** The collection before its first list. */
export function emptyCollection<T>(): Collection<T> {
  return { items: new Map(), resourceVersion: '0', synced: false };
}

/** The key of an object in its collection. */
export function objectKey(o: KubeObject): string {
  return `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;
}

/**
 * Compares two resourceVersions: negative when a is older. They are etcd
 * revisions (decimal integers of any size), compared without losing
 * precision; an opaque (non-numeric) version counts as newer, so it is
 * never wrongly dropped.
 */
export function compareResourceVersions(a: string | undefined, b: string | undefined): number {
  const numeric = /^\d+$/;
  if (a === undefined || b === undefined || !numeric.test(a) || !numeric.test(b)) return a === b ? 0 : 1;
  const x = a.replace(/^0+(?=\d)/, '');
  const y = b.replace(/^0+(?=\d)/, '');
  if (x.length !== y.length) return x.length - y.length;
  return x < y ? -1 : x > y ? 1 : 0;
}

/** The collection a list answer stands for: it replaces everything known before. */
export function relist<T extends KubeObject>(items: readonly T[], resourceVersion: string): Collection<T> {
  return { items: new Map(items.map((o) => [objectKey(o), o])), resourceVersion, synced: true };
}

/** The collection after `events`, in order; the same collection when none of them changes it. */
export function applyEvents<T extends KubeObject>(collection: Collection<T>, events: readonly WatchEvent<T>[]): Collection<T> {
  let items: Map<string, T> | undefined; // copied on the first change only
  let rv = collection.resourceVersion;
  for (const event of events) {
    if (event.type === 'ERROR') continue;
    const eventRv = event.object.metadata.resourceVersion;
    // Older: already reflected. The same version may be another object's change of that revision (one transaction
    // can change several keys, as a lease's expiry deletes all its Events): the object's own version decides below.
    if (compareResourceVersions(eventRv, rv) < 0) continue;
    rv = eventRv ?? rv;
    if (event.type === 'BOOKMARK') continue;
    const current = items ?? collection.items;
    const key = objectKey(event.object);
    const known = current.get(key);
    if (known && compareResourceVersions(eventRv, known.metadata.resourceVersion) <= 0) continue;
    if (event.type === 'DELETED' && !known) continue;
    items ??= new Map(collection.items);
    if (event.type === 'DELETED') items.delete(key);
    else items.set(key, event.object);
  }
  if (items === undefined && rv === collection.resourceVersion) return collection;
  return { items: items ?? collection.items, resourceVersion: rv, synced: collection.synced };
}

const naturalOrder = new Intl.Collator(undefined, { numeric: true });

/** The objects of a collection sorted by namespace, then name, numbers in names by value (web-2 before web-10). */
export function sortedItems<T extends KubeObject>(collection: Collection<T>): T[] {
  return [...collection.items.values()].sort((a, b) => naturalOrder.compare(objectKey(a), objectKey(b)));
}

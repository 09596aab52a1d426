/**
 * A watch served straight from etcd, for a resourceVersion older than the
 * watch cache's ring (after an apiserver restart, say). It replays history
 * from etcd, so it answers 410 Expired when that history was compacted.
 */
import type { Watcher } from 'etcd3';
import { EtcdStore, mapEtcdErrors } from './etcd-store.js';
import { deletedState, toWatchEvent, type Predicate, type WatchEvent } from './events.js';
import { prefixEnd } from './watch-cache.js';
import { resumeAfterDelivered } from './watch-resume.js';

// A value that is not a Cairn object (written by someone else) is passed over, never thrown at the event loop.
function tryDecode(store: EtcdStore, key: string, value: Buffer, rev: string) {
  try {
    return store.decode(key, value, rev);
  } catch {
    return null;
  }
}

/** Handle on a running direct watch. */
export interface DirectWatch {
  stop(): Promise<void>;
}

/** Watches keys under `prefix` for every change after `fromRev`. Throws 410 if that is compacted. */
export async function watchEtcd(
  store: EtcdStore,
  prefix: string,
  fromRev: number,
  matches: Predicate,
  onEvent: (ev: WatchEvent) => void,
  onClose: (err?: unknown) => void,
): Promise<DirectWatch> {
  // Reading one key at fromRev fails with "compacted" exactly when the watch would.
  await mapEtcdErrors(() => store.range(prefix, prefixEnd(prefix), fromRev, 1));
  const watcher: Watcher = await store.client.watch().prefix(prefix).withPreviousKV().startRevision(String(fromRev + 1)).create();
  let delivered = fromRev;
  resumeAfterDelivered(watcher, () => delivered);
  watcher.on('data', (res) => {
    for (const e of res.events) {
      const rev = Number(e.kv.mod_revision);
      delivered = Math.max(delivered, rev);
      const key = e.kv.key.toString();
      const prev = e.prev_kv ? tryDecode(store, key, e.prev_kv.value, e.prev_kv.mod_revision) : null;
      const obj = e.type === 'Delete' ? null : tryDecode(store, key, e.kv.value, e.kv.mod_revision);
      const out = obj
        ? toWatchEvent({ type: 'put', key, rev, obj, prev }, matches)
        : prev && toWatchEvent({ type: 'delete', key, rev, obj: deletedState(prev, rev), prev }, matches);
      if (out) onEvent(out);
    }
  });
  // etcd cancelled it (its start compacted while it replayed): a cancel() now would wait for an answer that never
  // comes, holding the watcher's listeners (and this request's stream) until etcd3's watch stream reconnects.
  let cancelledByEtcd = false;
  watcher.on('error', (err) => {
    cancelledByEtcd = true;
    watcher.removeAllListeners();
    watcher.on('error', () => undefined);
    onClose(err);
  });
  return { stop: () => (cancelledByEtcd ? Promise.resolve() : watcher.cancel().catch(() => undefined)) };
}

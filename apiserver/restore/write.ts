/**
 * Writes what merge.ts chose into an etcd (docs/restore.md), through the
 * apiserver's own storage layer (EtcdStore: its keys, its encoding without
 * resourceVersion, its size limit).
 *
 * Revisions: a new etcd starts at revision 1, while the agents' informers
 * and their compare-and-swap writes carry resourceVersions of the lost
 * store. Before writing, the store's revision is raised past the highest of
 * those (plus a margin for writes no copy saw) by writes to a scratch key
 * outside /registry/, and history is compacted there. So every restored
 * object gets a resourceVersion above any old one (an old version never
 * matches in a compare-and-swap: 409), and a watch or list from an old
 * version is answered 410 Gone: clients list again instead of waiting for
 * a "future" revision. etcd 3.4 has no `--bump-revision`; one write per
 * revision is the price (thousands per second, pipelined).
 *
 * Concurrency: one caller; the puts of the bump run POOL at a time.
 */
import { randomUUID } from 'node:crypto';
import type { Etcd3 } from 'etcd3';
import type { KubeObject } from '../storage/codec.js';
import { EtcdStore } from '../storage/etcd-store.js';
import { REGISTRY_PREFIX } from '../storage/keys.js';
import type { RestoredObject } from './merge.js';

/** The scratch key the revision is raised with (outside /registry/, so no cache ever holds it). */
const BUMP_KEY = '/cairn-restore/revision';
const POOL = 64;

/** The restore would write over an etcd that already holds Cairn objects. */
export class RestoreRefused extends Error {}

/** What a restore wrote. */
export interface WriteOutcome {
  /** The revision history was compacted at: every resourceVersion at or below it is gone (410). */
  compactedAt: number;
  created: number;
  /** Objects that were there already (only with force) and were overwritten. */
  replaced: number;
}

/** Options of writeRestored. */
export interface WriteOptions {
  /** Write even when etcd already holds objects under /registry/ (overwriting the keys restored). */
  force: boolean;
  /** The revision to raise the store past before writing (the highest old resourceVersion plus a margin). */
  floorRevision: number;
  now: Date;
}

/** Writes the objects into etcd after raising and compacting its revision; refuses a non-empty etcd unless forced. */
export async function writeRestored(client: Etcd3, objects: readonly RestoredObject[], opts: WriteOptions): Promise<WriteOutcome> {
  const store = new EtcdStore(client);
  const existing = Number(await client.getAll().prefix(REGISTRY_PREFIX).count());
  if (existing > 0 && !opts.force) {
    throw new RestoreRefused(
      `etcd already holds ${existing} Cairn keys under ${REGISTRY_PREFIX}: restoring into it would mix the agents' copies with another store. ` +
        "Restore into an empty etcd (for cairn server, stop it and move its data dir's etcd/ folder away), or pass --force to write the agents' copies over the keys they name",
    );
  }
  await raiseRevision(store, opts.floorRevision);
  const compactedAt = await store.currentRevision();
  await store.compact(compactedAt);
  let created = 0;
  let replaced = 0;
  for (const o of objects) {
    const obj = prepared(o.obj, opts.now);
    const first = await store.create(o.key, obj);
    if (first.ok) created++;
    else if (await overwrite(store, o.key, obj)) replaced++;
  }
  return { compactedAt, created, replaced };
}

/** Puts to the scratch key until the store's revision reaches `floor`, then deletes it. */
export async function raiseRevision(store: EtcdStore, floor: number): Promise<void> {
  for (let rev = await store.currentRevision(); rev < floor; rev = await store.currentRevision()) {
    const wave = Math.min(POOL, floor - rev);
    await Promise.all(Array.from({ length: wave }, () => store.client.put(BUMP_KEY).value(String(rev)).exec()));
  }
  await store.client.delete().key(BUMP_KEY).exec();
}

/** With --force, an existing key is replaced at the version read (a race with another writer fails loudly). */
async function overwrite(store: EtcdStore, key: string, obj: KubeObject): Promise<boolean> {
  const current = await store.get(key);
  const res = current ? await store.update(key, obj, current) : await store.create(key, obj);
  if (!res.ok) throw new Error(`${key} changed while it was being restored; is an apiserver writing to this etcd? Stop it and restore again`);
  return current !== null;
}

/** The object as stored: its own uid and creation time kept; one made up from a node credential gets them now. */
function prepared(obj: KubeObject, now: Date): KubeObject {
  const metadata = { ...obj.metadata, uid: obj.metadata.uid ?? randomUUID(), creationTimestamp: obj.metadata.creationTimestamp ?? now.toISOString().replace(/\.\d{3}Z$/, 'Z') };
  return { ...obj, metadata };
}

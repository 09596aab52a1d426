/**
 * Change events: what the store saw (a put or a delete of one key at one
 * revision) and what a watcher is told (ADDED / MODIFIED / DELETED after its
 * selector is applied to the old and new state, as kube's cacher does: an
 * object that starts matching is ADDED, one that stops matching is DELETED).
 */
import type { KubeObject } from './codec.js';

/** One change in etcd, decoded. */
export interface StoreEvent {
  type: 'put' | 'delete';
  key: string;
  rev: number;
  /** The new state; for a delete, the last state with resourceVersion = the deletion revision. */
  obj: KubeObject;
  /** The state before this change, when known. */
  prev: KubeObject | null;
}

/** What a watcher receives. */
export interface WatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED';
  object: KubeObject;
  rev: number;
}

/** Whether an object is one a watcher or list asked for. */
export type Predicate = (obj: KubeObject) => boolean;

/** The event `ev` as seen through `matches`, or null when the watcher should not hear of it. */
export function toWatchEvent(ev: StoreEvent, matches: Predicate): WatchEvent | null {
  const was = ev.prev !== null && matches(ev.prev);
  if (ev.type === 'delete') return was ? { type: 'DELETED', object: ev.obj, rev: ev.rev } : null;
  const is = matches(ev.obj);
  if (is) return { type: was ? 'MODIFIED' : 'ADDED', object: ev.obj, rev: ev.rev };
  // As kube's cacher: the watcher last saw the old state, so that is what it is told went away.
  return was ? { type: 'DELETED', object: deletedState(ev.prev!, ev.rev), rev: ev.rev } : null;
}

/** The last state of a deleted object, stamped with the deletion revision. */
export function deletedState(prev: KubeObject, rev: number): KubeObject {
  return { ...prev, metadata: { ...prev.metadata, resourceVersion: String(rev) } };
}

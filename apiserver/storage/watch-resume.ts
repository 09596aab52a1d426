/**
 * Where an etcd3 Watcher resumes after its stream reconnects. etcd3 resumes
 * from the revision in the last response header it saw, plus one; a
 * create response's header is etcd's current revision, not how far the
 * events have come (etcd PR #6852), and so is a catch-up batch's. A stream
 * that drops again before its catch-up events arrive (a rolling etcd
 * restart) would lose them for good: an apiserver's cache would miss
 * acknowledged writes, and serve stale reads. Resumed from the revision
 * after the last event delivered, nothing is skipped.
 */
import type { Watcher } from 'etcd3';

/** Makes `watcher` resume, after each disconnect, from the revision after `delivered()`. */
export function resumeAfterDelivered(watcher: Watcher, delivered: () => number): void {
  watcher.on('disconnected', () => {
    watcher.request.start_revision = String(delivered() + 1);
  });
}

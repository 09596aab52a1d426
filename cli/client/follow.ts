/**
 * Following a collection until the user stops it (`get -w`): a watch from
 * the listed resourceVersion, resumed from the last version seen whenever
 * the server ends it (watches time out after 30-60 minutes), ended by
 * Ctrl-C, SIGTERM or a closed stdout. A 410 Expired (the version was
 * compacted away while the watch was down) re-lists, as an informer does,
 * and watches on from the new list; any other ERROR event or failed request
 * ends it with that error, as kubectl does. A watch the server closes
 * within a second is followed by a one-second pause, so a server that
 * keeps refusing is never hammered.
 *
 * Concurrency: one watch at a time; events arrive on the event loop and
 * are handed to `onChange` in order. The interruption wins every race: a
 * pause, a relist or a watch in progress is abandoned when it comes.
 */
import { ApiStatusError, isGone } from '../../api/client/errors.js';
import { untilInterrupted, type Interruption } from './interrupt.js';
import type { WatchHandle } from './api-client.js';

/** What a watch event carries: an object, a one-row Table, a bookmark or a Status. */
interface EventObject {
  metadata?: { resourceVersion?: string };
  code?: number;
  reason?: string;
  message?: string;
}

/** How long a watch must last not to count as closed at once. */
export const QUICK_CLOSE_MS = 1000;
/** The pause before re-watching after a watch that was closed at once. */
export const RETRY_DELAY_MS = 1000;

/** What to do once a watch has ended: watch on, list again first, or give up with the error. */
export type NextStep = { action: 'resume' | 'relist'; delayMs: number } | { action: 'fail'; error: unknown };

/**
 * Decides what follows a watch that ended with `failure` (undefined: the
 * server closed it cleanly) after lasting `lastedMs`. Pure.
 */
export function nextStep(failure: unknown, lastedMs: number): NextStep {
  const delayMs = lastedMs < QUICK_CLOSE_MS ? RETRY_DELAY_MS : 0;
  if (failure === undefined) return { action: 'resume', delayMs };
  if (isGone(failure)) return { action: 'relist', delayMs };
  return { action: 'fail', error: failure };
}

/** Where followChanges gets its changes from. */
export interface ChangeSource {
  /** Starts a watch from `resourceVersion`, calling `onEvent(type, object)` for each event. */
  watch(resourceVersion: string | undefined, onEvent: (type: string, obj: unknown) => void): Promise<WatchHandle>;
  /** Lists again after a 410 (printing what changed); resolves with the list's resourceVersion. */
  relist(): Promise<string | undefined>;
}

/** The clock, delays and interruption of followChanges; tests replace them. */
export interface FollowOptions {
  now?: () => number;
  sleep?: (ms: number) => Promise<void>;
  interruption?: Interruption;
}

const realSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Calls `onChange(type, object)` for every ADDED/MODIFIED/DELETED event after
 * `resourceVersion` until interrupted; resolves with the exit code of the interruption.
 */
export async function followChanges(
  source: ChangeSource,
  resourceVersion: string | undefined,
  onChange: (type: string, obj: unknown) => void,
  opts: FollowOptions = {},
): Promise<number> {
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? realSleep;
  const interruption = opts.interruption ?? untilInterrupted();
  // undefined when the work finished first; the exit code when the interruption did.
  const unlessInterrupted = (work: Promise<unknown>) => Promise.race([work.then(() => undefined), interruption.done]);
  let rv = resourceVersion;
  let relist = false;
  try {
    for (;;) {
      if (relist) {
        const code = await unlessInterrupted(source.relist().then((listed) => (rv = listed)));
        if (code !== undefined) return code;
      }
      let failure: unknown;
      const onEvent = (type: string, obj: unknown) => {
        const o = obj as EventObject;
        if (type === 'ERROR') {
          failure ??= new ApiStatusError(o.code ?? 500, o.reason ?? 'InternalError', o.message ?? 'watch failed');
          return;
        }
        if (failure) return;
        rv = o.metadata?.resourceVersion ?? rv;
        if (type !== 'BOOKMARK') onChange(type, obj);
      };
      const started = now();
      const connecting = source.watch(rv, onEvent);
      const interrupted = await unlessInterrupted(connecting);
      if (interrupted !== undefined) {
        // The watch may still connect (or fail) after Ctrl-C: stop it then, and ignore its failure.
        connecting.then((h) => h.stop(), () => undefined);
        return interrupted;
      }
      const handle = await connecting;
      const code = await unlessInterrupted(handle.done.catch((err: unknown) => void (failure ??= err)));
      handle.stop();
      if (code !== undefined) return code;
      const step = nextStep(failure, now() - started);
      if (step.action === 'fail') throw step.error;
      if (step.delayMs > 0) {
        const stopped = await unlessInterrupted(sleep(step.delayMs));
        if (stopped !== undefined) return stopped;
      }
      relist = step.action === 'relist';
    }
  } finally {
    if (!opts.interruption) interruption.dispose();
  }
}

/** An object's identity and version, as a watch event or a table row carries them. */
export interface VersionedMeta {
  name?: string;
  namespace?: string;
  resourceVersion?: string;
}

/**
 * The resourceVersion last printed for each object, so that a relist prints
 * only the objects that are new or changed since (objects deleted while the
 * watch was down are dropped silently: the list no longer has them to print).
 */
export class PrintedVersions {
  private readonly versions = new Map<string, string | undefined>();

  /** Notes an object as printed; a deletion forgets it. */
  record(meta: VersionedMeta | undefined, deleted = false): void {
    if (!meta) return;
    if (deleted) this.versions.delete(key(meta));
    else this.versions.set(key(meta), meta.resourceVersion);
  }

  /** The listed items to print (new or changed); the list becomes what was printed. */
  relisted<T>(items: readonly T[], metaOf: (item: T) => VersionedMeta | undefined): T[] {
    const before = new Map(this.versions);
    this.versions.clear();
    return items.filter((item) => {
      const meta = metaOf(item);
      if (!meta) return true;
      const k = key(meta);
      const changed = !before.has(k) || before.get(k) !== meta.resourceVersion;
      this.versions.set(k, meta.resourceVersion);
      return changed;
    });
  }
}

function key(meta: VersionedMeta): string {
  return `${meta.namespace ?? ''}/${meta.name ?? ''}`;
}

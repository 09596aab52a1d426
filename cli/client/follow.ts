/**
 * Following a collection until the user stops it (`get -w`): a watch from
 * the listed resourceVersion, resumed from the last version seen whenever
 * the server ends it (watches time out after 30-60 minutes), ended by
 * Ctrl-C, SIGTERM or a closed stdout. An ERROR event (410 Expired after a
 * compaction) or a failed request ends it with that error, as kubectl does.
 */
import { ApiStatusError } from '../../api/client/errors.js';
import type { ResourceInfo } from './catalog.js';
import type { ClientContext } from './context.js';
import { untilInterrupted } from './interrupt.js';
import { watchObjects, type Selection } from './watch.js';

/** What a watch event carries: an object, a one-row Table, a bookmark or a Status. */
interface EventObject {
  metadata?: { resourceVersion?: string };
  code?: number;
  reason?: string;
  message?: string;
}

/**
 * Calls `onChange(object)` for every ADDED/MODIFIED/DELETED event after
 * `resourceVersion` until interrupted; resolves with the exit code of the interruption.
 */
export async function followChanges(
  ctx: ClientContext,
  r: ResourceInfo,
  sel: Selection,
  resourceVersion: string | undefined,
  onChange: (obj: unknown) => void,
  headers?: Record<string, string>,
): Promise<number> {
  const interruption = untilInterrupted();
  let rv = resourceVersion;
  try {
    for (;;) {
      let failure: unknown;
      const onEvent = (type: string, obj: unknown) => {
        const o = obj as EventObject;
        if (type === 'ERROR') {
          failure ??= new ApiStatusError(o.code ?? 500, o.reason ?? 'InternalError', o.message ?? 'watch failed');
          return;
        }
        rv = o.metadata?.resourceVersion ?? rv;
        if (type !== 'BOOKMARK' && !failure) onChange(obj);
      };
      const handle = await watchObjects(ctx, r, sel, rv, onEvent, headers);
      const ended = handle.done.catch((err: unknown) => void (failure ??= err));
      const code = await Promise.race([ended, interruption.done]);
      handle.stop();
      if (code !== undefined) return code;
      if (failure) throw failure;
    }
  } finally {
    interruption.dispose();
  }
}

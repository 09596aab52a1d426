/**
 * The loop of `status --watch`: watches feed object changes in; state
 * changes go to the view as they come, the summary at most every
 * REDRAW_INTERVAL_MS and only when it changed. Ends on Ctrl-C, SIGTERM or
 * a closed stdout (exit 0), or with --until-converged once everything has converged and
 * nothing fails (exit 0) or when the timeout passes first (a CliError,
 * exit 1). A lost connection is shown by the view and retried until it
 * comes back. Runs on the event loop only; the timers are its concurrency.
 */
import type { ClientContext } from '../client/context.js';
import { CliError } from '../client/errors.js';
import { untilInterrupted } from '../client/interrupt.js';
import { formatDuration } from '../flags.js';
import { isSettled, stateChange, summarize, type StatusSummary } from './model.js';
import { ObjectsWatcher, type ObjectChange, type StatusScope } from './snapshot.js';
import type { StatusView } from './views.js';

/** The fastest the summary is redrawn. */
export const REDRAW_INTERVAL_MS = 200;
const NOT_CONVERGED_SHOWN = 5;

/** How the loop runs. */
export interface FollowOptions {
  scope: StatusScope;
  view: StatusView;
  /** Exit once settled; fail after timeoutMs. */
  untilConverged: boolean;
  timeoutMs: number;
}

// 128 + SIGPIPE: what a shell reports for a command whose reader went away (`| head`).
const SIGPIPE_EXIT = 141;

/** Follows the cluster until interrupted or, with untilConverged, settled; resolves with the exit code. */
export async function followStatus(ctx: ClientContext, o: FollowOptions): Promise<number> {
  let pendingRedraw: NodeJS.Timeout | undefined;
  let lastDrawn = '';
  let finish!: (outcome: 'interrupted' | 'settled' | 'timeout') => void;
  const ended = new Promise<'interrupted' | 'settled' | 'timeout'>((resolve) => (finish = resolve));

  const redraw = () => {
    pendingRedraw = undefined;
    const s = summarize(watcher.objects());
    const drawn = JSON.stringify(s);
    if (drawn !== lastDrawn) o.view.update(s);
    lastDrawn = drawn;
    if (o.untilConverged && isSettled(s)) finish('settled');
  };
  const onChange = (c: ObjectChange) => {
    const change = stateChange(c.key, c.before, c.after);
    if (change) o.view.change(change);
    pendingRedraw ??= setTimeout(redraw, REDRAW_INTERVAL_MS);
  };
  // While the server is away the objects shown are stale: the view says so until the watches list again.
  const watcher = new ObjectsWatcher(ctx, o.scope, onChange, { onConnection: (lost) => o.view.connection(lost) });
  // Ctrl-C is how a watch of a dashboard ends, not a failure: exit 0 (unlike get -w, whose 130 follows kubectl).
  const interruption = untilInterrupted();
  void interruption.done.then(() => finish('interrupted'));
  const timer = o.untilConverged ? setTimeout(() => finish('timeout'), o.timeoutMs) : undefined;
  try {
    await watcher.start();
    const first = summarize(watcher.objects());
    lastDrawn = JSON.stringify(first);
    o.view.start(first);
    if (o.untilConverged && isSettled(first)) finish('settled');
    const outcome = await ended;
    const final = summarize(watcher.objects());
    if (JSON.stringify(final) !== lastDrawn) o.view.update(final);
    o.view.finish(final, outcome === 'interrupted');
    if (outcome === 'timeout') throw notConverged(final, o.timeoutMs);
    // Stopped before it converged: a script waiting on --until-converged must not read that as converged.
    if (outcome === 'interrupted' && o.untilConverged) return (await interruption.done) || SIGPIPE_EXIT;
    return 0;
  } finally {
    watcher.stop();
    clearTimeout(pendingRedraw);
    clearTimeout(timer);
    interruption.dispose();
  }
}

function notConverged(s: StatusSummary, timeoutMs: number): CliError {
  const { converged, total, pending } = s.convergence;
  const shown = pending.slice(0, NOT_CONVERGED_SHOWN).map((p) => `${p.kind} ${p.namespace ? `${p.namespace}/` : ''}${p.name} ${p.state}`);
  const more = pending.length > NOT_CONVERGED_SHOWN ? `, and ${pending.length - NOT_CONVERGED_SHOWN} more` : '';
  const waiting = shown.length ? `; not converged: ${shown.join(', ')}${more}` : '';
  const failing = s.failures.length ? `, ${s.failures.length} failing` : '';
  return new CliError(
    `not converged after ${formatDuration(timeoutMs)}: ${converged}/${total} converged${failing}${waiting}`,
    s.failures.length ? 'cairn failures shows what fails and how to fix it' : 'raise --timeout, or look at the objects with cairn describe',
  );
}

/**
 * How a verb that streams until stopped (`get -w`) ends cleanly: Ctrl-C
 * (SIGINT) or SIGTERM resolve with the shell's exit code for that signal
 * instead of killing the process mid-write, and a reader that went away
 * (`cairn get -w | head`: EPIPE on stdout) ends it quietly with 0 instead of
 * an unhandled 'error' event. A second Ctrl-C kills the process as usual.
 */

const closedListeners = new Set<() => void>();
let stdoutGuarded = false;

/**
 * Calls `listener` when stdout's reader goes away; from the first call on, a
 * closed stdout never crashes the process. Returns the unsubscribe function.
 */
export function onStdoutClosed(listener: () => void = () => undefined): () => void {
  if (!stdoutGuarded) {
    stdoutGuarded = true;
    process.stdout.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code !== 'EPIPE' && err.code !== 'ERR_STREAM_DESTROYED') throw err;
      for (const l of closedListeners) l();
    });
  }
  closedListeners.add(listener);
  return () => closedListeners.delete(listener);
}

/** A pending interruption: `done` resolves with the exit code to end with. */
export interface Interruption {
  done: Promise<number>;
  /** Stops listening (the signals' default behaviour returns). */
  dispose(): void;
}

/** Listens for Ctrl-C, SIGTERM and a closed stdout until disposed. */
export function untilInterrupted(): Interruption {
  let finish!: (code: number) => void;
  const done = new Promise<number>((resolve) => (finish = resolve));
  const onSigint = () => finish(130);
  const onSigterm = () => finish(143);
  process.once('SIGINT', onSigint);
  process.once('SIGTERM', onSigterm);
  const offClosed = onStdoutClosed(() => finish(0));
  return {
    done,
    dispose() {
      process.off('SIGINT', onSigint);
      process.off('SIGTERM', onSigterm);
      offClosed();
    },
  };
}

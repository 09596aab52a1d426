/**
 * An interval whose tick may throw without ending the process: thrown in a timer callback, an error is an
 * uncaught exception, and an agent that exits leaves every instance to its watchdog. Unref'd: it never
 * keeps a process alive by itself.
 */
export function guardedInterval(tick: () => void, ms: number, onError: (err: unknown) => void): NodeJS.Timeout {
  return setInterval(() => {
    try {
      tick();
    } catch (err) {
      onError(err);
    }
  }, ms).unref();
}

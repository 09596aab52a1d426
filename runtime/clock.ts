/**
 * Time as the runtime sees it. Queues, rate limiters and leader election
 * take a Clock so tests drive time by hand instead of sleeping.
 */
import fs from 'node:fs';

/** A cancellable timer handle. */
export interface TimerHandle {
  cancel(): void;
}

/** The longest timer Node keeps (2³¹ − 1 ms, about 24.8 days): a longer one fires at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Wall-clock milliseconds, monotonic milliseconds and timers. */
export interface Clock {
  now(): number;
  /**
   * Milliseconds on a clock that wall-clock steps (NTP, `date -s`) do not move and that runs on while the
   * machine is suspended; only differences mean anything. Deadlines that guard safety are counted on it.
   */
  monotonic(): number;
  /**
   * Milliseconds on the clock timers run on: wall-clock steps do not move it, and it is cheap to read
   * (monotonic() reads a file); only differences mean anything. For ordering timers, not for safety.
   */
  elapsed(): number;
  /** Runs fn once after ms; the timer does not keep the process alive. */
  setTimer(fn: () => void, ms: number): TimerHandle;
}

/**
 * Milliseconds since boot, suspend included (CLOCK_BOOTTIME, as /proc/uptime counts it): one clock for
 * the whole machine, so it compares across processes of one boot. CLOCK_MONOTONIC stops while suspended,
 * and a lease counted on it would outlive the suspend; elsewhere than Linux, the wall clock.
 */
function sinceBootMs(): number {
  try {
    return Math.round(Number(fs.readFileSync('/proc/uptime', 'latin1').split(' ')[0]) * 1000);
  } catch {
    return Date.now();
  }
}

/** The real clock. */
export const realClock: Clock = {
  now: () => Date.now(),
  monotonic: sinceBootMs,
  elapsed: () => performance.now(),
  setTimer(fn, ms) {
    const t = setTimeout(fn, Math.max(0, ms));
    t.unref();
    return { cancel: () => clearTimeout(t) };
  },
};

/** Resolves after ms on the given clock. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = clock.setTimer(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      timer.cancel();
      resolve();
    };
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Resolves like promise, or with fallback after ms (a hung request must not outlive a deadline). */
export async function withTimeout<T>(clock: Clock, promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: TimerHandle | undefined;
  const timeout = new Promise<T>((resolve) => (timer = clock.setTimer(() => resolve(fallback), ms)));
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    timer?.cancel();
  }
}

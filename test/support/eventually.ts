/** Polling with a deadline, for tests that wait on something asynchronous. */

/** Resolves after `ms`. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Polls `probe` every `everyMs` until it is true; fails after `timeoutMs`, naming `what`, and with
 * what `seen` says of the state then (for a failure in CI that cannot be rerun by hand).
 */
export async function eventually(what: string, probe: () => boolean | Promise<boolean>, timeoutMs = 20_000, everyMs = 50, seen?: () => unknown): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await probe())) {
    if (Date.now() > deadline) {
      const state = seen ? `; last seen: ${JSON.stringify(await seen())}` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${state}`);
    }
    await sleep(everyMs);
  }
}

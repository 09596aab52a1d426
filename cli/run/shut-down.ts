/**
 * The end of a long-running command (server, agent, controller) on a signal:
 * every step runs even if one before it failed (an etcd left running or a
 * data dir left locked would outlast the process), and the exit code says
 * whether all of them succeeded; a failure is logged, never an unhandled
 * rejection with its stack.
 */
import type { Logger } from 'winston';

/** One step of a shutdown: what it is (for the log), and the work. */
export type ShutdownStep = [what: string, run: () => unknown];

/** Runs the steps in order, then exits: 0 when all succeeded, 1 otherwise. */
export async function shutDown(log: Logger, steps: ShutdownStep[]): Promise<never> {
  let failed = false;
  for (const [what, run] of steps) {
    try {
      await run();
    } catch (err) {
      failed = true;
      log.error(`shutdown: ${what} failed`, { error: err instanceof Error ? err.message : String(err) });
    }
  }
  return process.exit(failed ? 1 : 0);
}

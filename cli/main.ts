/**
 * The entry point of `cairn` (bin/cairn.js): a pool worker of `cairn server
 * --workers`, `cairn --version`, or the commands of program.ts.
 */
import { cairnVersion } from '../api/version.js';
import { WORKER_OPTIONS_ENV } from '../apiserver/options.js';

async function main(argv: string[]): Promise<unknown> {
  // The most common question answers before the commands are defined; commander would print the same.
  if (argv.length === 3 && argv[2] === '--version') return process.stdout.write(`${cairnVersion()}\n`);
  // A `--workers` server forks pool workers that run this entry point again, its options in their environment.
  if (process.env[WORKER_OPTIONS_ENV]) {
    const pool = await import('../apiserver/worker-pool.js');
    if (pool.isApiServerWorker()) return pool.runApiServerWorker();
  }
  const { cairnProgram } = await import('./program.js');
  return cairnProgram().parseAsync(argv);
}

main(process.argv).catch((err: unknown) => {
  process.stderr.write(`error: ${(err as Error)?.message ?? String(err)}\n`);
  process.exit(1);
});

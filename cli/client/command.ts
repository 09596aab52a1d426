/**
 * The kubectl-style frame of every client verb: the connection and
 * namespace flags, and the action wrapper that builds the client, prints
 * failures kubectl's way and sets the exit code.
 *
 * Every `cairn` run defines every verb, so this module stays light: the
 * client (context.ts) is loaded only when a verb runs.
 */
import { Command } from 'commander';
import { addConnectionFlags } from '../connection-flags.js';
import type { ClientContext, ClientFlags } from './context.js';
import { exitCodeOf, formatError } from './errors.js';

/** A client verb: a Command with the connection flags and -n; `allNamespaces` adds -A. */
export function clientCommand(name: string, opts: { allNamespaces?: boolean } = {}): Command {
  const cmd = addConnectionFlags(new Command(name)).option('-n, --namespace <cluster>', 'namespace (the Cluster) to use (default: the kubeconfig context\'s, else "default")');
  if (opts.allNamespaces) cmd.option('-A, --all-namespaces', 'across every namespace (Cluster)');
  return cmd;
}

/**
 * Wraps a verb's body: builds its context, runs it, prints a failure kubectl's
 * way and exits with its code; closes the connections so the process ends.
 * `failureExitCode` is the least code a failure exits with (diff: 2, as 1 means "different").
 */
export function runWithClient<A extends unknown[]>(body: (ctx: ClientContext, ...args: A) => Promise<number | void>, opts: { failureExitCode?: number } = {}) {
  return async (...args: [...A, ClientFlags, Command]): Promise<void> => {
    const cmd = args[args.length - 1] as Command;
    const flags = cmd.opts<ClientFlags & Record<string, unknown>>();
    let ctx: ClientContext | undefined;
    try {
      const { clientContext } = await import('./context.js');
      ctx = await clientContext(flags);
      const code = await body(ctx, ...(args.slice(0, -2) as A));
      process.exitCode = code ?? 0;
    } catch (err) {
      process.stderr.write(`${formatError(err, ctx?.rest.cluster?.server)}\n`);
      process.exitCode = Math.max(opts.failureExitCode ?? 1, exitCodeOf(err));
    } finally {
      ctx?.rest.close();
    }
  };
}

/**
 * The kubectl-style frame of every client verb: the connection and
 * namespace flags, the client built from them, and the action wrapper that
 * prints failures kubectl's way and sets the exit code.
 *
 * The namespace is -n, else the kubeconfig context's namespace, else
 * `default` — as kubectl resolves it. In Cairn a namespace is a Cluster.
 */
import { Command } from 'commander';
import { loadKubeConfig, type PooledKubeConfig } from '../../api/client/kubeconfig.js';
import { RestClient } from '../../api/client/rest-client.js';
import { addConnectionFlags, connectionOptions, type ConnectionFlags } from '../connection-flags.js';
import { ResourceCatalog } from './catalog.js';
import { exitCodeOf, formatError } from './errors.js';

/** Flags every client verb accepts. */
export interface ClientFlags extends ConnectionFlags {
  namespace?: string;
  allNamespaces?: boolean;
}

/** What a client verb works with. */
export interface ClientContext {
  kc: PooledKubeConfig;
  rest: RestClient;
  /** The namespace (Cluster) objects are read from and written to. */
  namespace: string;
  /** Whether -n was given (it then overrides a manifest's namespace check). */
  explicitNamespace: boolean;
  /** -A: every namespace. */
  allNamespaces: boolean;
  /** Discovery, read once per command on first use. */
  catalog(): Promise<ResourceCatalog>;
  /** Every flag of the verb, as commander parsed them. */
  flags: ClientFlags & Record<string, unknown>;
}

/** A client verb: a Command with the connection flags and -n; `allNamespaces` adds -A. */
export function clientCommand(name: string, opts: { allNamespaces?: boolean } = {}): Command {
  const cmd = addConnectionFlags(new Command(name)).option('-n, --namespace <cluster>', 'namespace (the Cluster) to use (default: the kubeconfig context\'s, else "default")');
  if (opts.allNamespaces) cmd.option('-A, --all-namespaces', 'across every namespace (Cluster)');
  return cmd;
}

/** Builds the client of a verb from its flags. */
export function clientContext(flags: ClientFlags & Record<string, unknown>): ClientContext {
  const kc = loadKubeConfig(connectionOptions(flags));
  const rest = RestClient.forConfig(kc);
  const contextNs = kc.getContextObject(kc.getCurrentContext())?.namespace;
  let catalog: Promise<ResourceCatalog> | undefined;
  return {
    kc,
    rest,
    namespace: flags.namespace ?? contextNs ?? 'default',
    explicitNamespace: flags.namespace !== undefined,
    allNamespaces: flags.allNamespaces ?? false,
    catalog: () => (catalog ??= ResourceCatalog.discover(rest)),
    flags,
  };
}

/**
 * Wraps a verb's body: builds its context, runs it, prints a failure kubectl's
 * way and exits with its code; closes the connections so the process ends.
 */
export function runWithClient<A extends unknown[]>(body: (ctx: ClientContext, ...args: A) => Promise<number | void>) {
  return async (...args: [...A, ClientFlags, Command]): Promise<void> => {
    const cmd = args[args.length - 1] as Command;
    const flags = cmd.opts<ClientFlags & Record<string, unknown>>();
    let ctx: ClientContext | undefined;
    try {
      ctx = clientContext(flags);
      const code = await body(ctx, ...(args.slice(0, -2) as A));
      process.exitCode = code ?? 0;
    } catch (err) {
      process.stderr.write(`${formatError(err, ctx?.kc.getCurrentCluster()?.server)}\n`);
      process.exitCode = exitCodeOf(err);
    } finally {
      ctx?.kc.destroyAgent();
    }
  };
}

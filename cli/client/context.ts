/**
 * The kubectl-style frame of every client verb: the connection and
 * namespace flags, the client built from them, and the action wrapper that
 * prints failures kubectl's way and sets the exit code.
 *
 * The namespace is -n, else the kubeconfig context's namespace, else
 * `default` — as kubectl resolves it. In Cairn a namespace is a Cluster.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Command } from 'commander';
import { loadKubeConfig, type PooledKubeConfig } from '../../api/client/kubeconfig.js';
import { RestClient } from '../../api/client/rest-client.js';
import { addConnectionFlags, connectionOptions, type ConnectionFlags } from '../connection-flags.js';
import { ResourceCatalog } from './catalog.js';
import { CliError, exitCodeOf, formatError } from './errors.js';

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
  const kc = loadClientConfig(flags);
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

const KUBECONFIG_HINT = 'cairn server writes <data-dir>/admin.kubeconfig; pass it with --kubeconfig or export KUBECONFIG=...';

// The kubeconfig, or a CliError saying which one is missing: client-node would silently fall back to
// http://localhost:8080 and fail later with an unrelated message.
function loadClientConfig(flags: ClientFlags): PooledKubeConfig {
  const file = flags.kubeconfig ?? process.env.KUBECONFIG?.split(':')[0];
  if (file && !fs.existsSync(file)) throw new CliError(`the kubeconfig ${file} does not exist`, KUBECONFIG_HINT);
  if (!file && !flags.server && !fs.existsSync(path.join(os.homedir(), '.kube', 'config'))) {
    throw new CliError('no kubeconfig: neither --kubeconfig, KUBECONFIG nor ~/.kube/config, and no --server', KUBECONFIG_HINT);
  }
  try {
    return loadKubeConfig(connectionOptions(flags));
  } catch (err) {
    throw new CliError((err as Error).message, 'list the contexts with: kubectl config get-contexts');
  }
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
      ctx = clientContext(flags);
      const code = await body(ctx, ...(args.slice(0, -2) as A));
      process.exitCode = code ?? 0;
    } catch (err) {
      process.stderr.write(`${formatError(err, ctx?.kc.getCurrentCluster()?.server)}\n`);
      process.exitCode = Math.max(opts.failureExitCode ?? 1, exitCodeOf(err));
    } finally {
      ctx?.kc.destroyAgent();
    }
  };
}

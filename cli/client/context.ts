/**
 * The client a verb works with, built from its connection and namespace
 * flags (command.ts defines them and loads this module when a verb runs:
 * it brings in @kubernetes/client-node).
 *
 * The namespace is -n, else the kubeconfig context's namespace, else
 * `default` — as kubectl resolves it. In Cairn a namespace is a Cluster.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { loadKubeConfig, type PooledKubeConfig } from '../../api/client/kubeconfig.js';
import { RestClient } from '../../api/client/rest-client.js';
import { connectionOptions } from '../connection-flags.js';
import type { ClientFlags } from './command.js';
import { ResourceCatalog } from './catalog.js';
import { CliError } from './errors.js';

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

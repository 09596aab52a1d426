/**
 * The client a verb works with, built from its connection and namespace
 * flags (command.ts defines them and loads this module when a verb runs).
 * A kubeconfig as Cairn writes them (a token, the cluster's CA) is served
 * by Node's https (https-client.ts); any other by @kubernetes/client-node,
 * loaded only then, as it takes most of a second.
 *
 * The namespace is -n, else the kubeconfig context's namespace, else
 * `default` — as kubectl resolves it. In Cairn a namespace is a Cluster.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { connectionOptions } from '../connection-flags.js';
import type { ApiClient } from './api-client.js';
import type { ConnectionFlags } from '../connection-flags.js';
import { ResourceCatalog } from './catalog.js';
import { CliError } from './errors.js';
import { HttpsClient } from './https-client.js';
import { readKubeconfig, type HttpsSettings } from './kubeconfig-file.js';

/** Flags every client verb accepts. */
export interface ClientFlags extends ConnectionFlags {
  namespace?: string;
  allNamespaces?: boolean;
}

/** What a client verb works with. */
export interface ClientContext {
  /** The connection to the apiserver. */
  rest: ApiClient;
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
export async function clientContext(flags: ClientFlags & Record<string, unknown>): Promise<ClientContext> {
  const { rest, contextNs } = await connect(flags);
  let catalog: Promise<ResourceCatalog> | undefined;
  return {
    rest,
    namespace: flags.namespace ?? contextNs ?? 'default',
    explicitNamespace: flags.namespace !== undefined,
    allNamespaces: flags.allNamespaces ?? false,
    catalog: () => (catalog ??= ResourceCatalog.discover(rest)),
    flags,
  };
}

const KUBECONFIG_HINT = 'cairn server writes <data-dir>/admin.kubeconfig; pass it with --kubeconfig or export KUBECONFIG=...';

// The client of the kubeconfig, or a CliError saying which kubeconfig is missing: client-node would silently
// fall back to http://localhost:8080 and fail later with an unrelated message.
async function connect(flags: ClientFlags): Promise<{ rest: ApiClient; contextNs?: string }> {
  const file = flags.kubeconfig ?? process.env.KUBECONFIG?.split(':')[0];
  if (file && !fs.existsSync(file)) throw new CliError(`the kubeconfig ${file} does not exist`, KUBECONFIG_HINT);
  if (!file && !flags.server && !fs.existsSync(path.join(os.homedir(), '.kube', 'config'))) {
    throw new CliError('no kubeconfig: neither --kubeconfig, KUBECONFIG nor ~/.kube/config, and no --server', KUBECONFIG_HINT);
  }
  const opts = connectionOptions(flags);
  const settings = readKubeconfig(opts);
  const where = file ?? '~/.kube/config';
  if (settings) return { rest: checkedClient(settings, flags, where), contextNs: settings.namespace };
  const { ClientNodeClient } = await import('./client-node-client.js');
  try {
    const client = ClientNodeClient.load(opts);
    return { rest: client, contextNs: client.namespace };
  } catch (err) {
    // client-node's own messages ("No active cluster!") do not say which file they are about; Cairn's do.
    const message = (err as Error).message;
    throw new CliError(message.includes('kubeconfig') ? message : `cannot use the kubeconfig ${where}: ${message}`, 'check that it is a kubeconfig; list its contexts with: kubectl config get-contexts');
  }
}

// The server and CA the flags or the kubeconfig name, checked first: Node's own errors ("Invalid URL", an ENOENT
// of a path) would say neither which flag nor which file to fix.
function checkedClient(settings: HttpsSettings, flags: ClientFlags, kubeconfig: string): HttpsClient {
  const { server, caFile } = settings.cluster;
  const source = (flag: string | undefined, name: string, field: string) => (flag ? name : `${field} in the kubeconfig ${kubeconfig}`);
  if (!/^https?:\/\/./i.test(server) || !URL.canParse(server)) {
    throw new CliError(`the server ${JSON.stringify(server)} (${source(flags.server, '--server', 'cluster.server')}) is not a URL`, 'give it as https://HOST:PORT, e.g. https://127.0.0.1:6443');
  }
  if (caFile) {
    try {
      fs.accessSync(caFile, fs.constants.R_OK);
    } catch (err) {
      const reason = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'it does not exist' : (err as Error).message;
      throw new CliError(`cannot read the certificate authority ${caFile} (${source(flags.certificateAuthority, '--certificate-authority', 'cluster.certificate-authority')}): ${reason}`, "give the path of the cluster's CA certificate (PEM); cairn server writes it to <data-dir>/pki/ca.crt");
    }
  }
  return new HttpsClient(settings);
}

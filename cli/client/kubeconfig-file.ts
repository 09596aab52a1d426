/**
 * A kubeconfig read as the CLI needs it, without @kubernetes/client-node
 * (whose loading takes most of a second): the current context's server,
 * TLS settings, bearer token and namespace, after --context and the
 * connection flags. It resolves them as client-node's KubeConfig does
 * (loadKubeConfig in api/client/kubeconfig.ts), with the same YAML parser
 * (js-yaml, a tenth of the start-up cost of `yaml`): the server without a
 * trailing slash, certificate-authority relative to the file's folder, a
 * flag overriding the kubeconfig's value.
 *
 * Only what Cairn's own kubeconfigs hold is read here. Anything more —
 * several files in KUBECONFIG, exec or auth-provider plugins, client
 * certificates, token files, basic auth, impersonation, a proxy, a field
 * this reader does not know, an entry client-node would refuse — gives
 * null, and the caller hands the kubeconfig to client-node, which reads
 * (or rejects) it all.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { load } from 'js-yaml';
import type { ConnectionOptions } from '../../api/client/kubeconfig.js';
import type { ClusterInfo } from './api-client.js';

/** How to reach the server and who to be there. */
export interface HttpsSettings {
  cluster: ClusterInfo & { tlsServerName?: string };
  token?: string;
  /** The namespace of the current context. */
  namespace?: string;
}

const CLUSTER_FIELDS = new Set(['server', 'certificate-authority', 'certificate-authority-data', 'insecure-skip-tls-verify', 'tls-server-name']);
const USER_FIELDS = new Set(['token']);
const CONTEXT_FIELDS = new Set(['cluster', 'user', 'namespace']);

type Entry = Record<string, unknown>;

/** The settings `opts` give, or null when client-node must read the kubeconfig. */
export function readKubeconfig(opts: ConnectionOptions): HttpsSettings | null {
  if (opts.server && !opts.kubeconfig) {
    return { cluster: { server: opts.server, caFile: opts.caFile, skipTLSVerify: opts.insecureSkipTlsVerify ?? false }, token: opts.token };
  }
  const file = kubeconfigFile(opts);
  if (!file) return null;
  let doc: unknown;
  try {
    doc = load(fs.readFileSync(file, 'utf8'));
  } catch {
    return null;
  }
  const settings = fromDocument(doc, path.dirname(file), opts.context);
  return settings && applyFlags(settings, opts);
}

// --kubeconfig, else the one file of KUBECONFIG, else ~/.kube/config (client-node's loadFromDefault merges several files).
function kubeconfigFile(opts: ConnectionOptions): string | undefined {
  if (opts.kubeconfig) return opts.kubeconfig;
  const files = (process.env.KUBECONFIG ?? '').split(path.delimiter).filter(Boolean);
  if (files.length > 1) return undefined;
  const file = files[0] ?? path.join(os.homedir(), '.kube', 'config');
  return fs.existsSync(file) ? file : undefined;
}

function fromDocument(doc: unknown, dir: string, contextName: string | undefined): HttpsSettings | null {
  if (!isEntry(doc) || !wellFormed(doc)) return null;
  const name = contextName ?? doc['current-context'];
  const context = typeof name === 'string' ? named(doc.contexts, name, 'context', CONTEXT_FIELDS) : null;
  if (!context || typeof context.cluster !== 'string' || typeof context.user !== 'string') return null;
  const cluster = named(doc.clusters, context.cluster, 'cluster', CLUSTER_FIELDS);
  const user = named(doc.users, context.user, 'user', USER_FIELDS);
  if (!cluster || !user || typeof cluster.server !== 'string' || !cluster.server) return null;
  if (!optionalStrings(cluster, ['certificate-authority', 'certificate-authority-data', 'tls-server-name']) || !optionalStrings(user, ['token'])) return null;
  if (context.namespace !== undefined && typeof context.namespace !== 'string') return null;
  const caFile = cluster['certificate-authority'] as string | undefined;
  return {
    cluster: {
      server: cluster.server.replace(/\/$/, ''),
      caData: cluster['certificate-authority-data'] as string | undefined,
      caFile: caFile && !path.isAbsolute(caFile) ? path.join(dir, caFile) : caFile,
      skipTLSVerify: cluster['insecure-skip-tls-verify'] === true,
      tlsServerName: cluster['tls-server-name'] as string | undefined,
    },
    token: (user.token as string | undefined) || undefined,
    namespace: context.namespace || undefined,
  };
}

// What client-node checks of every entry when it loads a file (it throws on any other), and the token files it reads then.
function wellFormed(doc: Entry): boolean {
  const all = (list: unknown, ok: (item: Entry) => boolean) => list === undefined || list === null || !Array.isArray(list) || list.every((item) => isEntry(item) && ok(item));
  const inner = (item: Entry, key: string) => (isEntry(item[key]) ? (item[key] as Entry) : undefined);
  return (
    all(doc.clusters, (c) => !!c.name && !!inner(c, 'cluster')?.server) &&
    all(doc.contexts, (c) => !!c.name && !!inner(c, 'context')?.cluster) &&
    all(doc.users, (u) => !!u.name && inner(u, 'user')?.['token-file'] === undefined)
  );
}

// Flags given with a kubeconfig override its current cluster and user, as kubectl's do.
function applyFlags(s: HttpsSettings, opts: ConnectionOptions): HttpsSettings {
  const cluster = { ...s.cluster };
  if (opts.server) cluster.server = opts.server;
  if (opts.caFile) Object.assign(cluster, { caFile: opts.caFile, caData: undefined });
  if (opts.insecureSkipTlsVerify) cluster.skipTLSVerify = true;
  return { ...s, cluster, token: opts.token ? opts.token : s.token };
}

// The `key` entry (context, cluster or user) of the list item called `name`, when it has only fields this reader knows.
function named(list: unknown, name: string, key: string, known: Set<string>): Entry | null {
  if (!Array.isArray(list)) return null;
  const items = list.filter((item) => isEntry(item) && item.name === name);
  const entry = items.length === 1 ? (items[0] as Entry)[key] ?? {} : null;
  return isEntry(entry) && Object.keys(entry).every((k) => known.has(k)) ? entry : null;
}

function optionalStrings(entry: Entry, keys: string[]): boolean {
  return keys.every((k) => entry[k] === undefined || typeof entry[k] === 'string');
}

function isEntry(value: unknown): value is Entry {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

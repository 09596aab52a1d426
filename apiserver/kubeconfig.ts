/**
 * Kubeconfig files for Cairn's clients (kubectl, client-node, the agents):
 * one cluster, one token user and one context tying them together. The CA
 * travels inline as `certificate-authority-data`, because kubectl sends a
 * bearer token only over a verified HTTPS connection.
 */
import { stringify } from 'yaml';
import { writeFileAtomic } from '../api/atomic-write.js';

/** What a kubeconfig for one Cairn apiserver needs. */
export interface KubeconfigOptions {
  /** The apiserver URL, e.g. `https://10.0.0.1:6443`. */
  server: string;
  /** The CA that signed the serving certificate, as PEM; embedded base64-encoded. */
  caCertPem?: string;
  /** Skip server verification, for throwaway tests only; exclusive with `caCertPem`. */
  insecureSkipTlsVerify?: boolean;
  /** The bearer token the user authenticates with. */
  token: string;
  /** Name of the cluster and of the context. Default: `cairn`. */
  name?: string;
  /** Name of the user entry. Default: `admin`. */
  user?: string;
  /** Default namespace of the context, when given. */
  namespace?: string;
}

/** Renders a kubeconfig (YAML, `kind: Config`) whose current context reaches `o.server` with `o.token`. */
export function buildKubeconfig(o: KubeconfigOptions): string {
  // kubectl itself refuses this combination ("specifying a root certificates file with the insecure flag is not allowed").
  if (o.caCertPem !== undefined && o.insecureSkipTlsVerify) {
    throw new Error('buildKubeconfig: caCertPem and insecureSkipTlsVerify are mutually exclusive');
  }
  const name = o.name ?? 'cairn';
  const user = o.user ?? 'admin';
  const cluster: Record<string, unknown> = { server: o.server };
  if (o.caCertPem !== undefined) cluster['certificate-authority-data'] = Buffer.from(o.caCertPem, 'utf8').toString('base64');
  if (o.insecureSkipTlsVerify) cluster['insecure-skip-tls-verify'] = true;
  const context: Record<string, unknown> = { cluster: name, user };
  if (o.namespace !== undefined) context.namespace = o.namespace;
  const doc = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name, cluster }],
    users: [{ name: user, user: { token: o.token } }],
    contexts: [{ name, context }],
    'current-context': name,
    preferences: {},
  };
  // No folding or wrapping: some kubeconfig readers are line-oriented.
  return stringify(doc, { lineWidth: 0 });
}

/** Writes a kubeconfig atomically with mode 0600, since it holds a credential. */
export async function writeKubeconfig(path: string, content: string): Promise<void> {
  await writeFileAtomic(path, content, 0o600);
}

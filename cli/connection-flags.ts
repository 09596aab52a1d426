/** Flags that say how a client process reaches the apiserver, shared by controller, agent and client verbs. */
import type { Command } from 'commander';
import type { ConnectionOptions } from '../api/client/kubeconfig.js';

/** Parsed connection flags. */
export interface ConnectionFlags {
  kubeconfig?: string;
  context?: string;
  server?: string;
  token?: string;
  certificateAuthority?: string;
  insecureSkipTlsVerify?: boolean;
}

/** Adds --kubeconfig, --context, --server, --token, --certificate-authority, --insecure-skip-tls-verify. */
export function addConnectionFlags(cmd: Command): Command {
  return cmd
    .option('--kubeconfig <path>', 'kubeconfig to use (default: $KUBECONFIG or ~/.kube/config)')
    .option('--context <name>', 'kubeconfig context to use')
    .option('--server <url>', 'apiserver URL (with --token, instead of a kubeconfig)')
    .option('--token <token>', 'bearer token for --server')
    .option('--certificate-authority <file>', 'CA bundle that signed the apiserver certificate (with --server)')
    .option('--insecure-skip-tls-verify', 'do not verify the apiserver certificate (development only)');
}

/** ConnectionOptions from parsed flags. */
export function connectionOptions(flags: ConnectionFlags): ConnectionOptions {
  return {
    kubeconfig: flags.kubeconfig,
    context: flags.context,
    server: flags.server,
    token: flags.token,
    caFile: flags.certificateAuthority,
    insecureSkipTlsVerify: flags.insecureSkipTlsVerify,
  };
}

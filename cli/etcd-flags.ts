/** Flags that say how a process reaches etcd itself, shared by `cairn server`, `cairn apiserver` and `cairn etcd`. */
import type { Command } from 'commander';
import type { EtcdTlsFiles } from '../apiserver/etcd/client-tls.js';

/** Parsed etcd TLS flags. */
export interface EtcdTlsFlags {
  etcdCafile?: string;
  etcdCertfile?: string;
  etcdKeyfile?: string;
}

/** Adds --etcd-cafile, --etcd-certfile and --etcd-keyfile. */
export function addEtcdTlsFlags(cmd: Command): Command {
  return cmd
    .option('--etcd-cafile <file>', 'CA certificate that signed the etcd serving certificate (external https:// --etcd-endpoints only)')
    .option('--etcd-certfile <file>', 'client certificate for an etcd run with --client-cert-auth (external --etcd-endpoints only; with --etcd-keyfile)')
    .option('--etcd-keyfile <file>', 'private key of --etcd-certfile (external --etcd-endpoints only)');
}

/** The TLS files named by the flags, as the apiserver's etcd client takes them. */
export function etcdTlsFiles(flags: EtcdTlsFlags): EtcdTlsFiles {
  return { caFile: flags.etcdCafile, certFile: flags.etcdCertfile, keyFile: flags.etcdKeyfile };
}

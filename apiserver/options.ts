/**
 * The settings of an apiserver process and their defaults, apart from the
 * code that runs it: `cairn server --help` shows these defaults, and the
 * CLI must be able to show them without loading the apiserver (etcd3,
 * express, x509). So this module imports nothing at run time.
 */
import type { AuditLogOptions } from './audit/audit-log.js';
import type { EtcdTlsFiles } from './etcd/client-tls.js';

/** Settings of `cairn apiserver`, with their defaults in `defaultApiServerOptions`. */
export interface ApiServerOptions {
  etcdEndpoints: string[];
  /** Holds pki/, admin.token and admin.kubeconfig. */
  dataDir: string;
  /** Address to listen on. */
  listen: string;
  /** Port; 0 picks a free one. */
  port: number;
  /** Extra address clients reach the server at (added to the certificate). */
  advertiseAddress?: string;
  /** Serve plain HTTP instead of HTTPS; only allowed on loopback. */
  insecureHttp: boolean;
  crdDir: string;
  /** Where to write the admin kubeconfig; default <dataDir>/admin.kubeconfig. */
  kubeconfigPath?: string;
  /** Namespace of the admin kubeconfig's context, when given. */
  kubeconfigNamespace?: string;
  compactionIntervalMs: number;
  eventTtlSeconds: number;
  logLevel: string;
  /** Silence after which a watch gets a bookmark or newline; default 15 s. */
  watchKeepaliveMs?: number;
  /** Memory all watches may hold for clients that read too slowly (the slowest are cut off beyond it); default 256 MiB. */
  watchBudgetBytes?: number;
  /** Requests of the workload priority level served at once (http/priority-levels.ts); 0: no limit. */
  maxRequestsInflight?: number;
  /** Workload requests that may wait for a seat; beyond, 429. */
  maxRequestsQueued?: number;
  /** Lifetime of the node credentials agents get for a join token (they rotate at two thirds of it); default 24 h. */
  nodeCredentialTtlMs?: number;
  /** The audit log file and its rotation; absent: no audit log. */
  auditLog?: AuditLogOptions;
  /** TLS files of the etcd client, for an external etcd on https:// endpoints. */
  etcdTls?: EtcdTlsFiles;
  /** The keys Secrets are encrypted with in etcd; default <dataDir>/encryption-keys.yaml, created with one key when missing. */
  encryptionKeyFile?: string;
}

/** Defaults for everything but the etcd endpoints and data dir. */
export const defaultApiServerOptions = {
  listen: '127.0.0.1',
  port: 6443,
  insecureHttp: false,
  compactionIntervalMs: 5 * 60_000,
  eventTtlSeconds: 3600,
  nodeCredentialTtlMs: 24 * 3600_000,
  logLevel: 'info',
  watchBudgetBytes: 256 * 2 ** 20,
  maxRequestsInflight: 32,
  maxRequestsQueued: 2000,
};

/** The defaults of the audit log's rotation. */
export const defaultAuditLogRotation = { maxSizeBytes: 100 * 2 ** 20, maxFiles: 5 };

/**
 * The environment variable that hands a `--workers` pool worker its ApiServerOptions (as JSON); the
 * CLI checks for it before loading anything, since a forked worker runs the `cairn` entry point again.
 */
export const WORKER_OPTIONS_ENV = 'CAIRN_APISERVER_OPTIONS';

/**
 * TLS for the apiserver's etcd client, from the operator's files
 * (--etcd-cafile, --etcd-certfile, --etcd-keyfile): the CA that signed
 * etcd's serving certificate and, when etcd runs with --client-cert-auth,
 * the client certificate and key. Everything is read and checked once at
 * startup, so a wrong path or a mismatched key fails with a message naming
 * the flag instead of as an opaque gRPC handshake error later.
 */
import { createPrivateKey, X509Certificate, type KeyObject } from 'node:crypto';
import fs from 'node:fs';
import type { IOptions } from 'etcd3';

/** The operator's TLS files for etcd; all optional. */
export interface EtcdTlsFiles {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
}

/** What the etcd3 client takes as `credentials`. */
export type EtcdCredentials = NonNullable<IOptions['credentials']>;

/** A TLS setting for etcd that cannot work; the message names the flag and the fix. */
export class EtcdTlsError extends Error {
  override readonly name = 'EtcdTlsError';
}

/** Why these files and endpoints cannot go together, or null when they can. Pure. */
export function etcdTlsProblem(files: EtcdTlsFiles, endpoints: string[]): string | null {
  if (!files.caFile && !files.certFile && !files.keyFile) return null;
  if (!files.certFile !== !files.keyFile) return '--etcd-certfile and --etcd-keyfile go together: give both (the client certificate and its key) or neither';
  if (!files.caFile) return '--etcd-certfile needs --etcd-cafile: the CA that signed the etcd serving certificate';
  const plain = endpoints.filter((e) => !/^https:\/\//i.test(e));
  if (plain.length > 0) return `the etcd TLS flags need https:// --etcd-endpoints, but ${plain.join(', ')} ${plain.length > 1 ? 'are' : 'is'} not https://`;
  return null;
}

/** The etcd3 `credentials` for these files, or undefined when none are given; throws EtcdTlsError. */
export function loadEtcdCredentials(files: EtcdTlsFiles | undefined, endpoints: string[]): EtcdCredentials | undefined {
  if (!files?.caFile && !files?.certFile && !files?.keyFile) return undefined;
  const problem = etcdTlsProblem(files, endpoints);
  if (problem) throw new EtcdTlsError(problem);
  const { caFile, certFile, keyFile } = files as EtcdTlsFiles & { caFile: string }; // etcdTlsProblem requires the CA
  const rootCertificate = readPem('--etcd-cafile', caFile);
  parseCertificate('--etcd-cafile', caFile, rootCertificate);
  if (!certFile || !keyFile) return { rootCertificate };
  const certChain = readPem('--etcd-certfile', certFile);
  const privateKey = readPem('--etcd-keyfile', keyFile);
  const cert = parseCertificate('--etcd-certfile', certFile, certChain);
  if (!cert.checkPrivateKey(parseKey(keyFile, privateKey))) {
    throw new EtcdTlsError(`the key in --etcd-keyfile ${keyFile} does not belong to the certificate in --etcd-certfile ${certFile}`);
  }
  return { rootCertificate, certChain, privateKey };
}

function readPem(flag: string, file: string): Buffer {
  try {
    return fs.readFileSync(file);
  } catch (err) {
    throw new EtcdTlsError(`cannot read ${flag} ${file}: ${(err as Error).message}`, { cause: err });
  }
}

function parseCertificate(flag: string, file: string, pem: Buffer): X509Certificate {
  try {
    return new X509Certificate(pem);
  } catch (err) {
    throw new EtcdTlsError(`${flag} ${file} is not a PEM certificate`, { cause: err });
  }
}

function parseKey(file: string, pem: Buffer): KeyObject {
  try {
    return createPrivateKey(pem);
  } catch (err) {
    throw new EtcdTlsError(`--etcd-keyfile ${file} is not a PEM private key (or it is encrypted; etcd client keys must not be)`, { cause: err });
  }
}

// What OpenSSL (through gRPC) says when etcd rejects our client certificate or sends none we trust.
const REFUSED_CLIENT = /alert bad certificate|alert certificate required|alert unknown ca|alert certificate unknown/i;
const UNVERIFIED_SERVER = /self[- ]signed certificate|unable to verify|unable to get (local )?issuer|certificate verify failed|IP: \S+ is not in the cert|Hostname\/IP does not match/i;
const NOT_TLS = /wrong version number|packet length too long|http_request/i;

/** `err` (a failure to reach etcd) restated in terms of the TLS flags when it is a TLS failure; otherwise `err` itself. Pure. */
export function explainEtcdFailure(err: unknown, endpoints: string[], files: EtcdTlsFiles = {}): unknown {
  if (err instanceof EtcdTlsError) return err;
  const message = err instanceof Error ? err.message : String(err);
  const at = `cannot reach etcd at ${endpoints.join(', ')}`;
  const cause = { cause: err };
  const reason = tlsReason(message);
  if (REFUSED_CLIENT.test(message)) {
    return new EtcdTlsError(files.certFile
      ? `${at}: etcd refused the client certificate in --etcd-certfile ${files.certFile}; it must be signed by a CA in etcd's --trusted-ca-file and allow client authentication (${reason})`
      : `${at}: etcd refused the TLS handshake because no client certificate was sent; it runs with --client-cert-auth, so pass --etcd-certfile and --etcd-keyfile (${reason})`, cause);
  }
  if (UNVERIFIED_SERVER.test(message)) {
    return new EtcdTlsError(`${at}: cannot verify etcd's serving certificate ${files.caFile ? `with --etcd-cafile ${files.caFile}` : 'with the system CAs; pass --etcd-cafile with the CA that signed it'} (${reason})`, cause);
  }
  if (NOT_TLS.test(message) && endpoints.some((e) => /^https:/i.test(e))) {
    return new EtcdTlsError(`${at}: etcd does not answer TLS there; use http:// endpoints without the TLS flags, or start etcd with --cert-file and --key-file (${reason})`, cause);
  }
  return err;
}

// OpenSSL's reason ("sslv3 alert bad certificate") out of gRPC's long "14 UNAVAILABLE: ... Last error: ..." message.
function tlsReason(message: string): string {
  return /SSL routines:[^:]*:([^:]+)/.exec(message)?.[1] ?? message.split('\n')[0]!;
}

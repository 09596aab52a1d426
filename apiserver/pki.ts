/**
 * The apiserver's own small PKI. kubectl sends bearer tokens only over
 * HTTPS, so the apiserver needs a serving certificate that clients can pin
 * through `certificate-authority-data`: a long-lived self-signed CA, kept on
 * disk, signs a short-lived serving certificate that is reissued (from the
 * same CA, so kubeconfigs stay valid) when it nears expiry or lacks a name
 * the server is now reached by.
 *
 * Concurrency: meant to be called at startup by the one apiserver that owns
 * `dir`. Files are replaced atomically, so a crash never leaves a torn file;
 * two processes racing on the very first start could each create a CA.
 */
import * as x509 from '@peculiar/x509';
import { createPrivateKey, X509Certificate as NodeCertificate, webcrypto } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as net from 'node:net';
import * as path from 'node:path';
import { writeFileAtomic } from '../api/atomic-write.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

/** The CA and serving certificate, as PEM text and as the paths they are kept at. */
export interface Pki {
  caCertPem: string;
  /** Absent when `ca.key` was removed (e.g. moved offline): the serving cert then cannot be reissued. */
  caKeyPem?: string;
  certPem: string;
  keyPem: string;
  caPath: string;
  certPath: string;
  keyPath: string;
}

/** Settings for {@link ensurePki}. */
export interface PkiOptions {
  /** Names and IP addresses clients use to reach the apiserver; localhost, 127.0.0.1 and ::1 are always added. */
  hosts: string[];
  /** The clock, injectable so tests can check renewal without waiting a year. Default: the system clock. */
  now?: () => Date;
}

/** A PKI directory that cannot be used as it is; the message says which file and how to fix it. */
export class PkiError extends Error {
  override readonly name = 'PkiError';

  /** Creates the error; `cause` keeps the underlying failure. */
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
  }
}

const ALWAYS_HOSTS = ['localhost', '127.0.0.1', '::1'];
const KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256' };
const SIGNING_ALGORITHM = { name: 'ECDSA', hash: 'SHA-256' };
const DAY_MS = 24 * 60 * 60 * 1000;
const CA_LIFETIME_DAYS = 3650;
const SERVING_LIFETIME_DAYS = 365;
const RENEW_WITHIN_DAYS = 30;
// Backdated so a client whose clock runs a little behind still accepts a fresh certificate.
const BACKDATE_MS = 60 * 60 * 1000;

interface KeyedCert {
  certPem: string;
  keyPem?: string;
}

/** A certificate and its private key (PKCS#8), as PEM text. */
export interface CertificatePair {
  certPem: string;
  keyPem: string;
}

interface Paths {
  caPath: string;
  caKeyPath: string;
  certPath: string;
  keyPath: string;
}

/** Loads or creates the CA and serving certificate in `dir`, reissuing the serving certificate when needed. */
export async function ensurePki(dir: string, opts: PkiOptions): Promise<Pki> {
  await fs.mkdir(dir, { recursive: true, mode: 0o700 });
  const now = opts.now?.() ?? new Date();
  const hosts = normalizeHosts([...opts.hosts, ...ALWAYS_HOSTS]);
  const paths: Paths = {
    caPath: path.join(dir, 'ca.crt'),
    caKeyPath: path.join(dir, 'ca.key'),
    certPath: path.join(dir, 'apiserver.crt'),
    keyPath: path.join(dir, 'apiserver.key'),
  };
  const ca = (await loadPair(paths.caPath, paths.caKeyPath)) ?? (await createCa(paths, now));
  const serving = await ensureServingCert(paths, ca, hosts, now);
  await restrictModes(dir, paths);
  const { caPath, certPath, keyPath } = paths;
  return { caCertPem: ca.certPem, caKeyPem: ca.keyPem, ...serving, caPath, certPath, keyPath };
}

/**
 * The directory and the private keys readable by their owner only, however they came (a copy made for
 * another replica keeps the copier's modes): with the CA key, anyone on the host could mint a serving
 * certificate and take the tokens of every client.
 */
async function restrictModes(dir: string, paths: Paths): Promise<void> {
  for (const [file, mode] of [[dir, 0o700], [paths.caKeyPath, 0o600], [paths.keyPath, 0o600]] as const) {
    const stat = await fs.stat(file).catch((err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? undefined : Promise.reject(err)));
    // Left alone when already private: a read-only or foreign-owned pki dir that is safe keeps working.
    if (!stat || (stat.mode & 0o077) === 0) continue;
    await fs.chmod(file, mode).catch((err: Error) => {
      throw new PkiError(`${file} is open to other users (mode ${(stat.mode & 0o777).toString(8)}) and cannot be made private (${err.message}): chmod ${mode.toString(8)} it, as its owner`);
    });
  }
}

async function ensureServingCert(paths: Paths, ca: KeyedCert, hosts: string[], now: Date): Promise<CertificatePair> {
  const current = await loadPair(paths.certPath, paths.keyPath);
  if (current?.keyPem !== undefined && servingCertFits(current.certPem, current.keyPem, ca.certPem, hosts, now)) {
    return { certPem: current.certPem, keyPem: current.keyPem };
  }
  return issueServingCert(paths, ca, hosts, now);
}

async function readIfExists(file: string): Promise<string | undefined> {
  try {
    return await fs.readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function loadPair(certPath: string, keyPath: string): Promise<KeyedCert | undefined> {
  const certPem = await readIfExists(certPath);
  return certPem === undefined ? undefined : { certPem, keyPem: await readIfExists(keyPath) };
}

// DNS names compare case-insensitively; "[::1]" is how a URL spells an IPv6 host.
function normalizeHosts(hosts: string[]): string[] {
  const out = new Set<string>();
  for (const raw of hosts) {
    const host = raw.trim().replace(/^\[(.*)\]$/, '$1').toLowerCase();
    if (host === '') continue;
    if (net.isIP(host) === 0 && !/^(\*\.)?[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?(\.[a-z0-9_]([-a-z0-9_]*[a-z0-9_])?)*$/.test(host)) {
      throw new PkiError(`cannot put ${JSON.stringify(raw)} in the serving certificate: not an IP address or DNS name`);
    }
    out.add(host);
  }
  return [...out];
}

async function generateKeys(): Promise<CryptoKeyPair> {
  return (await webcrypto.subtle.generateKey(KEY_ALGORITHM, true, ['sign', 'verify'])) as CryptoKeyPair;
}

// PKCS#8 ("PRIVATE KEY") is what tls.createServer and kubectl's client-key-data both accept.
async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key as webcrypto.CryptoKey);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

function validity(now: Date, days: number): { notBefore: Date; notAfter: Date } {
  return { notBefore: new Date(now.getTime() - BACKDATE_MS), notAfter: new Date(now.getTime() + days * DAY_MS) };
}

/** What a certificate from {@link issueCertificate} is for. */
export interface CertificateRequest {
  commonName: string;
  /** DNS names and IP addresses to put in the subjectAltName. */
  hosts?: string[];
  usages: ('serverAuth' | 'clientAuth')[];
  /** Lifetime; default 365 days. */
  days?: number;
  now?: Date;
}

/** A new self-signed CA, kept in memory only: for tooling and tests (an etcd's TLS, say); the apiserver's own CA comes from ensurePki. */
export async function createCertificateAuthority(commonName: string, now = new Date()): Promise<CertificatePair> {
  const keys = await generateKeys();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: `CN=${commonName}`,
    keys,
    signingAlgorithm: SIGNING_ALGORITHM,
    ...validity(now, CA_LIFETIME_DAYS),
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await privateKeyPem(keys.privateKey) };
}

/** A new key and certificate signed by `ca` (a pair from createCertificateAuthority or a PKI dir). */
export async function issueCertificate(ca: CertificatePair, req: CertificateRequest): Promise<CertificatePair> {
  const der = x509.PemConverter.decodeFirst(ca.keyPem);
  const caKey = (await webcrypto.subtle.importKey('pkcs8', der, KEY_ALGORITHM, false, ['sign'])) as CryptoKey;
  return signCertificate(new x509.X509Certificate(ca.certPem), caKey, req);
}

async function createCa(paths: Paths, now: Date): Promise<KeyedCert> {
  const ca = await createCertificateAuthority('cairn-ca', now);
  // Key first: a crash in between leaves no certificate, so the next start makes a new pair.
  await writeFileAtomic(paths.caKeyPath, ca.keyPem, 0o600);
  await writeFileAtomic(paths.caPath, ca.certPem, 0o644);
  return ca;
}

async function importCaKey(paths: Paths, keyPem: string | undefined): Promise<CryptoKey> {
  if (keyPem === undefined) {
    throw new PkiError(
      `cannot issue a serving certificate: ${paths.caKeyPath} is missing; restore it, or delete ${paths.caPath} to create a new CA (existing kubeconfigs will then need its new certificate-authority-data)`,
    );
  }
  try {
    const der = x509.PemConverter.decodeFirst(keyPem);
    return (await webcrypto.subtle.importKey('pkcs8', der, KEY_ALGORITHM, false, ['sign'])) as CryptoKey;
  } catch (err) {
    throw new PkiError(`cannot use ${paths.caKeyPath}: not a PKCS#8 ECDSA P-256 private key`, { cause: err });
  }
}

function parseCa(paths: Paths, certPem: string): x509.X509Certificate {
  try {
    return new x509.X509Certificate(certPem);
  } catch (err) {
    throw new PkiError(`cannot parse ${paths.caPath}; restore it, or delete it and ${paths.caKeyPath} to create a new CA`, { cause: err });
  }
}

function subjectAltNames(hosts: string[]): x509.SubjectAlternativeNameExtension {
  return new x509.SubjectAlternativeNameExtension(
    hosts.map((h) => ({ type: net.isIP(h) === 0 ? ('dns' as const) : ('ip' as const), value: h })),
  );
}

// Reuses the CA's own key identifier so chain builders link the two certificates.
async function authorityKeyId(caCert: x509.X509Certificate): Promise<x509.AuthorityKeyIdentifierExtension> {
  const ski = caCert.getExtension(x509.SubjectKeyIdentifierExtension);
  return ski ? new x509.AuthorityKeyIdentifierExtension(ski.keyId) : x509.AuthorityKeyIdentifierExtension.create(caCert.publicKey);
}

async function issueServingCert(paths: Paths, ca: KeyedCert, hosts: string[], now: Date): Promise<CertificatePair> {
  const caKey = await importCaKey(paths, ca.keyPem);
  const caCert = parseCa(paths, ca.certPem);
  const request = { commonName: 'cairn-apiserver', hosts, usages: ['serverAuth' as const], days: SERVING_LIFETIME_DAYS, now };
  const serving = await signCertificate(caCert, caKey, request);
  await writeFileAtomic(paths.keyPath, serving.keyPem, 0o600);
  await writeFileAtomic(paths.certPath, serving.certPem, 0o644);
  return serving;
}

async function signCertificate(caCert: x509.X509Certificate, caKey: CryptoKey, req: CertificateRequest): Promise<CertificatePair> {
  const keys = await generateKeys();
  const hosts = req.hosts ?? [];
  const cert = await x509.X509CertificateGenerator.create({
    subject: `CN=${req.commonName}`,
    // The CA's Name object, not its text: issuer bytes must equal the CA's subject bytes for Go's verifier.
    issuer: caCert.subjectName,
    publicKey: keys.publicKey,
    signingKey: caKey,
    signingAlgorithm: SIGNING_ALGORITHM,
    ...validity(req.now ?? new Date(), req.days ?? SERVING_LIFETIME_DAYS),
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension(req.usages.map((u) => x509.ExtendedKeyUsage[u])),
      ...(hosts.length > 0 ? [subjectAltNames(normalizeHosts(hosts))] : []),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await authorityKeyId(caCert),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: await privateKeyPem(keys.privateKey) };
}

function coversHost(cert: NodeCertificate, host: string): boolean {
  return net.isIP(host) !== 0 ? cert.checkIP(host) !== undefined : cert.checkHost(host, { subject: 'never' }) !== undefined;
}

// Anything unreadable or inconsistent counts as unfit: the serving pair is cheap to replace.
function servingCertFits(certPem: string, keyPem: string, caCertPem: string, hosts: string[], now: Date): boolean {
  try {
    const cert = new NodeCertificate(certPem);
    const ca = new NodeCertificate(caCertPem);
    const { notBefore, notAfter } = new x509.X509Certificate(certPem);
    return (
      cert.checkIssued(ca) &&
      cert.verify(ca.publicKey) &&
      cert.checkPrivateKey(createPrivateKey(keyPem)) &&
      notBefore.getTime() <= now.getTime() &&
      notAfter.getTime() - now.getTime() > RENEW_WITHIN_DAYS * DAY_MS &&
      hosts.every((h) => coversHost(cert, h))
    );
  } catch {
    return false;
  }
}

/**
 * The agent's own credential (issue 7): a join token is exchanged once for a
 * node credential bound to this node and cluster, kept 0600 in the data dir
 * (`node-credential.json`), reused across restarts, and renewed at two thirds
 * of its lifetime, so an agent never holds more than its node needs and never
 * the admin token. Renewal swaps the token inside the live KubeConfig, so
 * every client of the agent (informer, leases, status writes) picks it up on
 * its next request.
 */
import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { Logger } from 'winston';
import { writeFileAtomic } from '../api/atomic-write.js';
import { ApiStatusError, statusCodeOf } from '../api/client/errors.js';
import { loadKubeConfig, type ConnectionOptions, type PooledKubeConfig } from '../api/client/kubeconfig.js';
import { RestClient } from '../api/client/rest-client.js';
import { JOIN_PATH, ROTATE_PATH, type NodeCredential } from '../api/credentials.js';
import { MAX_TIMER_MS, type Clock, type TimerHandle } from '../runtime/clock.js';

export const CREDENTIAL_FILE = 'node-credential.json';
const RETRY_MS = 30_000;
/** What to do when the node credential itself is refused. */
const REJOIN_HINT = 'the node credential is refused (revoked, or retired and never replaced): create a join token (cairn token create --cluster <cluster>) and start the agent again with --join-token';

// exchange() wraps the API's error: the status is its cause's.
function isUnauthorized(err: unknown): boolean {
  return statusCodeOf((err as Error)?.cause) === 401;
}

/** The credential as kept on disk: what was issued, when, and for which server. */
export interface StoredCredential extends NodeCredential {
  server: string;
  /** When the agent received it (epoch ms), to renew at two thirds of its life. */
  receivedAt: number;
}

/** How an agent gets its credential. */
export interface CredentialRequest {
  dataDir: string;
  cluster: string;
  nodeName: string;
  /** The server, its CA and TLS settings; token is ignored. */
  connection: ConnectionOptions & { server: string };
  joinToken?: string;
  clock: Clock;
}

const fileOf = (dataDir: string) => path.join(dataDir, CREDENTIAL_FILE);

/**
 * The node credential to use: the stored one while it is valid for this
 * node, cluster and server, else a new one for the join token. Throws with
 * a hint when neither is there.
 */
export async function obtainCredential(r: CredentialRequest): Promise<StoredCredential> {
  const stored = await readCredential(r.dataDir);
  const usable = stored && stored.cluster === r.cluster && stored.nodeName === r.nodeName && stored.server === r.connection.server && Date.parse(stored.expires) > r.clock.now();
  if (usable) return stored;
  if (!r.joinToken) {
    const why = stored ? `the node credential in ${fileOf(r.dataDir)} is for ${stored.cluster}/${stored.nodeName} at ${stored.server}, expiring ${stored.expires}` : `there is no node credential in ${r.dataDir}`;
    throw new Error(`${why}; join the node with a join token: cairn token create --cluster ${r.cluster} (as an admin), then cairn agent --join-token TOKEN ...`);
  }
  const cred = await exchange(r.connection, r.joinToken, JOIN_PATH, { nodeName: r.nodeName }, `join token for node ${r.nodeName}`);
  if (cred.cluster !== r.cluster) {
    throw new Error(`the join token is for cluster ${cred.cluster}, not --cluster ${r.cluster}; run the agent with --cluster ${cred.cluster} or use a join token of ${r.cluster}`);
  }
  return saveCredential(r.dataDir, cred, r.connection.server, r.clock.now());
}

/** ConnectionOptions that authenticate with the credential. */
export function credentialConnection(connection: ConnectionOptions & { server: string }, cred: StoredCredential): ConnectionOptions {
  return { server: connection.server, caFile: connection.caFile, insecureSkipTlsVerify: connection.insecureSkipTlsVerify, token: cred.token };
}

async function readCredential(dataDir: string): Promise<StoredCredential | undefined> {
  try {
    return JSON.parse(await fs.readFile(fileOf(dataDir), 'utf8')) as StoredCredential;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || err instanceof SyntaxError) return undefined;
    throw err;
  }
}

async function saveCredential(dataDir: string, cred: NodeCredential, server: string, now: number): Promise<StoredCredential> {
  const stored: StoredCredential = { ...cred, server, receivedAt: now };
  await writeCredential(dataDir, stored);
  return stored;
}

async function writeCredential(dataDir: string, stored: StoredCredential): Promise<void> {
  await fs.mkdir(dataDir, { recursive: true });
  await writeFileAtomic(fileOf(dataDir), `${JSON.stringify(stored, null, 2)}\n`, 0o600);
}

async function exchange(connection: ConnectionOptions & { server: string }, token: string, endpoint: string, body: object, what: string): Promise<NodeCredential> {
  const kc = loadKubeConfig({ server: connection.server, caFile: connection.caFile, insecureSkipTlsVerify: connection.insecureSkipTlsVerify, token });
  try {
    return await RestClient.forConfig(kc).request<NodeCredential>('POST', endpoint, { body });
  } catch (err) {
    const detail = err instanceof ApiStatusError ? `${err.code} ${err.reason}: ${err.message}` : String((err as Error)?.message ?? err);
    throw new Error(`exchanging the ${what} at ${connection.server}${endpoint} failed: ${detail}`, { cause: err });
  } finally {
    kc.destroyAgent();
  }
}

/** Renews the credential at two thirds of its life and puts the new token into `kc`. */
export class CredentialRotator {
  private timer: TimerHandle | undefined;
  private saveTimer: TimerHandle | undefined;
  private stopped = false;

  constructor(
    private readonly kc: PooledKubeConfig,
    private cred: StoredCredential,
    private readonly o: { dataDir: string; connection: ConnectionOptions & { server: string }; clock: Clock; log: Logger },
  ) {}

  start(): void {
    const life = Date.parse(this.cred.expires) - this.cred.receivedAt;
    this.scheduleAt(this.cred.receivedAt + (life * 2) / 3);
  }

  stop(): void {
    this.stopped = true;
    this.timer?.cancel();
    this.saveTimer?.cancel();
  }

  // In hops of at most MAX_TIMER_MS: Node fires a longer timeout at once (a credential living 60 days
  // rotated in a loop).
  private scheduleAt(dueAt: number): void {
    if (this.stopped) return;
    const ms = Math.max(0, dueAt - this.o.clock.now());
    this.timer = this.o.clock.setTimer(() => void (ms > MAX_TIMER_MS ? this.scheduleAt(dueAt) : this.rotate()), Math.min(ms, MAX_TIMER_MS));
  }

  private async rotate(): Promise<void> {
    let next: NodeCredential;
    try {
      next = await exchange(this.o.connection, this.cred.token, ROTATE_PATH, {}, 'node credential');
    } catch (err) {
      const left = Date.parse(this.cred.expires) - this.o.clock.now();
      this.o.log.error('renewing the node credential failed; retrying', { error: String((err as Error)?.message ?? err), expiresInMs: left, ...(isUnauthorized(err) ? { hint: REJOIN_HINT } : {}) });
      this.scheduleAt(this.o.clock.now() + Math.min(RETRY_MS, Math.max(1000, left / 4)));
      return;
    }
    // In use at once, saved or not: the old token is retired a minute after its successor was issued.
    this.cred = { ...next, server: this.o.connection.server, receivedAt: this.o.clock.now() };
    useToken(this.kc, next.token);
    this.o.log.info('node credential renewed', { expires: next.expires });
    await this.persist();
    this.start();
  }

  // Until it is saved, an agent restarted after the old token's retirement could not authenticate: saving is retried.
  private async persist(): Promise<void> {
    try {
      await writeCredential(this.o.dataDir, this.cred);
    } catch (err) {
      this.o.log.error('cannot save the renewed node credential to the data dir; retrying (an agent restarted meanwhile would hold a retired one)', { error: String((err as Error)?.message ?? err), dataDir: this.o.dataDir });
      if (!this.stopped) this.saveTimer = this.o.clock.setTimer(() => void this.persist(), RETRY_MS);
    }
  }
}

// client-node reads the current user's token on every request.
function useToken(kc: PooledKubeConfig, token: string): void {
  const current = kc.getCurrentUser()?.name;
  kc.users = kc.users.map((u) => (u.name === current ? { ...u, token } : u));
}

/**
 * A minimal client of QEMU's machine protocol (QMP) over a unix socket:
 * JSON objects, one per line; a greeting, then `qmp_capabilities`, then
 * commands answered in order. The agent drives VMs only through QMP, never
 * by parsing human-readable monitor text. A QMP socket serves one client at
 * a time, so every use is short: connect, run a few commands, close
 * (withQmp). Each VM has two sockets — one for the agent's quick status
 * reads, one for operations that may wait long — so a status poll never
 * queues behind a running migration.
 */
import net from 'node:net';
import { OperationError } from '../../operations/errors.js';

/** An error QEMU answered a command with. */
export class QmpError extends Error {
  constructor(
    readonly command: string,
    readonly errorClass: string,
    desc: string,
  ) {
    super(`QMP ${command}: ${desc} (${errorClass})`);
  }
}

/** One asynchronous event QEMU sent (e.g. SHUTDOWN, BLOCK_JOB_READY). */
export interface QmpEvent {
  event: string;
  data?: Record<string, unknown>;
}

type Pending = { command: string; resolve(v: unknown): void; reject(e: Error): void };

/** A connected, negotiated QMP session. */
export class QmpClient {
  private buffer = '';
  private readonly pending: Pending[] = [];
  readonly events: QmpEvent[] = [];
  private closedError: Error | undefined;
  private greeted: (() => void) | undefined;

  private constructor(private readonly socket: net.Socket) {
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => this.onData(chunk));
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => this.fail(new Error('QMP connection closed by qemu')));
  }

  /** Connects to `socketPath` and negotiates capabilities; fails after `timeoutMs`. */
  static async connect(socketPath: string, timeoutMs = 3000): Promise<QmpClient> {
    const socket = net.createConnection(socketPath);
    const client = new QmpClient(socket);
    const timer = setTimeout(() => socket.destroy(new Error(`no QMP greeting on ${socketPath} within ${timeoutMs} ms (another client connected?)`)), timeoutMs);
    try {
      await new Promise<void>((resolve, reject) => {
        client.greeted = resolve;
        socket.once('error', reject);
        socket.once('close', () => reject(client.closedError ?? new Error(`QMP socket ${socketPath} closed`)));
      });
      await client.execute('qmp_capabilities');
      return client;
    } catch (err) {
      socket.destroy();
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Runs one command; resolves its `return` value, rejects with QmpError when QEMU refuses. */
  execute<T = unknown>(command: string, args?: Record<string, unknown>): Promise<T> {
    if (this.closedError) return Promise.reject(this.closedError);
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ command, resolve: resolve as (v: unknown) => void, reject });
      this.socket.write(`${JSON.stringify(args ? { execute: command, arguments: args } : { execute: command })}\n`);
    });
  }

  /** Waits until an event named `name` (matching `match`) arrived, or `timeoutMs` passed (then rejects). */
  async waitForEvent(name: string, timeoutMs: number, match: (e: QmpEvent) => boolean = () => true, signal?: AbortSignal): Promise<QmpEvent> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = this.events.find((e) => e.event === name && match(e));
      if (found) return found;
      signal?.throwIfAborted();
      if (this.closedError) throw this.closedError;
      if (Date.now() > deadline) throw new Error(`no QMP event ${name} within ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  close(): void {
    this.socket.end();
    this.socket.destroy();
  }

  private onData(chunk: string): void {
    this.buffer += chunk;
    let nl: number;
    while ((nl = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, nl).trim();
      this.buffer = this.buffer.slice(nl + 1);
      if (line) this.onMessage(JSON.parse(line) as Record<string, unknown>);
    }
  }

  private onMessage(msg: Record<string, unknown>): void {
    if ('QMP' in msg) return this.greeted?.();
    if ('event' in msg) {
      this.events.push({ event: String(msg.event), data: msg.data as Record<string, unknown> | undefined });
      return;
    }
    const next = this.pending.shift();
    if (!next) return;
    if ('error' in msg) {
      const e = msg.error as { class?: string; desc?: string };
      next.reject(new QmpError(next.command, e.class ?? 'GenericError', e.desc ?? 'failed'));
    } else next.resolve(msg.return);
  }

  private fail(err: Error): void {
    this.closedError ??= err;
    for (const p of this.pending.splice(0)) p.reject(err);
  }
}

/** Connects, runs `use`, and always closes; a socket that cannot be reached is DriverUnavailable naming it. */
export async function withQmp<T>(socketPath: string, use: (qmp: QmpClient) => Promise<T>, timeoutMs?: number): Promise<T> {
  let qmp: QmpClient;
  try {
    qmp = await QmpClient.connect(socketPath, timeoutMs);
  } catch (err) {
    throw new OperationError('DriverUnavailable', `cannot talk to qemu on its QMP socket ${socketPath}: ${(err as Error).message}`, 'check that the qemu process of the instance is running; the agent restarts it if it exited', { cause: err });
  }
  try {
    return await use(qmp);
  } finally {
    qmp.close();
  }
}

/**
 * One QMP command whose whole exchange (connect, greeting, answer) ends within `ms`: a qemu that
 * greets and then stalls, or never greets, cannot hold the caller longer. Rejects as withQmp does.
 */
export function qmpExchange<T>(socketPath: string, command: string, ms: number): Promise<T> {
  const deadline = Date.now() + ms;
  return withQmp(
    socketPath,
    (qmp) => {
      const timer = setTimeout(() => qmp.close(), Math.max(0, deadline - Date.now()));
      return qmp.execute<T>(command).finally(() => clearTimeout(timer));
    },
    ms,
  );
}

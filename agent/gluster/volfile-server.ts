/**
 * The agent's volfile server for the gluster FUSE mounts on its node: what
 * glusterd is to a mount, on a unix socket in the data dir, so a mount made
 * with `-s <socket> --volfile-server-transport unix --volfile-id
 * <cluster>/<volume>` fetches its client volfile from the agent. When the
 * volfile a key serves changes (a brick moved), the server sends every
 * mount that asked for it the FETCHSPEC callback, and the mount switches
 * to the new graph under its running instances, as with glusterd. The
 * socket path is stable, so a mount reconnects to a restarted agent by
 * itself; meanwhile its data path does not depend on the agent.
 * Level-triggered: a refresh compares what each key serves now with what
 * was last served, whatever changed it.
 */
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CALLBACK_PROGRAM, decodeCall, decodeGetspecKey, encodeFetchspec, encodeGetspecResult, encodeReply, encodeUnavailable, GETSPEC, HANDSHAKE_PROGRAM, RecordReader } from './rpc.js';

/** Where the agent of this data dir serves volfiles: in it, or in the temp dir when that path is too long for a unix socket (108 bytes). */
export function volfileSocket(dataDir: string): string {
  const inDataDir = path.join(path.resolve(dataDir), 'gluster', 'volfile.sock');
  if (Buffer.byteLength(inDataDir) <= 100) return inDataDir;
  return path.join(os.tmpdir(), `cairn-volfile-${createHash('sha256').update(path.resolve(dataDir)).digest('hex').slice(0, 16)}.sock`);
}

/** The key a mount of a volume asks for. */
export function volfileKey(namespace: string, volumeName: string): string {
  return `${namespace}/${volumeName}`;
}

/** A running volfile server. */
export interface VolfileServer {
  /** Tells the mounts whose key serves something new to fetch it again. */
  refresh(): void;
  close(): Promise<void>;
}

interface Subscriber {
  socket: net.Socket;
  key: string;
}

/** Serves `lookup(key)` on `socketPath` (replacing a stale socket file). */
export async function startVolfileServer(socketPath: string, lookup: (key: string) => string | undefined, log: (message: string, meta: Record<string, unknown>) => void): Promise<VolfileServer> {
  fs.mkdirSync(path.dirname(socketPath), { recursive: true, mode: 0o700 });
  fs.rmSync(socketPath, { force: true });
  const subscribers = new Set<Subscriber>();
  const served = new Map<string, string | undefined>();
  let xid = 1;

  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    const reader = new RecordReader();
    socket.on('data', (chunk) => {
      try {
        for (const record of reader.push(chunk)) answer(socket, record);
      } catch (err) {
        log('volfile server: dropping a connection that sent a bad record', { error: (err as Error).message });
        socket.destroy();
      }
    });
    socket.on('error', () => socket.destroy());
    socket.on('close', () => {
      sockets.delete(socket);
      for (const s of subscribers) if (s.socket === socket) subscribers.delete(s);
      // A volfile no mount follows any more is not looked up again (each refresh looked up every one ever served).
      for (const key of served.keys()) if (![...subscribers].some((s) => s.key === key)) served.delete(key);
    });
  });

  function answer(socket: net.Socket, record: Buffer): void {
    const call = decodeCall(record);
    if (!call) return; // a reply to our callback: nothing to do
    if (call.program !== HANDSHAKE_PROGRAM) return void socket.write(encodeUnavailable(call.xid, 1));
    if (call.procedure !== GETSPEC) return void socket.write(encodeUnavailable(call.xid, 3));
    const key = decodeGetspecKey(call.args);
    const spec = lookup(key);
    served.set(key, spec);
    if (![...subscribers].some((s) => s.socket === socket && s.key === key)) subscribers.add({ socket, key });
    socket.write(encodeReply(call.xid, encodeGetspecResult(spec)));
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(socketPath, () => resolve());
  });
  fs.chmodSync(socketPath, 0o600);

  return {
    refresh() {
      for (const [key, spec] of served) {
        const now = lookup(key);
        if (now === undefined || now === spec) continue;
        served.set(key, now);
        const told = [...subscribers].filter((s) => s.key === key);
        for (const s of told) s.socket.write(encodeFetchspec(xid++));
        log('volfile changed: mounts told to fetch it again', { key, mounts: told.length, program: CALLBACK_PROGRAM });
      }
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sockets) s.destroy();
      }),
  };
}

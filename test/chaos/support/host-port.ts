/**
 * Reaching a TCP port on a test host from the test process, which stays in
 * the machine's own network namespace: a relay started on the host listens
 * on a unix socket (a file, visible from every network namespace) and
 * connects each client to the port there; the test process listens on a
 * loopback port of its own and pipes each connection into that socket.
 * Run as a script: `host-port.js <socket> <host> <port>` is the relay.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import net from 'node:net';
import { fileURLToPath } from 'node:url';
import { eventually } from '../../support/eventually.js';

function pipeBoth(a: net.Socket, b: net.Socket): void {
  a.pipe(b).on('error', () => a.destroy());
  b.pipe(a).on('error', () => b.destroy());
  a.on('error', () => b.destroy());
  b.on('error', () => a.destroy());
  a.on('close', () => b.destroy());
  b.on('close', () => a.destroy());
}

/** A loopback port of this process that reaches `port` on a host. */
export interface HostPort {
  /** 127.0.0.1:<port> here. */
  local: string;
  close(): Promise<void>;
}

/** Starts the relay on the host (through `launcher`) and the local listener. */
export async function forwardHostPort(launcher: string[], socket: string, host: string, port: number): Promise<HostPort> {
  fs.rmSync(socket, { force: true });
  const [cmd, ...pre] = launcher;
  const relay: ChildProcess = spawn(cmd!, [...pre, process.execPath, fileURLToPath(import.meta.url), socket, host, String(port)], { stdio: 'ignore' });
  await eventually(`the relay's socket ${socket}`, () => fs.existsSync(socket), 10_000, 50);
  const server = net.createServer((client) => pipeBoth(client, net.connect(socket)));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port: localPort } = server.address() as net.AddressInfo;
  return {
    local: `127.0.0.1:${localPort}`,
    async close() {
      relay.kill('SIGKILL');
      await new Promise((r) => server.close(r));
      fs.rmSync(socket, { force: true });
    },
  };
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const [socket, host, port] = process.argv.slice(2);
  net.createServer((client) => pipeBoth(client, net.connect(Number(port), host!))).listen(socket!);
}

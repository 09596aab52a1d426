/**
 * A TCP proxy on loopback that a test can cut and restore, to take etcd
 * away from an apiserver without stopping etcd itself.
 */
import net from 'node:net';

/** A running proxy. */
export interface TcpProxy {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Drops every connection and refuses new ones. */
  cut(): void;
  /** Accepts connections again. */
  restore(): void;
  close(): Promise<void>;
}

/**
 * Opens the upstream connection of an accepted `client`, tracking both in `sockets`
 * until either closes (which closes the other).
 */
export function connectUpstream(client: net.Socket, target: URL, sockets: Set<net.Socket>): net.Socket {
  const upstream = net.connect(Number(target.port), target.hostname);
  for (const s of [client, upstream]) {
    sockets.add(s);
    s.on('error', () => undefined);
    s.on('close', () => {
      sockets.delete(s);
      client.destroy();
      upstream.destroy();
    });
  }
  return upstream;
}

/** Proxies to `target` (http://host:port). */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const to = new URL(target);
  let cut = false;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    if (cut) return void client.destroy();
    client.pipe(connectUpstream(client, to, sockets)).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    cut() {
      cut = true;
      for (const s of sockets) s.destroy();
    },
    restore() {
      cut = false;
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

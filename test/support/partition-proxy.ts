/**
 * A TCP proxy on loopback that can simulate a network partition the way a
 * real one behaves: while held, bytes are neither delivered nor refused —
 * open connections stall and new ones hang in their handshake, as when
 * packets are dropped — and on release everything buffered flows again (TCP
 * retransmission after the partition heals). Unlike test/support/tcp-proxy.ts,
 * whose cut() resets connections at once, this catches code that waits on
 * a request without a timeout.
 */
import net from 'node:net';
import { connectUpstream } from './tcp-proxy.js';

/** A running partition proxy. */
export interface PartitionProxy {
  /** http://127.0.0.1:<port> */
  url: string;
  /** Stops moving bytes in both directions (connections stay open). */
  hold(): void;
  /**
   * Moves bytes again. With `abandonStalled`, connections opened before the
   * release stay stalled forever (never closed, never delivered): what
   * clients see when a middlebox lost their connections' state during the
   * partition; only new connections work.
   */
  release(opts?: { abandonStalled?: boolean }): void;
  close(): Promise<void>;
}

/** Proxies to `target` (http://host:port or https://host:port). */
export async function startPartitionProxy(target: string): Promise<PartitionProxy> {
  const to = new URL(target);
  let held = false;
  const sockets = new Set<net.Socket>();
  const abandoned = new WeakSet<net.Socket>();
  const forward = (from: net.Socket, to: net.Socket) => {
    from.on('data', (chunk: Buffer) => {
      if (!to.write(chunk)) from.pause();
    });
    to.on('drain', () => {
      if (!held && !abandoned.has(from)) from.resume();
    });
  };
  const server = net.createServer((client) => {
    const upstream = connectUpstream(client, to, sockets);
    if (held) for (const s of [client, upstream]) s.pause();
    forward(client, upstream);
    forward(upstream, client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`,
    hold() {
      held = true;
      for (const s of sockets) s.pause();
    },
    release(opts = {}) {
      held = false;
      for (const s of sockets) {
        if (opts.abandonStalled) abandoned.add(s);
        else s.resume();
      }
    },
    close: () => {
      for (const s of sockets) s.destroy();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

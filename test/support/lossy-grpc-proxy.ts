/**
 * An HTTP/2 proxy in front of one etcd member's gRPC port that can lose the
 * answers of transactions etcd did apply, the way a leader change does
 * (etcd commits, then the member answers UNAVAILABLE "etcdserver: leader
 * changed"). It stands between the apiserver's thin write client and etcd,
 * as lossy-etcd.ts stands inside the etcd3 client.
 */
import http2 from 'node:http2';
import type { AddressInfo } from 'node:net';

/** The running proxy. */
export interface LossyGrpcProxy {
  endpoint: string;
  /** Transactions forwarded to etcd, re-sent ones included. */
  sent: number;
  /** Applied transactions whose answer was replaced by UNAVAILABLE. */
  lost: number;
  /** Makes the answers of the next `n` transactions be lost after etcd applied them; `meanwhile` runs before each loss is answered. */
  loseNext(n?: number, meanwhile?: () => Promise<unknown>): void;
  close(): Promise<void>;
}

/** Starts a proxy on a loopback port to the plain-HTTP etcd at `etcdEndpoint`. */
export async function startLossyGrpcProxy(etcdEndpoint: string): Promise<LossyGrpcProxy> {
  const upstream = http2.connect(etcdEndpoint);
  let armed = 0;
  let meanwhile: (() => Promise<unknown>) | undefined;
  const server = http2.createServer();
  const proxy: LossyGrpcProxy = {
    endpoint: '',
    sent: 0,
    lost: 0,
    loseNext: (n = 1, then) => {
      armed += n;
      meanwhile = then;
    },
    close: async () => {
      upstream.close();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  server.on('stream', (stream, headers) => {
    const isTxn = headers[':path'] === '/etcdserverpb.KV/Txn';
    if (isTxn) proxy.sent++;
    const up = upstream.request({ ':method': 'POST', ':path': headers[':path'], 'content-type': 'application/grpc', te: 'trailers' });
    stream.pipe(up);
    const chunks: Buffer[] = [];
    up.on('data', (c: Buffer) => chunks.push(c));
    up.on('trailers', (trailers) => {
      if (isTxn && armed > 0 && trailers['grpc-status'] === '0') {
        armed--;
        proxy.lost++;
        void Promise.resolve(meanwhile?.()).catch(() => undefined).then(() => stream.respond({ ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '14', 'grpc-message': 'etcdserver: leader changed' }, { endStream: true }));
        return;
      }
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': String(trailers['grpc-status']), 'grpc-message': String(trailers['grpc-message'] ?? '') }));
      stream.end(Buffer.concat(chunks));
    });
    up.on('error', () => stream.close(http2.constants.NGHTTP2_INTERNAL_ERROR));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  proxy.endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return proxy;
}

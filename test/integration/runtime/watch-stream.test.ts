/**
 * WatchStream against a TLS port that takes connections and never answers (a
 * hung apiserver): a watch is given up at once when aborted, even while it
 * still waits for one of the pooled agent's sockets, all taken by others.
 */
import net from 'node:net';
import { expect } from 'chai';
import { loadKubeConfig } from '../../../api/client/kubeconfig.js';
import { WatchStream } from '../../../runtime/watch-stream.js';

describe('WatchStream (a hung apiserver)', function () {
  this.timeout(20_000);
  let server: net.Server;
  const sockets = new Set<net.Socket>();

  before(async () => {
    server = net.createServer((s) => (s.resume(), sockets.add(s), s.on('close', () => sockets.delete(s))));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  });
  after(() => {
    sockets.forEach((s) => s.destroy());
    server.close();
  });

  it('ends an aborted watch at once, even one queued behind a full connection pool', async () => {
    const { port } = server.address() as net.AddressInfo;
    const kc = loadKubeConfig({ server: `https://127.0.0.1:${port}`, token: 'nobody', insecureSkipTlsVerify: true });
    const stream = new WatchStream(kc);
    const holders = Array.from({ length: 64 }, () => new AbortController());
    try {
      // The pooled agent has 64 sockets: these watches take them all, and never get an answer.
      for (const h of holders) void stream.watch('/api/v1/pods', {}, () => undefined, () => undefined, h.signal);
      const queued = new AbortController();
      const ended = new Promise<unknown>((resolve) => void stream.watch('/api/v1/pods', {}, () => undefined, resolve, queued.signal));
      await new Promise((resolve) => setTimeout(resolve, 300));
      const abortedAt = Date.now();
      queued.abort();
      const err = await Promise.race([ended, new Promise((resolve) => setTimeout(() => resolve('still waiting'), 1000))]);
      expect((err as Error).name, String(err)).to.equal('AbortError');
      expect(Date.now() - abortedAt).to.be.below(500);
    } finally {
      holders.forEach((h) => h.abort());
      kc.destroyAgent();
    }
  });
});

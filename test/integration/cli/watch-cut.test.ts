/**
 * A watch whose connection is cut mid-stream (the apiserver killed, a slow watcher cut off) ends with an
 * error the CLI handles (it lists again), never an uncaught 'error' that ends the process.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { HttpsClient } from '../../../cli/client/https-client.js';

describe('the CLI https client: a watch cut off mid-stream', () => {
  it('ends the watch with the error, after the events that came, and throws nothing uncaught', async () => {
    const server = http.createServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'a' } } })}\n`);
      setTimeout(() => res.socket?.destroy(), 50);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => uncaught.push(err);
    process.prependListener('uncaughtException', onUncaught);
    const client = new HttpsClient({ cluster: { server: `http://127.0.0.1:${(server.address() as AddressInfo).port}` } });
    try {
      const events: string[] = [];
      const handle = await client.watch('/api/v1/configmaps', {}, (type, obj) => events.push(`${type} ${(obj as { metadata: { name: string } }).metadata.name}`));
      const outcome = await handle.done.then(() => 'ended', (err: Error) => `failed: ${err.message}`);
      await new Promise((r) => setTimeout(r, 50));
      expect(events).to.deep.equal(['ADDED a']);
      expect(outcome).to.match(/^failed: (aborted|.*ECONNRESET|.*socket hang up)/);
      expect(uncaught).to.deep.equal([]);
    } finally {
      process.removeListener('uncaughtException', onUncaught);
      client.close();
      server.close();
    }
  });
});

/**
 * The agent's tunnel while the API server does not answer its handshake (a
 * partition): the client must wait the handshake out and retry, not ping a
 * socket still connecting. ws throws on that ping, and the uncaught
 * exception ended the agent (chaos seed 5151).
 */
import { expect } from 'chai';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { Logger } from 'winston';
import { loadKubeConfig } from '../../../api/client/kubeconfig.js';
import { TunnelClient } from '../../../agent/tunnel/tunnel-client.js';

describe('agent tunnel client against an API server that never answers', function () {
  this.timeout(30_000);

  it('does not ping a socket whose handshake is still on: no exception past the 5-s ping interval', async () => {
    const accepted: net.Socket[] = [];
    const silent = net.createServer((s) => accepted.push(s)); // takes the connection, says nothing
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-tunnel-'));
    const kubeconfig = path.join(dir, 'kubeconfig');
    const server = `https://127.0.0.1:${(silent.address() as net.AddressInfo).port}`;
    fs.writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: '${server}', insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`);
    const lines: string[] = [];
    const log = { info: (m: string) => lines.push(m), warn: (m: string) => lines.push(m), debug: (m: string) => lines.push(m), error: (m: string) => lines.push(m) } as unknown as Logger;
    const tunnel = new TunnelClient({ kubeConfig: loadKubeConfig({ kubeconfig }), cluster: 'c', nodeName: 'n1', dataDir: dir, items: () => [], log });
    try {
      tunnel.start();
      // Past the 5-s ping interval: the old client threw here, uncaught (mocha fails the test on it).
      await new Promise((r) => setTimeout(r, 6_500));
      expect(accepted.length, 'the client connected and waits for the handshake').to.equal(1);
      expect(lines, 'nothing opened or closed yet').to.deep.equal([]);
    } finally {
      tunnel.stop();
      for (const s of accepted) s.destroy();
      silent.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

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
import { ensurePki } from '../../../apiserver/pki.js';
import https from 'node:https';
import { WebSocketServer } from 'ws';

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

  it('backs off against a server that takes the tunnel and closes it at once (another agent with the name, say): no reconnect every 500 ms', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-tunnel-'));
    const pki = await ensurePki(path.join(dir, 'pki'), { hosts: [] });
    const server = https.createServer({ cert: pki.certPem, key: pki.keyPem });
    const wss = new WebSocketServer({ server });
    let opened = 0;
    wss.on('connection', (ws) => (opened++, ws.close()));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const kubeconfig = path.join(dir, 'kubeconfig');
    fs.writeFileSync(kubeconfig, `apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:${(server.address() as net.AddressInfo).port}', insecure-skip-tls-verify: true}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n`);
    const log = { info: () => undefined, warn: () => undefined, debug: () => undefined, error: () => undefined } as unknown as Logger;
    const tunnel = new TunnelClient({ kubeConfig: loadKubeConfig({ kubeconfig }), cluster: 'c', nodeName: 'n1', dataDir: dir, items: () => [], log });
    try {
      tunnel.start();
      await new Promise((r) => setTimeout(r, 5_000));
      // Every 500 ms would be 9 or 10; doubling from 500 ms (±50 %) is 5 at most.
      expect(opened).to.be.within(2, 6);
    } finally {
      tunnel.stop();
      wss.close();
      server.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});

/**
 * Issue 16: with two apiserver replicas over one etcd, a log or console
 * request reaches the replica holding the node's tunnel, and a follow
 * resumes without a gap or repeat when the tunnel moves to the other
 * replica. The agent's end is the real TunnelClient, in this process, over
 * an instance directory the test writes.
 */
import { expect } from 'chai';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import WebSocket from 'ws';
import { loadKubeConfig } from '../../../api/client/kubeconfig.js';
import { createLogger } from '../../../api/log.js';
import { CONSOLE_PROTOCOL } from '../../../api/tunnel.js';
import { TunnelClient } from '../../../agent/tunnel/tunnel-client.js';
import type { RunningApiServer } from '../../../apiserver/server.js';
import { cairnPath, cluster } from '../../support/fixtures.js';
import { eventually } from '../../support/eventually.js';
import { rawRequest } from '../../support/http.js';
import { kubeconfigFor, startTestEnv, type TestEnv } from '../../support/in-process.js';

describe('tunnels across apiserver replicas', function () {
  this.timeout(60_000);
  let env: TestEnv;
  let other: RunningApiServer;
  let dataDir: string;
  let logFile: string;
  const tunnels: TunnelClient[] = [];
  const log = createLogger('test', 'error');

  function openTunnel(server: RunningApiServer): TunnelClient {
    const t = new TunnelClient({ kubeConfig: loadKubeConfig({ kubeconfig: server.kubeconfigPath }), cluster: 'two', nodeName: 'n1', dataDir, items: () => [], log });
    t.start();
    tunnels.push(t);
    return t;
  }
  const logUrl = (server: RunningApiServer, query = '') => `${server.url}/apis/cairn.dev/v1alpha1/namespaces/two/instances/web/log${query}`;
  const ca = () => fs.readFileSync(path.join(env.dataDir, 'pki', 'ca.crt'));
  const get = (url: string) =>
    new Promise<{ status: number; text: () => string; close(): void }>((resolve, reject) => {
      const req = https.get(url, { ca: ca(), headers: { Authorization: `Bearer ${env.token}` } }, (res) => {
        let text = '';
        res.on('data', (d: Buffer) => (text += d.toString()));
        resolve({ status: res.statusCode ?? 0, text: () => text, close: () => req.destroy() });
      });
      req.on('error', reject);
    });

  before(async () => {
    env = await startTestEnv();
    other = await env.addServer();
    dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-tunnel-'));
    const dir = path.join(dataDir, 'instances', 'two', 'web');
    fs.mkdirSync(dir, { recursive: true });
    logFile = path.join(dir, 'console.log');
    fs.writeFileSync(logFile, 'line 1\nline 2\n');
    await rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('clusters'), body: JSON.stringify(cluster('two')) });
    await rawRequest(env.kubeconfig, { method: 'POST', path: cairnPath('instances', 'two'), body: JSON.stringify({ apiVersion: 'cairn.dev/v1alpha1', kind: 'Instance', metadata: { name: 'web' }, spec: { process: { command: ['/bin/true'] } } }) });
    const status = await rawRequest(env.kubeconfig, { method: 'PATCH', path: `${cairnPath('instances', 'two', 'web')}/status`, contentType: 'application/merge-patch+json', body: JSON.stringify({ status: { nodeName: 'n1', phase: 'Running' } }) });
    expect(status.status).to.equal(200);
    // Log requests read the instance from each replica's watch cache, which may not have the status yet (409 until then).
    await eventually('both replicas see the instance on n1', async () => (await Promise.all([env.server, other].map(async (s) => (await get(logUrl(s))).status))).every((code) => code !== 409), 10_000, 50);
  });
  after(async () => {
    for (const t of tunnels) t.stop();
    await env?.stop();
    fs.rmSync(dataDir, { recursive: true, force: true });
  });

  it('answers 503 naming the node while no replica holds its tunnel', async () => {
    const r = await get(logUrl(env.server));
    expect(r.status).to.equal(503);
    await eventually('body', async () => r.text().includes('node n1'), 2000, 20);
  });

  it('serves a log request on the replica without the tunnel by forwarding it to the holder', async () => {
    openTunnel(env.server);
    await eventually('tunnel on the first replica', async () => (await get(logUrl(env.server))).status === 200, 10_000, 100);
    const r = await get(logUrl(other));
    expect(r.status).to.equal(200);
    await eventually('whole log', async () => r.text() === 'line 1\nline 2\n', 5000, 20);
  });

  it('resumes a follow at the next byte when the tunnel moves to the other replica', async () => {
    const f = await get(logUrl(other, '?follow=true'));
    await eventually('first lines', async () => f.text() === 'line 1\nline 2\n', 5000, 20);
    tunnels.shift()!.stop();
    fs.appendFileSync(logFile, 'line 3\n');
    openTunnel(other);
    fs.appendFileSync(logFile, 'line 4\n');
    await eventually('lines after the move', async () => f.text() === 'line 1\nline 2\nline 3\nline 4\n', 20_000, 50);
    f.close();
  });

  it('cuts off a follow whose reader fell more than 16 MiB behind, instead of buffering the log for it', async () => {
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      https.get(logUrl(env.server, '?follow=true'), { ca: ca(), headers: { Authorization: `Bearer ${env.token}` } }, resolve).on('error', reject);
    });
    expect(res.statusCode).to.equal(200);
    res.pause(); // a reader that stopped reading (a paused pager)
    const mib = Buffer.from(`${'x'.repeat(1023)}\n`.repeat(1024));
    for (let i = 0; i < 48; i++) fs.appendFileSync(logFile, mib);
    const size = fs.statSync(logFile).size;
    const evictions = async () => Number(/cairn_apiserver_stream_evictions_total\{kind="log"\} (\d+)/.exec((await rawRequest(env.kubeconfig, { path: '/metrics' })).text)?.[1] ?? 0);
    await eventually('the replica cuts the reader off', async () => (await evictions()) === 1, 30_000, 100);
    let received = 0;
    res.on('data', (c: Buffer) => (received += c.length));
    res.on('error', () => undefined);
    res.resume();
    await eventually('the stream ends', () => res.destroyed || res.complete, 20_000, 50);
    expect(received, 'bytes the reader got before the cut').to.be.below(size);
  });

  it('carries a console session through the replica without the tunnel', async () => {
    // A VM's console is a unix socket in its directory; this one answers every line it gets.
    const net = await import('node:net');
    fs.writeFileSync(path.join(dataDir, 'instances', 'two', 'web', 'state.json'), JSON.stringify({ version: 1, pid: 1, startTicks: 1, bootId: 'x', startedAt: 0, restarts: 0, backoffCount: 0, specHash: '', stopped: false, limitsEnforced: false, limitsMessage: '', vm: { accelerator: 'tcg', logOffset: 0 } }));
    const guest = net.createServer((s) => s.on('data', (d) => s.write(`echo:${d.toString()}`))).listen(path.join(dataDir, 'instances', 'two', 'web', 'console.sock'));
    await rawRequest(env.kubeconfig, { method: 'PATCH', path: cairnPath('instances', 'two', 'web'), contentType: 'application/merge-patch+json', body: JSON.stringify({ spec: { driver: 'qemu', process: null, qemu: { kernel: '/k' } } }) });
    const holderless = env.server; // the tunnel is on `other` now
    const ws = new WebSocket(`${holderless.url.replace(/^http/, 'ws')}/apis/cairn.dev/v1alpha1/namespaces/two/instances/web/console`, [`base64url.bearer.authorization.k8s.io.${Buffer.from(env.token).toString('base64url')}`, CONSOLE_PROTOCOL], { ca: ca() });
    let got = '';
    ws.on('message', (d: Buffer) => (got += d.toString()));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    ws.send(Buffer.from('hi\n'));
    await eventually('echo', async () => got === 'echo:hi\n', 5000, 20);
    ws.close();
    guest.close();
  });

  it('ends a console session whose guest does not read its input (a paused VM, a flood), instead of buffering without bound', async () => {
    const net = await import('node:net');
    const sock = path.join(dataDir, 'instances', 'two', 'web', 'console.sock');
    fs.rmSync(sock, { force: true });
    const guest = net.createServer((s) => s.pause()).listen(sock);
    const ws = new WebSocket(`${other.url.replace(/^http/, 'ws')}/apis/cairn.dev/v1alpha1/namespaces/two/instances/web/console`, [`base64url.bearer.authorization.k8s.io.${Buffer.from(env.token).toString('base64url')}`, CONSOLE_PROTOCOL], { ca: ca() });
    const closed = new Promise<{ code: number; reason: string }>((resolve) => ws.on('close', (code, reason) => resolve({ code, reason: reason.toString() })));
    await new Promise((resolve, reject) => ws.once('open', resolve).once('error', reject));
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let sent = 0;
    while (ws.readyState === WebSocket.OPEN && sent < 64 * 1024 * 1024) {
      ws.send(chunk);
      sent += chunk.length;
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const end = await closed;
    guest.close();
    expect(end.code, end.reason).to.equal(4429);
    // The agent's limit (1 MiB) comes first, unless a loaded machine backs the input up between the replicas.
    expect(end.reason).to.match(/^the guest reads no console input \(\d+ KiB waiting\)|^console input backs up in /);
    expect(sent, 'bytes sent before the cut').to.be.below(32 * 1024 * 1024);
  });

  it('exposes request counters on /metrics that rise with traffic', async () => {
    const metrics = async () => (await rawRequest(kubeconfigFor(other), { path: '/metrics' })).text;
    const count = (text: string, code: number) => Number(new RegExp(`apiserver_request_total\\{verb="get",group="cairn.dev",version="v1alpha1",resource="instances",subresource="log",scope="resource",code="${code}"\\} (\\d+)`).exec(text)?.[1] ?? 0);
    const before = await metrics();
    // Counted under the code it got: after the previous test's cut-off, a moment without a tunnel answers 503 (seen in CI).
    const { status } = await get(logUrl(other));
    // Counted when the response has ended, which a loaded machine may take seconds to get to.
    let now = count(before, status);
    await eventually(`counter of code ${status} rose`, async () => (now = count(await metrics(), status)) === count(before, status) + 1, 15_000, 50, () => ({ before: count(before, status), now }));
  });
});

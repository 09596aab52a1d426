/**
 * A VM's serial console as a WebSocket (subprotocol console.cairn.dev): raw
 * bytes both ways, between the user's socket and a console stream through
 * the node's tunnel, or the holder replica's console WebSocket. A close
 * code of 4000 + an HTTP status, with a reason, says why a session ended
 * from the far side.
 */
import WebSocket from 'ws';
import { CONSOLE_PROTOCOL } from '../../api/tunnel.js';
import type { UserInfo } from '../auth/user.js';
import { STREAM_LIMIT_BYTES } from '../http/watch-budget.js';
import { forwardWebSocket } from './forward.js';
import type { LogDeps } from './instance-log.js';
import type { InstanceTarget } from './instance-target.js';

/** The close code of a normal end. */
const NORMAL = 1000;

/** Joins the user's WebSocket to the console until either side ends. */
export function joinConsole(deps: LogDeps, client: WebSocket, t: InstanceTarget, user: UserInfo): void {
  deps.ctx.log.info('console opened', { instance: `${t.namespace}/${t.name}`, node: t.node, user: user.name });
  const cut = () => {
    deps.ctx.log.warn('a console reader fell too far behind; ending its session', { instance: `${t.namespace}/${t.name}`, user: user.name });
    deps.ctx.metrics.streamEvictions.inc({ kind: 'console' });
  };
  // Input is not paused either: a writer this far ahead of the node is cut off, not buffered for. Its close
  // handshake may wait behind its own backlog: what it sends meanwhile is dropped.
  const flooded = (where: string) => {
    if (client.readyState !== WebSocket.OPEN) return;
    deps.ctx.log.warn('console input backed up; ending its session', { instance: `${t.namespace}/${t.name}`, node: t.node, user: user.name });
    deps.ctx.metrics.streamEvictions.inc({ kind: 'console' });
    client.close(4429, truncate(`console input backs up in ${where}; send less at once`));
  };
  if ('peer' in t.route) {
    const peer = t.route.peer;
    return joinPeer(client, forwardWebSocket(peer, consolePath(t), CONSOLE_PROTOCOL, user, deps.peers), cut, () => flooded(`the replica ${peer}`));
  }
  const stream = t.route.local.openStream({ kind: 'console', namespace: t.namespace, name: t.name });
  stream.on('data', (chunk) => sendOrCut(client, chunk, cut));
  stream.on('end', (failure) => client.close(failure ? 4000 + failure.status : NORMAL, truncate(failure?.message ?? 'the console closed')));
  client.on('message', (data: Buffer) => {
    if (client.readyState !== WebSocket.OPEN) return;
    if (stream.write(Buffer.from(data))) return;
    flooded(`the tunnel of node ${t.node}`);
    stream.close();
  });
  client.on('close', () => stream.close());
  client.on('error', () => stream.close());
}

function joinPeer(client: WebSocket, peer: WebSocket, cut: () => void, flooded: () => void): void {
  const pending: Buffer[] = [];
  let pendingBytes = 0;
  peer.on('open', () => pending.splice(0).forEach((b) => peer.send(b)));
  peer.on('message', (data: Buffer) => sendOrCut(client, data, cut));
  peer.on('close', (code, reason) => client.close(code === NORMAL || code >= 3000 ? code : NORMAL, reason));
  peer.on('unexpected-response', (_req, res) => client.close(4000 + (res.statusCode ?? 502), truncate(`the replica holding the tunnel refused the console: ${res.statusMessage ?? ''}`)));
  peer.on('error', (err) => client.close(4503, truncate(`the replica holding the tunnel failed: ${err.message}`)));
  client.on('message', (data: Buffer) => {
    if (client.readyState !== WebSocket.OPEN) return;
    if (peer.readyState === WebSocket.OPEN) peer.send(data);
    else (pending.push(Buffer.from(data)), (pendingBytes += data.length));
    if (peer.bufferedAmount + (peer.readyState === WebSocket.OPEN ? 0 : pendingBytes) <= STREAM_LIMIT_BYTES) return;
    flooded();
    peer.terminate();
  });
  client.on('close', () => peer.terminate());
  client.on('error', () => peer.terminate()); // a malformed frame from the user; without a listener it would end the process
}

// The tunnel cannot pause one stream: a user this far behind is cut off (its 'close' ends the session), not buffered for.
function sendOrCut(client: WebSocket, data: Buffer, cut: () => void): void {
  if (client.readyState !== WebSocket.OPEN) return;
  client.send(data);
  if (client.bufferedAmount <= STREAM_LIMIT_BYTES) return;
  cut();
  client.terminate();
}

function consolePath(t: InstanceTarget): string {
  return `/apis/cairn.dev/v1alpha1/namespaces/${encodeURIComponent(t.namespace)}/instances/${encodeURIComponent(t.name)}/console`;
}

/** A WebSocket close reason cut to the 123 bytes a close frame holds (ws throws past them). */
export function truncate(reason: string): string {
  const b = Buffer.from(reason);
  return b.length <= 123 ? reason : `${b.subarray(0, 120).toString('utf8').replace(/\uFFFD$/, '')}...`;
}

/**
 * WebSocket upgrades: an agent opening its tunnel
 * (`.../namespaces/<cluster>/nodes/<node>/tunnel`, verb create on
 * nodes/tunnel) and a user opening a VM's serial console
 * (`.../namespaces/<ns>/instances/<name>/console`, verb create on
 * instances/console). Both are authenticated and authorized like any
 * request; browsers, which cannot set headers on a WebSocket, may carry
 * their token in the subprotocol `base64url.bearer.authorization.k8s.io.<token>`
 * as with kube-apiserver. Refusals are plain HTTP answers with a Status body.
 */
import type { IncomingMessage, IncomingHttpHeaders } from 'node:http';
import type { Duplex } from 'node:stream';
import { WebSocketServer, type WebSocket } from 'ws';
import { CONSOLE_PROTOCOL, MAX_MESSAGE_BYTES, TUNNEL_PROTOCOL } from '../../api/tunnel.js';
import { resourceAttributes, type RequestAttributes } from '../auth/attributes.js';
import { MASTERS_GROUP } from '../auth/authorizer.js';
import { usableNodeCredential } from '../auth/node-credentials.js';
import type { UserInfo } from '../auth/user.js';
import { tokenDefinition } from '../builtin/token.js';
import { ApiError } from '../errors.js';
import { authenticateRequest, authorizeRequest, endWhen, endWhenTokenEnds, recordAudit, tokenEnded } from '../http/security.js';
import { toApiError } from '../http/respond.js';
import { parseResourcePath, type RequestInfo } from '../request-info.js';
import { joinConsole, truncate } from './instance-console.js';
import { instanceTarget } from './instance-target.js';
import type { LogDeps } from './instance-log.js';
import { NodeTunnel } from './node-tunnel.js';

const BEARER_PROTOCOL_PREFIX = 'base64url.bearer.authorization.k8s.io.';

/** The `upgrade` listener of the apiserver's HTTP server. */
export function upgradeListener(deps: LogDeps): (req: IncomingMessage, socket: Duplex, head: Buffer) => void {
  const wss = new WebSocketServer({ noServer: true, perMessageDeflate: false, maxPayload: MAX_MESSAGE_BYTES, handleProtocols: (offered) => [TUNNEL_PROTOCOL, CONSOLE_PROTOCOL].find((p) => offered.has(p)) ?? false });
  return (req, socket, head) => {
    socket.on('error', () => socket.destroy());
    accept(deps, wss, req, socket, head).catch((err) => refuse(socket, toApiError(err, deps.ctx.log)));
  };
}

async function accept(deps: LogDeps, wss: WebSocketServer, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
  const sec = deps.security;
  const path = (req.url ?? '/').split('?')[0]!;
  const info = parseResourcePath(path);
  const kind = info && upgradeKind(info);
  if (!info || !kind) throw new ApiError(404, 'NotFound', `no WebSocket is served at ${path}: only nodes/<node>/tunnel (agents) and instances/<name>/console`);
  const headers = withSubprotocolToken(req.headers);
  const user = await authenticateRequest(sec, headers, path);
  const attrs: RequestAttributes = { ...resourceAttributes(user, 'POST', info, {}), verb: 'create' };
  await authorizeRequest(sec, attrs);
  if (kind === 'tunnel') checkTunnelIdentity(user, info.namespace!, info.name!);
  recordAudit(sec, attrs, path, 101);
  if (kind === 'tunnel') return openTunnel(deps, await upgrade(wss, req, socket, head), headers, user, info.namespace!, info.name!);
  const target = await instanceTarget(deps.ctx, deps.tunnels, req.headers, info.namespace!, info.name!, 'console');
  const ws = await upgrade(wss, req, socket, head);
  joinConsole(deps, ws, target, user as UserInfo);
  ws.once('close', endWhenTokenEnds(sec, headers, (why) => ws.close(4401, truncate(`the console ended: ${why}`))));
}

/**
 * Serves a node's tunnel while the node holds a usable credential: the one the tunnel was opened with, or the
 * one its agent renewed to (a renewal lets the old one expire a minute later, which must not cut the node's
 * consoles and logs). Revoked, deleted or expired with none left, the tunnel ends within seconds.
 */
function openTunnel(deps: LogDeps, ws: WebSocket, headers: IncomingHttpHeaders, user: UserInfo, cluster: string, node: string): void {
  const tunnel = new NodeTunnel(ws, node);
  deps.tunnels.attach(cluster, tunnel);
  const ended = async () => ((await tokenEnded(deps.security, headers)) === undefined || nodeStillJoined(deps, user) ? undefined : `node ${node} has no usable credential left`);
  ws.once('close', endWhen(ended, (why) => tunnel.close(why)));
  deps.ctx.log.info('tunnel opened', { cluster, node, user: user.name });
}

/** Whether a node (the tunnel's user) holds a credential that is neither revoked nor expired; never for another user. */
function nodeStillJoined(deps: LogDeps, user: UserInfo): boolean {
  const node = user.node;
  return !!node && usableNodeCredential(deps.ctx.cache.forResource(tokenDefinition), node.cluster, node.name, new Date());
}

/**
 * Only the node itself (or system:masters, who may do anything) opens a node's tunnel: RBAC's
 * `create nodes/tunnel`, which an operator's `cairn.dev/*` grants, let anyone put their socket in the
 * agent's place and read every console's keystrokes and answer every log request on that node.
 */
function checkTunnelIdentity(user: UserInfo, cluster: string, node: string): void {
  if (user.groups.includes(MASTERS_GROUP) || (user.node?.cluster === cluster && user.node.name === node)) return;
  throw new ApiError(403, 'Forbidden', `${user.name} cannot open the tunnel of node ${node} in cluster ${cluster}: only that node's own credential may; run the agent with its node credential (it joins with a token from \`cairn token create\`)`);
}

function upgradeKind(info: RequestInfo): 'tunnel' | 'console' | undefined {
  if (info.group !== 'cairn.dev' || !info.namespace || !info.name) return undefined;
  if (info.plural === 'nodes' && info.subresource === 'tunnel') return 'tunnel';
  if (info.plural === 'instances' && info.subresource === 'console') return 'console';
  return undefined;
}

/** The headers with the subprotocol's bearer token as Authorization, when there is none. */
function withSubprotocolToken(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  if (headers.authorization) return headers;
  const offered = String(headers['sec-websocket-protocol'] ?? '').split(',').map((p) => p.trim());
  const carrier = offered.find((p) => p.startsWith(BEARER_PROTOCOL_PREFIX));
  if (!carrier) return headers;
  const token = Buffer.from(carrier.slice(BEARER_PROTOCOL_PREFIX.length), 'base64url').toString('utf8');
  return { ...headers, authorization: `Bearer ${token}` };
}

function upgrade(wss: WebSocketServer, req: IncomingMessage, socket: Duplex, head: Buffer): Promise<WebSocket> {
  if (!String(req.headers['sec-websocket-protocol'] ?? '').split(',').some((p) => [TUNNEL_PROTOCOL, CONSOLE_PROTOCOL].includes(p.trim()))) {
    throw new ApiError(400, 'BadRequest', `offer the WebSocket subprotocol ${CONSOLE_PROTOCOL} (consoles) or ${TUNNEL_PROTOCOL} (agents)`);
  }
  return new Promise((resolve) => wss.handleUpgrade(req, socket, head, resolve));
}

/** Answers the upgrade request with an HTTP error and closes the connection. */
function refuse(socket: Duplex, err: ApiError): void {
  if (socket.destroyed) return;
  const body = JSON.stringify(err.toStatus());
  socket.end(`HTTP/1.1 ${err.code} ${err.reason}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
}

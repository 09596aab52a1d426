/**
 * Forwarding a log or console request to the replica that holds the node's
 * tunnel. The request goes with the replicas' shared admin credential and
 * Impersonate-* headers of the original user, so the holder authorizes it
 * again as that user; a forwarded request is never forwarded again.
 */
import https from 'node:https';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { MAX_MESSAGE_BYTES } from '../../api/tunnel.js';
import type { UserInfo } from '../auth/user.js';

/** Marks a request one replica forwarded to another. */
export const FORWARDED_HEADER = 'x-cairn-forwarded-by';

/** How this replica reaches its peers. */
export interface PeerCredentials {
  adminToken: string;
  caPem: string;
  /** This replica's peer URL, sent along so a loop is visible in logs. */
  self: string;
}

/** The headers of a request forwarded on behalf of `user`. */
export function forwardHeaders(user: UserInfo, creds: PeerCredentials): Record<string, string | string[]> {
  const groups = user.groups.filter((g) => g !== 'system:authenticated');
  return { authorization: `Bearer ${creds.adminToken}`, 'impersonate-user': user.name, ...(groups.length ? { 'impersonate-group': groups } : {}), [FORWARDED_HEADER]: creds.self };
}

// Peers present certificates of the replicas' shared CA; their URL may name a loopback or advertise address
// the certificate does not list, and the CA is what proves it is a replica.
const peerTls = (creds: PeerCredentials) => ({ ca: creds.caPem, checkServerIdentity: () => undefined });

/** GETs `path` from the peer; resolves with its response (any status). */
export function forwardGet(peer: string, path: string, user: UserInfo, creds: PeerCredentials): { response: Promise<IncomingMessage>; abort(): void } {
  const req = https.get(new URL(path, peer), { headers: forwardHeaders(user, creds), ...peerTls(creds) });
  const response = new Promise<IncomingMessage>((resolve, reject) => req.once('response', resolve).once('error', reject));
  return { response, abort: () => req.destroy() };
}

/** Opens a WebSocket on the peer for `path`. */
export function forwardWebSocket(peer: string, path: string, protocol: string, user: UserInfo, creds: PeerCredentials): WebSocket {
  const url = new URL(path, peer.replace(/^http/, 'ws'));
  return new WebSocket(url, [protocol], { headers: forwardHeaders(user, creds) as Record<string, string>, ...peerTls(creds), perMessageDeflate: false, maxPayload: MAX_MESSAGE_BYTES, handshakeTimeout: 10_000 });
}

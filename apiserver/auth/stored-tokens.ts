/**
 * Authentication by the Token objects stored in etcd (apiserver/builtin/token.ts).
 * A presented `<id>.<secret>` is looked up by its id in the watch cache —
 * again once the cache has caught up with etcd when it is not there, so a
 * credential issued a moment ago through another apiserver replica works at
 * once (the catch-up costs one revision read, shared by concurrent requests,
 * rather than an etcd read per unknown token) — and accepted when the SHA-256 of the
 * whole token matches the stored digest (compared in constant time), it is
 * not revoked and not expired. Who it authenticates depends on its type:
 *   - node:  `system:node:<cluster>:<node>`, group system:nodes, bound to that Node;
 *   - user:  spec.user with spec.groups;
 *   - join:  `system:bootstrap:<id>`, group system:bootstrappers, which may only exchange it.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { ResourceDefinition } from '../resources.js';
import type { KubeObject } from '../storage/codec.js';
import { objectKey } from '../storage/keys.js';
import type { AuthResult, Authenticator } from './authenticator.js';
import { tokenId } from '../../api/token-format.js';
import { bearerToken } from './tokens.js';
import type { UserInfo } from './user.js';

/** The group of every node credential. */
export const NODES_GROUP = 'system:nodes';
/** The group of every join token. */
export const BOOTSTRAPPERS_GROUP = 'system:bootstrappers';
const BOOTSTRAP_PREFIX = 'system:bootstrap:';

/** The fields of a stored Token this module reads. */
export interface TokenSpec {
  type: 'join' | 'node' | 'user';
  secretHash: string;
  user?: string;
  groups?: string[];
  cluster?: string;
  nodeName?: string;
  expires?: string;
  maxUses?: number;
  revoked?: boolean;
}

/** The user name of a node credential. */
export function nodeUserName(cluster: string, node: string): string {
  return `system:node:${cluster}:${node}`;
}

/** The join token id behind a bootstrap user, or undefined for any other user. */
export function joinTokenIdOf(user: UserInfo): string | undefined {
  return user.groups.includes(BOOTSTRAPPERS_GROUP) && user.name.startsWith(BOOTSTRAP_PREFIX) ? user.name.slice(BOOTSTRAP_PREFIX.length) : undefined;
}

/** The part of the watch cache the authenticator reads (WatchCache has it). */
export interface TokenCache {
  forResource(def: ResourceDefinition): { readonly objects: ReadonlyMap<string, KubeObject> };
  /** Resolves once the cache holds everything etcd had when called (false on timeout). */
  waitFresh(timeoutMs: number): Promise<boolean>;
}

const FRESHNESS_WAIT_MS = 2000;

/** Recognises tokens of the `<id>.<secret>` form by the Token objects in etcd. */
export class StoredTokenAuthenticator implements Authenticator {
  constructor(
    private readonly def: ResourceDefinition,
    private readonly cache: TokenCache,
    private readonly now: () => Date = () => new Date(),
  ) {}

  async authenticate(authorizationHeader: string | undefined): Promise<AuthResult> {
    const token = bearerToken(authorizationHeader);
    const id = token === undefined ? undefined : tokenId(token);
    if (id === undefined) return null;
    const key = objectKey(this.def, undefined, id);
    const tokens = this.cache.forResource(this.def).objects;
    const obj = tokens.get(key) ?? ((await this.cache.waitFresh(FRESHNESS_WAIT_MS)) ? tokens.get(key) : undefined);
    if (!obj || !digestMatches(token!, (obj.spec as TokenSpec).secretHash)) return null;
    return acceptance(obj, this.now());
  }
}

function digestMatches(token: string, stored: string): boolean {
  const presented = createHash('sha256').update(token, 'utf8').digest();
  const expected = Buffer.from(stored ?? '', 'hex');
  return expected.length === presented.length && timingSafeEqual(expected, presented);
}

/**
 * When spec.expires ends a token, in epoch ms: undefined for never; -Infinity for a time that does not
 * parse, as expired. The schema's date-time takes a leap second (23:59:60) that Date.parse does not:
 * read as NaN, such an expiry compared as never reached, and an expired token worked again.
 */
export function expiryMs(expires: string | undefined): number | undefined {
  if (!expires) return undefined;
  const ms = Date.parse(expires);
  return Number.isNaN(ms) ? -Infinity : ms;
}

/** Whether a matching token may be used now, and as whom. */
export function acceptance(obj: KubeObject, now: Date): AuthResult {
  const spec = obj.spec as TokenSpec;
  const id = obj.metadata.name!;
  if (spec.revoked) return { refused: `token ${id} was revoked; ${renewHint(spec)}` };
  if ((expiryMs(spec.expires) ?? Infinity) <= now.getTime()) return { refused: `token ${id} expired at ${spec.expires}; ${renewHint(spec)}` };
  const missing = REQUIRED_BY_TYPE[spec.type]?.filter((f) => !spec[f]) ?? ['a known spec.type'];
  if (missing.length > 0) return { refused: `token ${id} lacks ${missing.map((f) => `spec.${f}`).join(', ')}; delete it and issue a new one` };
  return { user: userOf(id, spec) };
}

const REQUIRED_BY_TYPE: Record<TokenSpec['type'], (keyof TokenSpec)[]> = { node: ['cluster', 'nodeName'], join: ['cluster'], user: ['user'] };

function userOf(id: string, spec: TokenSpec): UserInfo {
  if (spec.type === 'node') {
    return { name: nodeUserName(spec.cluster!, spec.nodeName!), groups: [NODES_GROUP], node: { cluster: spec.cluster!, name: spec.nodeName! } };
  }
  if (spec.type === 'join') return { name: `${BOOTSTRAP_PREFIX}${id}`, groups: [BOOTSTRAPPERS_GROUP] };
  return { name: spec.user!, groups: [...(spec.groups ?? [])] };
}

function renewHint(spec: TokenSpec): string {
  if (spec.type === 'join') return `create a new one with: cairn token create --cluster ${spec.cluster}`;
  if (spec.type === 'node') return `join the node again with a new join token (cairn token create --cluster ${spec.cluster}, then cairn agent --join-token)`;
  return `ask an administrator for a new one (cairn user create ${spec.user} --role ...)`;
}

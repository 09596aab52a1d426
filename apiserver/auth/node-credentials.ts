/**
 * Issuing node credentials (the bootstrap-token flow of Kubernetes and
 * Kadalu): a join token is exchanged once at `POST /cairn/v1/join` for a
 * per-node bearer token bound to the join token's Cluster and the node name
 * the agent asks for; the holder of a node token renews it before it expires
 * at `POST /cairn/v1/rotate`. Only digests are stored (Token objects); the
 * clear token is in the response and nowhere else.
 *
 * Concurrency: a join consumes one use of its token through a compare-and-swap
 * on the token's status, so N concurrent joins with an N-use token all get a
 * credential and the N+1st is refused, across any number of apiserver replicas.
 */
import express, { type Request, type Response } from 'express';
import { JOIN_PATH, ROTATE_PATH, type NodeCredential } from '../../api/credentials.js';
import { ApiError, badRequest } from '../errors.js';
import type { ResourceDefinition } from '../resources.js';
import type { ResourceStore } from '../rest/resource-store.js';
import type { KubeObject } from '../storage/codec.js';
import type { ResourceCache } from '../storage/resource-cache.js';
import { validateMetadata } from '../validation/metadata.js';
import type { Authorizer } from './authorizer.js';
import { acceptance, BOOTSTRAPPERS_GROUP, expiryMs, joinTokenIdOf, type TokenSpec } from './stored-tokens.js';
import { newToken } from '../../api/token-format.js';
import type { UserInfo } from './user.js';

/** How long a rotated-out node token keeps working, so requests in flight with it finish. */
const ROTATION_GRACE_MS = 60_000;
const WRITE = { dryRun: false, fieldValidation: 'Strict' as const };

/** What issuing needs. */
export interface NodeCredentialDeps {
  def: ResourceDefinition;
  store: ResourceStore;
  tokens: ResourceCache;
  /** Lifetime of a node credential. */
  ttlMs: number;
  now?: () => Date;
}

/**
 * Join tokens may call the join endpoint, node credentials the rotate endpoint; nothing else here. Judged by
 * the credential itself, never by groups alone, and never as someone impersonated: a user token carrying
 * group system:nodes, or an admin acting --as a bootstrap user, would rotate a node it is not, or spend
 * someone's join token.
 */
export const credentialExchangeAuthorizer: Authorizer = {
  authorize(a) {
    const own = !a.user.impersonatedBy;
    if (a.nonResourcePath === JOIN_PATH && a.verb === 'post' && own && joinTokenIdOf(a.user) !== undefined) return { decision: 'allow' };
    if (a.nonResourcePath === ROTATE_PATH && a.verb === 'post' && own && a.user.node !== undefined) return { decision: 'allow' };
    if (a.user.groups.includes(BOOTSTRAPPERS_GROUP)) return { decision: 'deny', reason: `a join token may only be exchanged for a node credential (POST ${JOIN_PATH})` };
    return { decision: 'noOpinion' };
  },
};

/** Adds the join and rotate endpoints to the apiserver's express app. */
export function nodeCredentialRoutes(deps: NodeCredentialDeps): (app: express.Express) => void {
  const handle = (fn: (user: UserInfo, body: Record<string, unknown>) => Promise<NodeCredential>) => (req: Request, res: Response, next: (err: unknown) => void) => {
    fn(res.locals.user as UserInfo, (req.body ?? {}) as Record<string, unknown>).then((cred) => res.status(201).json(cred), next);
  };
  return (app) => {
    app.post(JOIN_PATH, express.json({ limit: '16kb' }), handle((user, body) => join(deps, user, body)));
    app.post(ROTATE_PATH, handle((user) => rotate(deps, user)));
  };
}

// Whoever else an authorizer let through (an admin may POST anywhere) has no node to join or rotate as.
function notExchangeable(user: UserInfo, what: string): ApiError {
  return new ApiError(403, 'Forbidden', `${user.name} is not ${what}${user.impersonatedBy ? ` (impersonated by ${user.impersonatedBy})` : ''}: only that credential itself may call this endpoint`);
}

async function join(deps: NodeCredentialDeps, user: UserInfo, body: Record<string, unknown>): Promise<NodeCredential> {
  const id = user.impersonatedBy ? undefined : joinTokenIdOf(user);
  if (id === undefined) throw notExchangeable(user, 'a join token');
  const nodeName = checkNodeName(body.nodeName);
  const joinToken = await consumeUse(deps, id, nodeName);
  const cluster = (joinToken.spec as TokenSpec).cluster!;
  return issue(deps, cluster, nodeName, `joined with join token ${id}`);
}

async function rotate(deps: NodeCredentialDeps, user: UserInfo): Promise<NodeCredential> {
  if (!user.node || user.impersonatedBy) throw notExchangeable(user, 'a node credential');
  const { cluster, name } = user.node;
  return issue(deps, cluster, name, 'rotated by its agent');
}

function checkNodeName(v: unknown): string {
  if (typeof v !== 'string' || v === '') throw badRequest('nodeName: Required value: the name of the Node that joins');
  const causes = validateMetadata({ name: v }, 'dns1123-subdomain').map((c) => ({ ...c, field: 'nodeName' }));
  if (causes.length > 0) throw badRequest(`nodeName: Invalid value: ${JSON.stringify(v)}: ${causes[0]!.message}`, causes);
  return v;
}

/** Counts one join against the token; refuses when its uses are spent. */
async function consumeUse(deps: NodeCredentialDeps, id: string, nodeName: string): Promise<KubeObject> {
  const r = await deps.store.update(deps.def, undefined, id, 'status', (cur) => {
    const spec = cur.spec as TokenSpec;
    const status = (cur.status ?? {}) as { uses?: number; joinedNodes?: string[] };
    const uses = status.uses ?? 0;
    const max = spec.maxUses ?? 1;
    if (uses >= max) {
      throw new ApiError(401, 'Unauthorized', `Unauthorized: join token ${id} has been used ${uses} of ${max} times; create a new one with: cairn token create --cluster ${spec.cluster}`);
    }
    delete cur.metadata.resourceVersion; // retried on a lost race, not failed
    cur.status = { ...status, uses: uses + 1, joinedNodes: [...(status.joinedNodes ?? []), nodeName] };
    return cur;
  }, WRITE);
  return r.obj;
}

/** Stores a new node token for cluster/node, retires the node's older ones, and returns the clear token. */
async function issue(deps: NodeCredentialDeps, cluster: string, nodeName: string, why: string): Promise<NodeCredential> {
  const now = (deps.now ?? (() => new Date()))();
  const fresh = newToken();
  const expires = new Date(now.getTime() + deps.ttlMs).toISOString();
  await deps.store.create(deps.def, undefined, {
    apiVersion: 'auth.cairn.dev/v1alpha1',
    kind: 'Token',
    metadata: { name: fresh.id, labels: { 'auth.cairn.dev/cluster': cluster, 'auth.cairn.dev/node': nodeName } },
    spec: { type: 'node', secretHash: fresh.secretHash, cluster, nodeName, expires, description: `node credential of ${cluster}/${nodeName}, ${why}` },
  }, WRITE);
  await retireOlder(deps, cluster, nodeName, fresh.id, now);
  return { apiVersion: 'auth.cairn.dev/v1alpha1', kind: 'NodeCredential', cluster, nodeName, token: fresh.token, expires };
}

/** Whether node `cluster/nodeName` holds a credential that may be used now (neither revoked nor expired). */
export function usableNodeCredential(tokens: ResourceCache, cluster: string, nodeName: string, now: Date): boolean {
  return tokens.list((t) => {
    if (!isNodeCredential(t, cluster, nodeName)) return false;
    const accepted = acceptance(t, now);
    return !!accepted && 'user' in accepted;
  }).length > 0;
}

/** Whether stored token `t` is a credential of node `cluster/nodeName`. */
function isNodeCredential(t: KubeObject, cluster: string, nodeName: string): boolean {
  const s = t.spec as TokenSpec;
  return s.type === 'node' && s.cluster === cluster && s.nodeName === nodeName;
}

// The node's other credentials end: expired ones are deleted, live ones expire after a short grace.
async function retireOlder(deps: NodeCredentialDeps, cluster: string, nodeName: string, keepId: string, now: Date): Promise<void> {
  const graceEndMs = now.getTime() + ROTATION_GRACE_MS;
  const graceEnd = new Date(graceEndMs).toISOString();
  const older = deps.tokens.list((t) => isNodeCredential(t, cluster, nodeName) && t.metadata.name !== keepId);
  for (const t of older) {
    const expires = expiryMs((t.spec as TokenSpec).expires) ?? Infinity;
    try {
      if (expires <= now.getTime()) await deps.store.delete(deps.def, undefined, t.metadata.name!, {}, false);
      else if (expires > graceEndMs) await deps.store.update(deps.def, undefined, t.metadata.name!, 'main', (cur) => withExpiry(cur, graceEnd), WRITE);
    } catch (err) {
      if (!(err instanceof ApiError && err.code === 404)) throw err;
    }
  }
}

function withExpiry(cur: KubeObject, expires: string): KubeObject {
  delete cur.metadata.resourceVersion;
  (cur.spec as TokenSpec).expires = expires;
  return cur;
}

/**
 * `cairn token create|revoke`: join tokens, the one-time secrets a new
 * machine's agent exchanges for its node credential (`cairn agent
 * --join-token`). The token is drawn here and only its SHA-256 is sent, so
 * the clear value exists on this terminal and nowhere in the cluster.
 * `cairn get tokens` lists them (join, node and user tokens alike).
 */
import { newToken } from '../../api/token-format.js';
import type { ClientContext } from '../client/context.js';
import { CliError } from '../client/errors.js';

/** Where Token objects live. */
export const TOKENS_PATH = '/apis/auth.cairn.dev/v1alpha1/tokens';

/** Stores a new token of `spec` and returns its clear value. */
export async function storeToken(ctx: ClientContext, spec: Record<string, unknown>, ttlMs: number): Promise<{ id: string; token: string; expires?: string }> {
  const t = newToken();
  const expires = ttlMs > 0 ? new Date(Date.now() + ttlMs).toISOString().replace(/\.\d{3}Z$/, 'Z') : undefined;
  await ctx.rest.request('POST', TOKENS_PATH, {
    body: { apiVersion: 'auth.cairn.dev/v1alpha1', kind: 'Token', metadata: { name: t.id }, spec: { ...spec, secretHash: t.secretHash, ...(expires ? { expires } : {}) } },
  });
  return { id: t.id, token: t.token, expires };
}

/** Runs `cairn token create`: stores a join token and prints it. */
export async function createToken(ctx: ClientContext): Promise<void> {
  const f = ctx.flags as { cluster: string; ttl: number; uses: number; description?: string };
  const t = await storeToken(ctx, { type: 'join', cluster: f.cluster, maxUses: f.uses, ...(f.description ? { description: f.description } : {}) }, f.ttl);
  process.stdout.write(`${t.token}\n`);
  const server = ctx.rest.cluster?.server ?? 'https://SERVER:6443';
  process.stderr.write(
    `join token ${t.id} for cluster ${f.cluster}: ${f.uses} use${f.uses === 1 ? '' : 's'}, ${t.expires ? `expires ${t.expires}` : 'no expiry'}\n` +
      `join a node: cairn agent --server ${server} --certificate-authority CA.crt --join-token TOKEN --cluster ${f.cluster} --node-name NAME\n`,
  );
}

/** Runs `cairn token revoke ID`. */
export async function revokeToken(ctx: ClientContext, id: string): Promise<void> {
  if (!/^[a-z0-9]{10}$/.test(id)) throw new CliError(`"${id}" is not a token id`, 'give the 10 characters before the dot; cairn get tokens lists them');
  await ctx.rest.request('PATCH', `${TOKENS_PATH}/${id}`, { body: { spec: { revoked: true } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
  process.stdout.write(`token.auth.cairn.dev/${id} revoked\n`);
}

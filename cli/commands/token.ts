/**
 * `cairn token create|revoke`: join tokens, the one-time secrets a new
 * machine's agent exchanges for its node credential (`cairn agent
 * --join-token`). The token is drawn here and only its SHA-256 is sent, so
 * the clear value exists on this terminal and nowhere in the cluster.
 * `cairn get tokens` lists them (join, node and user tokens alike).
 */
import { Command } from 'commander';
import { newToken } from '../../api/token-format.js';
import { parseCount, parseDuration } from '../flags.js';
import { clientCommand, runWithClient, type ClientContext } from '../client/context.js';
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

function createCommand(): Command {
  return clientCommand('create')
    .description('Create a join token for a Cluster and print it (only its digest is stored)')
    .requiredOption('--cluster <name>', 'the Cluster the joining nodes belong to')
    .option('--ttl <duration>', 'how long the token may be used (0: no expiry)', parseDuration, 24 * 3600_000)
    .option('--uses <n>', 'how many nodes may join with it', parseCount, 1)
    .option('--description <text>', 'what the token is for')
    .addHelpText('after', `
Prints the token alone on stdout (so JOIN=$(cairn token create ...) works) and how to use it on stderr.

Examples:
  cairn token create --cluster prod
  cairn token create --cluster prod --ttl 2h --uses 3 --description "rack 4"
  CAIRN_JOIN_TOKEN="$JOIN" cairn agent --server https://10.0.0.1:6443 --certificate-authority ca.crt --cluster prod --node-name node-d`)
    .action(
      runWithClient(async (ctx) => {
        const f = ctx.flags as { cluster: string; ttl: number; uses: number; description?: string };
        const t = await storeToken(ctx, { type: 'join', cluster: f.cluster, maxUses: f.uses, ...(f.description ? { description: f.description } : {}) }, f.ttl);
        process.stdout.write(`${t.token}\n`);
        const server = ctx.kc.getCurrentCluster()?.server ?? 'https://SERVER:6443';
        process.stderr.write(
          `join token ${t.id} for cluster ${f.cluster}: ${f.uses} use${f.uses === 1 ? '' : 's'}, ${t.expires ? `expires ${t.expires}` : 'no expiry'}\n` +
            `join a node: cairn agent --server ${server} --certificate-authority CA.crt --join-token TOKEN --cluster ${f.cluster} --node-name NAME\n`,
        );
      }),
    );
}

function revokeCommand(): Command {
  return clientCommand('revoke')
    .description('Revoke a token (join, node or user) at once; it stays listed as revoked')
    .argument('<id>', 'the token id: the part before the dot, as cairn get tokens lists it')
    .addHelpText('after', '\nExamples:\n  cairn token revoke k3x9q2m1ab\n  cairn get tokens')
    .action(
      runWithClient(async (ctx, id: string) => {
        if (!/^[a-z0-9]{10}$/.test(id)) throw new CliError(`"${id}" is not a token id`, 'give the 10 characters before the dot; cairn get tokens lists them');
        await ctx.rest.request('PATCH', `${TOKENS_PATH}/${id}`, { body: { spec: { revoked: true } }, headers: { 'Content-Type': 'application/merge-patch+json' } });
        process.stdout.write(`token.auth.cairn.dev/${id} revoked\n`);
      }),
    );
}

/** `cairn token`. */
export function tokenCommand(): Command {
  return new Command('token')
    .description('Manage join tokens (cairn token create) and revoke any token')
    .addCommand(createCommand())
    .addCommand(revokeCommand())
    .addHelpText('after', '\nExamples:\n  cairn token create --cluster prod --ttl 1h\n  cairn token revoke k3x9q2m1ab');
}

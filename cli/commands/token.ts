/** `cairn token create|revoke`: their arguments, flags and help; what they do is in ../run/token.ts, loaded when one runs. */
import { Command } from 'commander';
import { durationOption, parseCount } from '../flags.js';
import { clientCommand, runWithClient } from '../client/command.js';

function createCommand(): Command {
  return clientCommand('create')
    .description('Create a join token for a Cluster and print it (only its digest is stored)')
    .requiredOption('--cluster <name>', 'the Cluster the joining nodes belong to')
    .addOption(durationOption('--ttl <duration>', 'how long the token may be used (0: no expiry)', 24 * 3600_000, { lifetime: true }))
    .option('--uses <n>', 'how many nodes may join with it', parseCount, 1)
    .option('--description <text>', 'what the token is for')
    .addHelpText('after', `
Prints the token alone on stdout (so JOIN=$(cairn token create ...) works) and how to use it on stderr.

Examples:
  cairn token create --cluster prod
  cairn token create --cluster prod --ttl 2h --uses 3 --description "rack 4"
  CAIRN_JOIN_TOKEN="$JOIN" cairn agent --server https://10.0.0.1:6443 --certificate-authority ca.crt --cluster prod --node-name node-d`)
    .action(runWithClient(async (ctx) => (await import('../run/token.js')).createToken(ctx)));
}

function revokeCommand(): Command {
  return clientCommand('revoke')
    .description('Revoke a token (join, node or user) at once; it stays listed as revoked')
    .argument('<id>', 'the token id: the part before the dot, as cairn get tokens lists it')
    .addHelpText('after', '\nExamples:\n  cairn token revoke k3x9q2m1ab\n  cairn get tokens')
    .action(runWithClient(async (ctx, id: string) => (await import('../run/token.js')).revokeToken(ctx, id)));
}

/** `cairn token`. */
export function tokenCommand(): Command {
  return new Command('token')
    .description('Manage join tokens (cairn token create) and revoke any token')
    .addCommand(createCommand())
    .addCommand(revokeCommand())
    .addHelpText('after', '\nExamples:\n  cairn token create --cluster prod --ttl 1h\n  cairn token revoke k3x9q2m1ab');
}

/** `cairn version`: this client's version and, unless --client, the server's. */
import type { Command } from 'commander';
import { cairnVersion } from '../../apiserver/server.js';
import { clientCommand, runWithClient } from '../client/context.js';

/** The `version` verb. */
export function versionCommand(): Command {
  return clientCommand('version')
    .description('Print the version of this client and of the server it reaches')
    .option('--client', 'only the client version (no server needed)')
    .addHelpText('after', '\nExamples:\n  cairn version\n  cairn version --client')
    .action(
      runWithClient(async (ctx) => {
        process.stdout.write(`Client Version: ${cairnVersion()} (API compatible with Kubernetes 1.32)\n`);
        if (ctx.flags.client) return;
        const server = await ctx.rest.request<{ gitVersion: string }>('GET', '/version');
        process.stdout.write(`Server Version: ${server.gitVersion}\n`);
      }),
    );
}

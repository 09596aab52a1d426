/** `cairn version`: this client's version and, unless --client, the server's. */
import type { Command } from 'commander';
import { cairnVersion } from '../../api/version.js';
import { clientCommand, runWithClient } from '../client/command.js';
import type { ClientFlags } from '../client/context.js';

const printServerVersion = runWithClient(async (ctx) => {
  const server = await ctx.rest.request<{ gitVersion: string }>('GET', '/version');
  process.stdout.write(`Server Version: ${server.gitVersion}\n`);
});

/** The `version` verb. */
export function versionCommand(): Command {
  return clientCommand('version')
    .description('Print the version of this client and of the server it reaches')
    .option('--client', 'only the client version (no server or kubeconfig needed)')
    .addHelpText('after', '\nExamples:\n  cairn version\n  cairn version --client')
    .action(async (flags: ClientFlags & { client?: boolean }, cmd: Command) => {
      process.stdout.write(`Client Version: ${cairnVersion()} (API compatible with Kubernetes 1.32)\n`);
      if (!flags.client) await printServerVersion(flags, cmd);
    });
}

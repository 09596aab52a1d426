/** `cairn console`: its arguments and help; what it does is in ../run/console.ts, loaded when it runs. */
import type { Command } from 'commander';
import { clientCommand, runWithClient } from '../client/command.js';

const HELP = `
Joins your terminal to the serial console of a qemu instance, through the
tunnel its node's agent keeps open to the apiserver. The terminal is raw:
every key goes to the VM. Press Ctrl-] to leave (the VM keeps running).
Process instances have no console: read their output with cairn logs.

Examples:
  cairn console instance vm1 -n demo
  cairn console instance/vm1 -n demo`;

/** `cairn console`. */
export function consoleCommand(): Command {
  return clientCommand('console')
    .description('Open the serial console of a qemu instance (Ctrl-] leaves)')
    .argument('<kind>', 'instance, or instance/NAME')
    .argument('[name]', 'instance name (unless given as instance/NAME)')
    .addHelpText('after', HELP)
    .action(runWithClient(async (ctx, kind: string, name: string | undefined) => (await import('../run/console.js')).openConsole(ctx, name === undefined ? [kind] : [kind, name])));
}

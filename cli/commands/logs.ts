/** `cairn logs`: its arguments, flags and help; what it does is in ../run/logs.ts, loaded when it runs. */
import { InvalidArgumentError, Option, type Command } from 'commander';
import { clientCommand, runWithClient } from '../client/command.js';
import { parseDuration } from '../flags.js';

const HELP = `
The output is read on the instance's node through the tunnel its agent keeps
open to the apiserver; nothing connects to the node. Without options it is
the current run's output; --previous shows the runs before it.
With -f, the stream survives the agent reconnecting, and ends with a line
saying why when the node's tunnel does not come back.

Examples:
  cairn logs instance web -n demo
  cairn logs instance/web -n demo -f --tail 20
  cairn logs instance vm1 -n demo --since 5m`;

function parseLines(value: string): number {
  if (!/^\d{1,9}$/.test(value)) throw new InvalidArgumentError(`"${value}" is not a number of lines (0 or more)`);
  return Number(value);
}

/** `cairn logs`. */
export function logsCommand(): Command {
  return clientCommand('logs')
    .description("Print an instance's output (its console log), read on its node through the agent's tunnel")
    .argument('<kind>', 'instance, or instance/NAME')
    .argument('[name]', 'instance name (unless given as instance/NAME)')
    .option('-f, --follow', 'keep printing what the instance writes until interrupted')
    .addOption(new Option('--tail <lines>', 'only the last N lines').argParser(parseLines))
    .addOption(new Option('--since <duration>', 'only output of the last duration, e.g. 30s, 5m (to the 2 s the agent samples at)').argParser(parseDuration))
    .option('-p, --previous', 'the output of the runs before the current one')
    .addHelpText('after', HELP)
    .action(runWithClient(async (ctx, kind: string, name: string | undefined) => (await import('../run/logs.js')).logs(ctx, name === undefined ? [kind] : [kind, name])));
}

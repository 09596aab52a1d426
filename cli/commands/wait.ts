/** `cairn wait`: its arguments, flags and help; what it does is in ../run/wait.ts, loaded when it runs. */
import type { Command } from 'commander';
import { clientCommand, runWithClient } from '../client/command.js';
import { parseWaitFor } from '../client/wait-for.js';
import { durationOption } from '../flags.js';

const EXAMPLES = `
Examples:
  cairn wait instance web --for=condition=Ready --timeout=2m
  cairn wait instances --all --for=condition=Ready
  cairn wait volumes -l app=db --for=condition=Degraded=false
  cairn wait instance/web --for=jsonpath='{.status.phase}'=Running
  cairn wait node.cairn.dev/node-b --for=jsonpath='{.status.phase}'=Drained
  cairn delete instance web && cairn wait instance web --for=delete`;

/** The `wait` verb. */
export function waitCommand(): Command {
  return clientCommand('wait', { allNamespaces: true })
    .description('Wait until objects meet a condition, match a JSONPath value, or are deleted')
    .argument('<kind>', 'KIND (plural, singular, short name or kind.group), or KIND/NAME')
    .argument('[names...]', 'names of the objects (or select them with --all / -l)')
    .requiredOption('--for <condition>', 'condition=TYPE[=VALUE] (default value True), delete, or jsonpath={PATH}[=VALUE]', parseWaitFor)
    .option('--all', 'every object of the kind in the namespace')
    .option('-l, --selector <selector>', 'label selector, e.g. app=web')
    .addOption(durationOption('--timeout <duration>', 'how long to wait, e.g. 30s, 5m (0: check once)', 30_000))
    .addHelpText('after', EXAMPLES)
    .action(runWithClient(async (ctx, kind: string, names: string[]) => (await import('../run/wait.js')).wait(ctx, [kind, ...names])));
}

/** `cairn describe`: its arguments, flags and help; what it does is in ../run/describe.ts, loaded when it runs. */
import type { Command } from 'commander';
import { clientCommand, runWithClient } from '../client/command.js';

const EXAMPLES = `
Examples:
  cairn describe instance web               # fields, conditions and events of one instance
  cairn describe instances                  # every instance of the namespace (Cluster)
  cairn describe workitems -l cairn.dev/node=node-a
  cairn describe node.cairn.dev/node-a`;

/** The `describe` verb. */
export function describeCommand(): Command {
  return clientCommand('describe', { allNamespaces: true })
    .description('Show objects in detail: spec, status, conditions and their events')
    .argument('<kind>', 'KIND (plural, singular, short name or kind.group), or KIND/NAME')
    .argument('[names...]', 'names of the objects (default: every object of the kind, filtered by -l)')
    .option('-l, --selector <selector>', 'label selector, e.g. app=web')
    .addHelpText('after', EXAMPLES)
    .action(runWithClient(async (ctx, kind: string, names: string[]) => (await import('../run/describe.js')).describe(ctx, [kind, ...names])));
}

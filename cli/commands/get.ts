/** `cairn get`: its arguments, flags and help; what it does is in ../run/get.ts, loaded when it runs. */
import type { Command } from 'commander';
import { clientCommand, runWithClient } from '../client/command.js';
import { parseOutputFormat } from '../client/verb-flags.js';

const EXAMPLES = `
Examples:
  cairn get instances                       # the instances of the context's namespace (Cluster)
  cairn get instances -o wide               # every column
  cairn get instance web -o yaml            # one object as YAML
  cairn get instances,volumes -l app=web    # several kinds, by label
  cairn get cairn                           # every Cairn kind, one block each
  cairn get workitems -A --field-selector spec.nodeName=node-a
  cairn get instances -w                    # then one row per change, until Ctrl-C
  cairn get instance/web volume/data -o name`;

/** The `get` verb. */
export function getCommand(): Command {
  return clientCommand('get', { allNamespaces: true })
    .description('Display one or many objects (the server\'s table columns, or yaml/json/name)')
    .argument('<kinds>', 'KIND[,KIND...] (plural, singular, short name, kind.group, or the category "cairn"), or KIND/NAME')
    .argument('[names...]', 'names of the objects (default: every object, filtered by -l / --field-selector)')
    .option('-o, --output <format>', 'table, wide, yaml, json or name', parseOutputFormat, 'table')
    .option('-l, --selector <selector>', 'label selector, e.g. app=web,tier!=db')
    .option('--field-selector <selector>', 'field selector, e.g. metadata.name=web or spec.nodeName=node-a')
    .option('-w, --watch', 'after listing, print each change until interrupted')
    .option('--no-headers', 'omit the header line of tables')
    .option('--show-labels', 'add a LABELS column to tables')
    .addHelpText('after', EXAMPLES)
    .action(runWithClient(async (ctx, kinds: string, names: string[]) => (await import('../run/get.js')).get(ctx, [kinds, ...names])));
}

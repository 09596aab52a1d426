/**
 * The operator's verbs on nodes and instances: their arguments, flags and
 * help; what they do is in ../run/node-ops.ts, loaded when one runs.
 */
import type { Command } from 'commander';
import { durationOption } from '../flags.js';
import { clientCommand, runWithClient } from '../client/command.js';

/** `cairn cordon NODE`. */
export function cordonCommand(): Command {
  return clientCommand('cordon')
    .description('Mark a node unschedulable: running instances stay, new ones go elsewhere')
    .argument('<node>', 'node name')
    .addHelpText('after', '\nExamples:\n  cairn cordon node-a -n demo\n  cairn uncordon node-a -n demo')
    .action(runWithClient(async (ctx, node: string) => (await import('../run/node-ops.js')).cordon(ctx, node)));
}

/** `cairn uncordon NODE`. */
export function uncordonCommand(): Command {
  return clientCommand('uncordon')
    .description('Mark a node schedulable again (also ends a drain)')
    .argument('<node>', 'node name')
    .addHelpText('after', '\nExamples:\n  cairn uncordon node-a -n demo')
    .action(runWithClient(async (ctx, node: string) => (await import('../run/node-ops.js')).uncordon(ctx, node)));
}

/** `cairn drain NODE [--wait]`. */
export function drainCommand(): Command {
  return clientCommand('drain')
    .description('Cordon a node and move its instances elsewhere (Node.spec.drain); --wait until it is empty')
    .argument('<node>', 'node name')
    .option('--wait', 'wait until the node reports phase Drained')
    .addOption(durationOption('--timeout <duration>', 'how long --wait waits', 300_000))
    .addHelpText('after', '\nExamples:\n  cairn drain node-b -n demo --wait --timeout 2m\n  cairn uncordon node-b -n demo    # end the drain')
    .action(runWithClient(async (ctx, node: string) => (await import('../run/node-ops.js')).drain(ctx, node)));
}

/** `cairn restart instance NAME` or `cairn restart instance/NAME`. */
export function restartCommand(): Command {
  return clientCommand('restart')
    .description('Restart an instance once, in place (sets the cairn.dev/restartedAt annotation)')
    .argument('<kind>', 'instance, or instance/NAME')
    .argument('[name]', 'instance name (unless given as instance/NAME)')
    .addHelpText('after', '\nExamples:\n  cairn restart instance web -n demo\n  cairn restart instance/web -n demo')
    .action(runWithClient(async (ctx, kind: string, name: string | undefined) => (await import('../run/node-ops.js')).restart(ctx, name === undefined ? [kind] : [kind, name])));
}

/** `cairn migrate`: its arguments, flags and help; what it does is in ../run/migrate.ts, loaded when it runs. */
import type { Command } from 'commander';
import { clientCommand, runWithClient } from '../client/command.js';
import { durationOption } from '../flags.js';

const HELP = `
A request is carried out once: when status.migration says the migration to NODE
is Completed or Failed, the same spec.migrateTo does nothing more. To retry,
run this command again: it then clears spec.migrateTo, waits until the
controller has withdrawn the old report, and sets it again.

A running qemu instance (spec.qemu.migration.mode Live, the default) moves live,
without a reboot; anything else (a process, mode Cold, a stopped VM) is stopped
on its node and started on NODE. Follow it with --wait, or with
  cairn get instance NAME -o yaml     (status.migration)

Examples:
  cairn migrate instance vm1 --to node-b -n demo --wait
  cairn migrate instance/vm1 --to node-b -n demo --wait --timeout 2m`;

/** `cairn migrate`. */
export function migrateCommand(): Command {
  return clientCommand('migrate')
    .description('Move an instance to another node (sets spec.migrateTo); live for a running qemu VM')
    .argument('<kind>', 'instance, or instance/NAME')
    .argument('[name]', 'instance name (unless given as instance/NAME)')
    .requiredOption('--to <node>', 'the node to move the instance to')
    .option('--wait', 'wait until the migration is Completed (exit 0) or Failed (exit 1, with the reason)')
    .addOption(durationOption('--timeout <duration>', 'how long --wait (and a retry\'s wait for the controller) waits, e.g. 90s, 10m', 600_000))
    .addHelpText('after', HELP)
    .action(runWithClient(async (ctx, kind: string, name: string | undefined) => (await import('../run/migrate.js')).migrate(ctx, name === undefined ? [kind] : [kind, name])));
}

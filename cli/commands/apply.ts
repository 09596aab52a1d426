/** `cairn apply`: its flags and help; what it does is in ../run/apply.ts, loaded when it runs. */
import type { Command } from 'commander';
import { clientCommand, runWithClient } from '../client/command.js';
import { addFilenameFlags, dryRunOption, fieldManagerOption } from '../client/verb-flags.js';

const EXAMPLES = `
Examples:
  # Apply every manifest of a directory (and its subdirectories with -R)
  cairn apply -f examples/
  cairn apply -f manifests/ -R

  # Apply from standard input, into the namespace (Cluster) demo
  cat web.yaml | cairn apply -n demo -f -

  # See what the server would do, without storing anything
  cairn apply -f web.yaml --dry-run=server

  # Set fields as a manager of their own: a later apply of the manifests that leave
  # them out (field manager "cairn") keeps them
  cairn apply -f vm-defaults.yaml --field-manager vm-defaults

  # The GitOps loop: apply the directory and delete the objects labelled app=shop
  # that are no longer in it
  cairn apply -f shop/ --prune -l app=shop

Pruning looks at every namespaced Cairn kind (nodes, instances, volumes, workitems)
in the namespaces the input touches (its objects' namespaces, the namespace of each
Cluster it declares, and -n), and at Clusters only when the input declares one. It
never deletes objects owned by a controller (the WorkItems of an Instance or Volume)
and runs only when every object of the input applied.`;

/** The `apply` verb. */
export function applyCommand(): Command {
  return addFilenameFlags(clientCommand('apply'), 'to apply')
    .description('Apply a configuration to objects by file name or stdin (server-side apply, field manager "cairn" unless --field-manager)')
    .addOption(dryRunOption('the server validates and admits each object without storing it'))
    .option('--force-conflicts', 'take over fields another field manager owns instead of failing')
    .addOption(fieldManagerOption())
    .option('--prune', 'delete the objects matching -l that are not in the input (see below)')
    .option('-l, --selector <selector>', 'apply only the input objects with these labels; with --prune, what may be deleted')
    .option('--server-side', 'accepted for kubectl compatibility: cairn always applies server-side')
    .addHelpText('after', EXAMPLES)
    .action(runWithClient(async (ctx) => (await import('../run/apply.js')).runApply(ctx)));
}

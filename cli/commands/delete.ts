/** `cairn delete`: its arguments, flags and help; what it does is in ../run/delete.ts, loaded when it runs. */
import type { Command } from 'commander';
import { durationOption } from '../flags.js';
import { clientCommand, runWithClient } from '../client/command.js';
import { addFilenameFlags, dryRunOption } from '../client/verb-flags.js';

const EXAMPLES = `
Examples:
  # By name (also as KIND/NAME), in the namespace (Cluster) demo
  cairn delete instance web -n demo
  cairn delete instance/web volume/data
  cairn delete instances,volumes web

  # By label, or every object of a kind; -A across every namespace
  cairn delete instances -l app=shop
  cairn delete volumes --all -A

  # The objects the manifests name, waiting until they are gone (finalizers done)
  cairn delete -f examples/25-instances.yaml --wait --timeout 2m

  # No error when it is already gone; or just see what would be deleted
  cairn delete instance web --ignore-not-found
  cairn delete instances -l app=shop --dry-run=server

A category (cairn) with -l or --all covers its namespaced kinds: Clusters, whose
deletion takes their whole namespace, are deleted only when named (clusters --all).
Unlike kubectl, delete does not wait by default: pass --wait.`;

/** The `delete` verb. */
export function deleteCommand(): Command {
  return addFilenameFlags(clientCommand('delete', { allNamespaces: true }), 'whose objects to delete')
    .description('Delete objects by name, label selector, kind (--all) or manifest')
    .argument('[args...]', 'KIND NAME..., KIND/NAME..., or KIND with -l or --all')
    .option('-l, --selector <selector>', 'delete the objects of KIND with these labels')
    .option('--all', 'delete every object of KIND in the namespace (with -A, everywhere)')
    .option('--ignore-not-found', 'an object that does not exist is not an error')
    .option('--wait', 'wait until every deleted object is gone (its finalizers done)')
    .addOption(durationOption('--timeout <duration>', 'how long --wait waits in all', 60_000))
    .addOption(dryRunOption('the server checks each deletion without doing it'))
    .addHelpText('after', EXAMPLES)
    .action(runWithClient(async (ctx, args: string[]) => (await import('../run/delete.js')).runDelete(ctx, args)));
}

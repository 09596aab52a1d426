/** `cairn user create`: its arguments, flags and help; what it does is in ../run/user.ts, loaded when it runs. */
import { Command } from 'commander';
import { durationOption } from '../flags.js';
import { clientCommand, runWithClient } from '../client/command.js';
import { USER_ROLES as ROLES } from '../../api/names.js';


function createCommand(): Command {
  return clientCommand('create')
    .description('Create a user with a built-in role (admin, operator, viewer), cluster-wide or in one Cluster, and write its kubeconfig')
    .argument('<name>', 'the user name RBAC bindings refer to')
    .requiredOption('--role <role>', `one of ${ROLES.join(', ')} (the ClusterRoles cairn:admin, cairn:operator, cairn:viewer)`)
    .option('--cluster <name>', 'grant the role in this Cluster only (a RoleBinding in its namespace); default: every Cluster')
    .addOption(durationOption('--ttl <duration>', 'how long the token is valid (0: no expiry)', 0, { lifetime: true }))
    .option('-o, --output <file>', 'where to write the kubeconfig (mode 0600); an existing file is refused unless --force', undefined)
    .option('--force', 'replace an existing output file (its other contexts are lost)', false)
    .addHelpText('after', `
Examples:
  cairn user create alice --role operator --cluster prod          # writes ./alice.kubeconfig
  cairn user create grafana --role viewer --ttl 720h -o grafana.kubeconfig
  kubectl --kubeconfig alice.kubeconfig auth can-i delete instances -n prod`)
    .action(runWithClient(async (ctx, name: string) => (await import('../run/user.js')).createUser(ctx, name)));
}

/** `cairn user`. */
export function userCommand(): Command {
  return new Command('user')
    .description('Manage users: cairn user create NAME --role R [--cluster C]')
    .addCommand(createCommand())
    .addHelpText('after', '\nExamples:\n  cairn user create alice --role operator --cluster prod\n  cairn token revoke ID   # revoke a user token (cairn get tokens lists them)');
}

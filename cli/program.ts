/**
 * The `cairn` command: the control-plane processes (`server`, `apiserver`,
 * `controller`, `agent`) and the kubectl-style client verbs.
 *
 * Every run defines every command, with its flags and help, so that
 * `cairn --help` and a mistyped flag answer at once: a command loads what
 * it does (cli/run/, and through it the apiserver, the controller, the
 * agent or the API client) only when it runs.
 * test/unit/cli/startup-imports.test.ts keeps it that way.
 */
import { Command } from 'commander';
import { cairnVersion } from '../api/version.js';
import { agentCommand } from './commands/agent.js';
import { applyCommand } from './commands/apply.js';
import { controllerCommand } from './commands/controller.js';
import { deleteCommand } from './commands/delete.js';
import { describeCommand } from './commands/describe.js';
import { diffCommand } from './commands/diff.js';
import { etcdCommand } from './commands/etcd.js';
import { failuresCommand } from './commands/failures.js';
import { getCommand } from './commands/get.js';
import { migrateCommand } from './commands/migrate.js';
import { logsCommand } from './commands/logs.js';
import { consoleCommand } from './commands/console.js';
import { volumeCommand } from './commands/volume.js';
import { cordonCommand, drainCommand, restartCommand, uncordonCommand } from './commands/node-ops.js';
import { restoreCommand } from './commands/restore.js';
import { apiserverCommand, serverCommand } from './commands/server.js';
import { statusCommand } from './commands/status.js';
import { tokenCommand } from './commands/token.js';
import { userCommand } from './commands/user.js';
import { versionCommand } from './commands/version.js';
import { waitCommand } from './commands/wait.js';

/** The `cairn` command with every subcommand. */
export function cairnProgram(): Command {
  return withHelpHint(program());
}

// addCommand() copies no settings to a subcommand: the hint after a usage error is given to each one.
function withHelpHint(command: Command): Command {
  command.showHelpAfterError('(run with --help for usage)');
  for (const sub of command.commands) withHelpHint(sub);
  return command;
}

function program(): Command {
  return new Command('cairn')
    .description('Cairn: a declarative control plane for clusters of machines running instances and replicated volumes')
    .version(cairnVersion(), '--version', 'print the Cairn version')
    .addCommand(applyCommand())
    .addCommand(getCommand())
    .addCommand(describeCommand())
    .addCommand(deleteCommand())
    .addCommand(diffCommand())
    .addCommand(waitCommand())
    .addCommand(statusCommand())
    .addCommand(failuresCommand())
    .addCommand(cordonCommand())
    .addCommand(uncordonCommand())
    .addCommand(drainCommand())
    .addCommand(restartCommand())
    .addCommand(migrateCommand())
    .addCommand(logsCommand())
    .addCommand(consoleCommand())
    .addCommand(volumeCommand())
    .addCommand(tokenCommand())
    .addCommand(restoreCommand())
    .addCommand(userCommand())
    .addCommand(versionCommand())
    .addCommand(serverCommand())
    .addCommand(apiserverCommand())
    .addCommand(controllerCommand())
    .addCommand(agentCommand())
    .addCommand(etcdCommand());
}

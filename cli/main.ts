/**
 * The `cairn` command: control-plane processes (`server`, `apiserver`) and,
 * as later issues add them, the agent and kubectl-style client verbs.
 */
import { Command } from 'commander';
import { cairnVersion } from '../apiserver/server.js';
import { isApiServerWorker, runApiServerWorker } from '../apiserver/worker-pool.js';
import { agentCommand } from './commands/agent.js';
import { controllerCommand } from './commands/controller.js';
import { apiserverCommand, serverCommand } from './commands/server.js';

const program = new Command('cairn')
  .description('Cairn: a declarative control plane for clusters of machines running instances and replicated volumes')
  .version(cairnVersion(), '--version', 'print the Cairn version')
  .showHelpAfterError('(run with --help for usage)')
  .addCommand(serverCommand())
  .addCommand(apiserverCommand())
  .addCommand(controllerCommand())
  .addCommand(agentCommand())
  .addCommand(
    new Command('version').description('Print the Cairn version').action(() => {
      process.stdout.write(`cairn ${cairnVersion()} (API compatible with Kubernetes 1.32)\n`);
    }),
  );

const main = isApiServerWorker() ? runApiServerWorker() : program.parseAsync(process.argv);
main.catch((err: unknown) => {
  process.stderr.write(`error: ${(err as Error)?.message ?? String(err)}\n`);
  process.exit(1);
});

/**
 * `cairn volume set|get|reset|start|stop|expand`: the Kadalu/gluster volume
 * verbs as changes of a Volume's spec (options, state, size); what they do
 * is in ../run/volume.ts, loaded when one runs.
 */
import { Command } from 'commander';
import { clientCommand, runWithClient } from '../client/command.js';
import { durationOption } from '../flags.js';

type Verb = 'set' | 'get' | 'reset' | 'start' | 'stop' | 'expand';

function verb(name: Verb, description: string, examples: string): Command {
  return clientCommand(name)
    .description(description)
    .argument('<volume>', 'the Volume\'s name')
    .addHelpText('after', `\nExamples:\n${examples}`);
}

const waitFlags = (cmd: Command, until: string) =>
  cmd
    .option('--wait', `wait until ${until}`)
    .addOption(durationOption('--timeout <duration>', 'how long --wait waits, e.g. 90s, 10m', 300_000));

const run = (name: Verb) => runWithClient(async (ctx, volume: string, rest: string[] | undefined) => (await import('../run/volume.js')).volumeVerb(ctx, name, volume, rest ?? []));

/** `cairn volume`. */
export function volumeCommand(): Command {
  return new Command('volume')
    .description('GlusterFS volume verbs on a Volume\'s spec: options (set/get/reset), start/stop, expand')
    .addCommand(verb('set', 'Set GlusterFS options (spec.options); applied online by regenerating the client and self-heal volfiles', '  cairn volume set data network.ping-timeout=10 cluster.favorite-child-policy=mtime -n demo')
      .argument('<key=value...>', 'options from the list `cairn volume get VOLUME` shows (docs/volumes.md)')
      .action(run('set')))
    .addCommand(verb('get', 'Show every supported GlusterFS option of a Volume: its value, and whether it is set or GlusterFS\'s default', '  cairn volume get data -n demo\n  cairn volume get data network.ping-timeout -n demo')
      .argument('[key...]', 'only these options')
      .action(run('get')))
    .addCommand(verb('reset', 'Remove options from spec.options, back to GlusterFS\'s defaults', '  cairn volume reset data network.ping-timeout -n demo\n  cairn volume reset data --all -n demo')
      .argument('[key...]', 'the options to reset')
      .option('--all', 'reset every option')
      .action(run('reset')))
    .addCommand(waitFlags(verb('start', 'Start a Stopped volume\'s bricks (spec.state Started)', '  cairn volume start data -n demo --wait'), 'the Volume is Ready (exit 0) or Failed (exit 1)').action(run('start')))
    .addCommand(waitFlags(verb('stop', 'Stop every brick and self-heal daemon, keeping the data (spec.state Stopped); instances using it wait', '  cairn volume stop data -n demo --wait'), 'no brick runs').action(run('stop')))
    .addCommand(waitFlags(verb('expand', 'Grow the volume (spec.size): one brick at a time, online', '  cairn volume expand data --size 20Gi -n demo --wait'), 'every brick has the new size')
      .requiredOption('--size <quantity>', 'the new size, e.g. 20Gi (a volume never shrinks)')
      .action(run('expand')));
}

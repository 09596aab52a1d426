/** `cairn restore --from-agents`: its flags and help; what it does is in ../run/restore.ts, loaded when it runs (it brings in the etcd client). */
import { Command, InvalidArgumentError } from 'commander';
import { addEtcdTlsFlags } from '../etcd-flags.js';
import { parseList } from '../flags.js';
import type { RestoreFlags } from '../run/restore.js';

function parseMargin(value: string): number {
  if (!/^\d{1,9}$/.test(value)) throw new InvalidArgumentError(`"${value}" is not a whole number of revisions (0 to 999999999)`);
  return Number(value);
}

/** `cairn restore`. */
export function restoreCommand(): Command {
  return addEtcdTlsFlags(
    new Command('restore')
      .description("Rebuild a lost etcd from the copies the agents keep in their data dirs")
      .requiredOption('--from-agents <dirs>', "agents' data dirs, comma-separated (copied from their machines, or read in place)", parseList)
      .option('--data-dir <dir>', "a cairn server's data dir: restore into its embedded etcd (<data-dir>/etcd), started for the restore and stopped after; the server must not be running")
      .option('--etcd-endpoints <urls>', 'restore into an external etcd instead, comma-separated endpoints', parseList)
      .option('--force', 'write even into an etcd that already holds Cairn objects, overwriting the keys the copies name', false)
      .option('--revision-margin <n>', "revisions to add above the freshest copy's resourceVersion, for writes no agent saw before etcd was lost", parseMargin, 1000)
      .option('--crd-dir <dir>', 'the CRDs the server serves (default: the ones shipped with Cairn)'),
  )
    .addHelpText('after', `
Every agent keeps, in its data dir, the last copy it saw of its Node, its
Cluster, its WorkItems, the Instances and Volumes they are pieces of, its
node lease and its instances' claims. This writes the freshest copy of each
object (highest resourceVersion across agents) into an empty etcd, with the
store's revision raised above the old one so clients list again, and prints
what it restored, from which node, and what it could not recover (Users,
RBAC, Secrets, ConfigMaps, Events, and Instances no node runs). Finish it
and start the server within the agents' safe window (docs/restore.md), or
the agents fence their instances: they restart once the server is back.

Examples:
  # the server's etcd data is lost; the agents' dirs were copied to ./agents
  cairn restore --from-agents agents/node-a,agents/node-b,agents/node-c --data-dir /var/lib/cairn
  cairn server --data-dir /var/lib/cairn

  # an external etcd (started empty)
  cairn restore --from-agents /mnt/node-a,/mnt/node-b --etcd-endpoints https://10.0.0.1:2379 \\
    --etcd-cafile etcd-ca.crt --etcd-certfile apiserver-etcd-client.crt --etcd-keyfile apiserver-etcd-client.key`)
    .action(async (flags: RestoreFlags) => (await import('../run/restore.js')).runRestore(flags));
}

/** `cairn etcd status|defrag`: their flags and help; what they do is in ../run/etcd.ts, loaded when one runs (it brings in the etcd client). */
import { Command } from 'commander';
import { addEtcdTlsFlags } from '../etcd-flags.js';
import { parseList } from '../flags.js';
import type { EtcdFlags } from '../run/etcd.js';

const ENDPOINTS_HELP = "etcd endpoints, comma-separated; for cairn server's embedded etcd, the one its NOSPACE errors, its /readyz and its log name";

function memberCommand(name: string): Command {
  return addEtcdTlsFlags(new Command(name).requiredOption('--etcd-endpoints <urls>', ENDPOINTS_HELP, parseList));
}

function statusCommand(): Command {
  return memberCommand('status')
    .description("Show each etcd member's database size (what --quota-backend-bytes limits) and the raised alarms")
    .addHelpText('after', '\nExamples:\n  cairn etcd status --etcd-endpoints http://127.0.0.1:2379')
    .action(async (flags: EtcdFlags) => (await import('../run/etcd.js')).showStatus(flags));
}

function defragCommand(): Command {
  return memberCommand('defrag')
    .description("Free etcd's space after its NOSPACE alarm: compact history, defragment every member, disarm the alarm")
    .addHelpText('after', `
Compacts etcd's history up to the current revision (watches resuming from an
older resourceVersion get 410 Gone and list again, as after any compaction),
defragments the members one at a time (each pauses while it runs), then
disarms the NOSPACE alarms, so etcd takes writes again. Live objects stay.
If the objects alone fill the quota, etcd raises the alarm again at the next
write: delete objects (deletes work under the alarm) and run this again, or
restart etcd with a larger --quota-backend-bytes.

Examples:
  cairn etcd defrag --etcd-endpoints http://127.0.0.1:40417
  cairn etcd defrag --etcd-endpoints https://10.0.0.1:2379,https://10.0.0.2:2379,https://10.0.0.3:2379 \\
    --etcd-cafile etcd-ca.crt --etcd-certfile apiserver-etcd-client.crt --etcd-keyfile apiserver-etcd-client.key`)
    .action(async (flags: EtcdFlags) => (await import('../run/etcd.js')).defrag(flags));
}

/** `cairn etcd`. */
export function etcdCommand(): Command {
  return new Command('etcd')
    .description("Maintain Cairn's etcd directly: sizes and alarms, and recovery from the NOSPACE alarm")
    .addCommand(statusCommand())
    .addCommand(defragCommand())
    .addHelpText('after', '\nExamples:\n  cairn etcd status --etcd-endpoints http://127.0.0.1:2379\n  cairn etcd defrag --etcd-endpoints http://127.0.0.1:2379');
}

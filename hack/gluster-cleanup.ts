/**
 * For tests and benchmarks that play a node's death or clean up after one:
 * everything GlusterFS runs or mounts under a node's data dir goes.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';

/** Everything a node's gluster left running and mounted under `dataDir` goes, as if the machine died: its processes SIGKILLed, its mounts lazily unmounted. */
export function killGlusterUnder(dataDir: string): void {
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    let cmd = '';
    try {
      cmd = fs.readFileSync(`/proc/${e}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (/gluster/.test(cmd) && cmd.includes(dataDir)) {
      try {
        process.kill(Number(e), 'SIGKILL');
      } catch {
        // gone
      }
    }
  }
  const mounts = fs.readFileSync('/proc/self/mounts', 'utf8').split('\n').map((l) => l.split(' ')[1] ?? '');
  for (const m of mounts.filter((m) => m.startsWith(`${dataDir}/`))) execFileSync('umount', ['-l', m], { stdio: 'ignore' });
}

/**
 * The project's test guest (hack/build-test-guest.sh): Debian's cloud kernel
 * and a busybox initramfs that prints a readiness marker and a heartbeat
 * with its uptime on the serial console. Built once per machine (cached);
 * the script installs the Debian packages it needs when they are missing.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { ROOT } from './paths.js';

/** Paths and settings of the test guest. */
export interface TestGuest {
  kernel: string;
  initrd: string;
  cmdline: string;
  marker: string;
}

const root = ROOT;
let cached: TestGuest | undefined;

/** Builds the guest if needed and returns where it is. */
export function testGuest(): TestGuest {
  if (cached) return cached;
  const dir = execFileSync('bash', [path.join(root, 'hack/build-test-guest.sh'), '--print-dir'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'inherit'] }).trim();
  const env = Object.fromEntries(
    fs.readFileSync(path.join(dir, 'guest.env'), 'utf8').split('\n').filter(Boolean).map((l) => [l.slice(0, l.indexOf('=')), l.slice(l.indexOf('=') + 1).replace(/^"(.*)"$/, '$1')]),
  );
  cached = { kernel: env.KERNEL!, initrd: env.INITRD!, cmdline: env.CMDLINE!, marker: env.MARKER! };
  return cached;
}

/** The heartbeats in a console log file: sequence number and guest uptime (s) of each. */
export function heartbeats(consoleLog: string): Array<{ seq: number; uptime: number }> {
  return heartbeatsIn(fs.existsSync(consoleLog) ? fs.readFileSync(consoleLog, 'utf8') : '');
}

/** The heartbeats in console text. */
export function heartbeatsIn(text: string): Array<{ seq: number; uptime: number }> {
  return [...text.matchAll(/CAIRN-HEARTBEAT seq=(\d+) uptime=([\d.]+)/g)].map((m) => ({ seq: Number(m[1]), uptime: Number(m[2]) }));
}

/** Pids of qemu processes whose command line names the instance (`-name guest=<cluster>/<name>`). */
export function qemuPids(cluster: string, name: string): number[] {
  const pids: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    let cmd: string[];
    try {
      cmd = fs.readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
    } catch {
      continue;
    }
    if (cmd[0]?.endsWith('qemu-system-x86_64') && cmd.includes(`guest=${cluster}/${name}`)) pids.push(Number(entry));
  }
  return pids;
}

/**
 * What the qemu driver can do on this node, found once at agent start:
 * whether qemu is installed (and its version), and which accelerator
 * `accelerator: auto` VMs use. /dev/kvm opening is not enough — on some
 * machines KVM guests stall — so the probe boots qemu's own firmware under
 * KVM with no disk and waits for SeaBIOS to finish its power-on self test
 * ("No bootable device" on the debug console); a guest that does not get
 * there within the probe's time means TCG (software emulation).
 */
import { spawn, execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Accelerator, AcceleratorChoice } from '../../../api/cluster.js';
import type { NodeDriver } from '../../../api/node.js';
import { QEMU_BINARY } from './runtime.js';

/** How long a KVM guest may take to reach the end of its firmware's self test. */
const PROBE_TIMEOUT_MS = 3_000;
const POST_DONE = 'No bootable device';

/** The qemu driver's entry in the Node status, and the accelerator auto means here. */
export interface QemuCapability {
  driver: NodeDriver;
  accelerator?: Accelerator;
}

function qemuVersion(): string | undefined {
  try {
    const out = execFileSync(QEMU_BINARY, ['--version'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
    return /version (\S+)/.exec(out)?.[1] ?? out.split('\n')[0];
  } catch {
    return undefined;
  }
}

/** Whether a KVM guest really runs here. */
export async function kvmRunsGuests(): Promise<boolean> {
  try {
    fs.accessSync('/dev/kvm', fs.constants.R_OK | fs.constants.W_OK);
  } catch {
    return false;
  }
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'cairn-kvm-probe-'));
  const log = path.join(dir, 'debugcon.log');
  const child = spawn(QEMU_BINARY, ['-accel', 'kvm', '-machine', 'q35', '-nodefaults', '-no-user-config', '-display', 'none', '-m', '16', '-chardev', `file,id=dbg,path=${log}`, '-device', 'isa-debugcon,iobase=0x402,chardev=dbg'], { stdio: 'ignore' });
  child.on('error', () => undefined);
  try {
    const deadline = Date.now() + PROBE_TIMEOUT_MS;
    while (Date.now() < deadline && child.exitCode === null) {
      if (fs.existsSync(log) && fs.readFileSync(log, 'utf8').includes(POST_DONE)) return true;
      await sleep(50);
    }
    return false;
  } finally {
    child.kill('SIGKILL');
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Probes qemu on this node; `choice` tcg or kvm skips the KVM trial (the operator knows). */
export async function probeQemu(choice: AcceleratorChoice): Promise<QemuCapability> {
  const version = qemuVersion();
  if (!version) return { driver: { name: 'qemu', available: false, message: `${QEMU_BINARY} is not installed: install Debian's qemu-system-x86 package` } };
  const accelerator: Accelerator = choice === 'auto' ? ((await kvmRunsGuests()) ? 'kvm' : 'tcg') : choice;
  const how = choice === 'auto' ? (accelerator === 'kvm' ? 'KVM runs guests' : 'KVM does not run guests here: software emulation (TCG)') : `set by --qemu-accelerator ${choice}`;
  return { driver: { name: 'qemu', available: true, version, message: how }, accelerator };
}

/**
 * Facts about this machine for the Node object: capacity (cpus, memory,
 * free storage under the data dir, each overridable), addresses and OS
 * details. Read once at start and when re-registering.
 */
import fs from 'node:fs';
import os from 'node:os';
import type { NodeAddress, NodeInfo } from '../api/node.js';
import { formatQuantity, parseQuantity } from '../api/quantity.js';
import type { Resources } from '../api/types.js';

/** Capacity overrides from flags (--cpus, --memory, --storage). */
export interface CapacityOverrides {
  cpus?: number;
  memory?: string;
  storage?: string;
}

/** Rounds bytes down to whole MiB so quantities stay short ("15843Mi"). */
function mebibytes(bytes: number): string {
  return formatQuantity(Math.floor(bytes / 2 ** 20) * 2 ** 20);
}

/** Free bytes on the filesystem holding dir, as an unprivileged user may use them. */
export function freeStorageBytes(dir: string): number {
  const s = fs.statfsSync(dir);
  return s.bavail * s.bsize;
}

/** Cpus, memory and storage of this node. */
export function detectCapacity(dataDir: string, overrides: CapacityOverrides = {}): Resources {
  return {
    cpus: overrides.cpus ?? os.availableParallelism(),
    memory: overrides.memory ? formatQuantity(parseQuantity(overrides.memory)) : mebibytes(os.totalmem()),
    storage: overrides.storage ? formatQuantity(parseQuantity(overrides.storage)) : mebibytes(freeStorageBytes(dataDir)),
  };
}

/** Hostname and non-internal IPv4/IPv6 addresses (loopback when there is nothing else). */
export function detectAddresses(): NodeAddress[] {
  const ips = Object.values(os.networkInterfaces())
    .flat()
    .filter((a): a is os.NetworkInterfaceInfo => !!a && !a.internal)
    .map((a) => a.address);
  const internal = ips.length > 0 ? ips : ['127.0.0.1'];
  return [{ type: 'Hostname', address: os.hostname() }, ...internal.slice(0, 4).map((address) => ({ type: 'InternalIP' as const, address }))];
}

function readFirst(file: string, pattern?: RegExp): string | undefined {
  try {
    const text = fs.readFileSync(file, 'utf8');
    if (!pattern) return text.trim();
    return pattern.exec(text)?.[1];
  } catch {
    return undefined;
  }
}

/** Kernel, OS image, architecture and boot id. */
export function detectNodeInfo(): NodeInfo {
  return {
    hostname: os.hostname(),
    architecture: os.arch(),
    kernelVersion: os.release(),
    osImage: readFirst('/etc/os-release', /^PRETTY_NAME="?([^"\n]*)"?$/m) ?? `${os.type()} ${os.release()}`,
    bootID: readFirst('/proc/sys/kernel/random/boot_id'),
  };
}

/**
 * The qemu command line of a VM, built from its WorkItem as one pure
 * function (unit tested): machine, accelerator, cpus, memory, boot (a
 * kernel with initrd and cmdline, or a disk image), each attached volume
 * replica as a raw virtio-blk disk, the serial console appended to a log
 * file, two QMP sockets and a pid file. A migration target gets the same
 * machine and disks plus `-incoming defer -S`: it waits for the source's
 * state and stays paused until the agent resumes it under the fencing lease.
 * Disk node names are positional (vol0, vol1 …) so both ends of a migration
 * name them alike.
 */
import type { Accelerator } from '../../../api/cluster.js';
import type { WorkItemInstanceSpec } from '../../../api/workitem.js';
import { OperationError } from '../../operations/errors.js';

/** Default machine type of a VM. */
export const DEFAULT_MACHINE = 'q35';

/** The serial console's socket in a VM's instance directory. */
export const CONSOLE_SOCKET = 'console.sock';

/** Files of one VM under its instance directory. */
export interface VmPaths {
  consoleLog: string;
  /** The serial console's unix socket (CONSOLE_SOCKET). */
  consoleSocket: string;
  /** QMP socket for status reads (observe). */
  qmpSocket: string;
  /** QMP socket for operations (start, stop, migrate). */
  controlSocket: string;
  pidFile: string;
}

/** One attached volume: a local replica file, or an image inside a gluster volume's mount. */
export interface VmDisk {
  /** Attachment name, for messages. */
  name: string;
  path: string;
  readOnly: boolean;
  /** Every node sees the same data (gluster): opened with cache=none, never mirrored on migration. */
  shared?: boolean;
}

/** Everything the command line depends on. */
export interface VmCommandInput {
  instance: string;
  spec: WorkItemInstanceSpec;
  memoryBytes: number;
  accelerator: Accelerator;
  disks: VmDisk[];
  paths: VmPaths;
  /** Start as a migration target: paused, waiting for migrate-incoming. */
  incoming?: boolean;
}

/** QMP node name of the i-th attached disk. */
export function diskNodeName(index: number): string {
  return `vol${index}`;
}

/** A disk node; `direct` opens it with O_DIRECT and flushes (cache=none), which a disk on a gluster mount needs: no stale page cache after migration. */
function blockdev(nodeName: string, file: string, format: string, readOnly: boolean, direct = false): string {
  const cache = direct ? { cache: { direct: true, 'no-flush': false } } : {};
  return JSON.stringify({ driver: format, 'node-name': nodeName, 'read-only': readOnly, ...cache, file: { driver: 'file', filename: file, ...cache } });
}

function bootArgs(spec: WorkItemInstanceSpec, instance: string): string[] {
  const q = spec.qemu ?? {};
  if (q.bootDisk) {
    const format = q.bootDisk.format ?? 'raw';
    return ['-blockdev', blockdev('boot', q.bootDisk.path, format, q.bootDisk.readOnly ?? false), '-device', 'virtio-blk-pci,drive=boot,id=boot-disk,bootindex=0'];
  }
  if (q.kernel) {
    return ['-kernel', q.kernel, ...(q.initrd ? ['-initrd', q.initrd] : []), ...(q.cmdline ? ['-append', q.cmdline] : [])];
  }
  throw new OperationError('InvalidSpec', `instance ${instance} has neither spec.qemu.kernel nor spec.qemu.bootDisk`, "set spec.qemu.kernel (and initrd, cmdline) or spec.qemu.bootDisk, or the Cluster's spec.driverDefaults.qemu.kernel");
}

/** The qemu arguments (without the program) for the VM. */
export function qemuArgs(input: VmCommandInput): string[] {
  const { spec, paths } = input;
  const q = spec.qemu ?? {};
  const mib = Math.ceil(input.memoryBytes / (1024 * 1024));
  const args = [
    '-name', `guest=${input.instance}`,
    '-nodefaults', '-no-user-config', '-display', 'none',
    '-machine', `${q.machine ?? DEFAULT_MACHINE},accel=${input.accelerator}`,
    ...(q.cpuModel ? ['-cpu', q.cpuModel] : []),
    '-smp', String(spec.cpus),
    '-m', String(mib),
    ...bootArgs(spec, input.instance),
    // A socket for interactive sessions (cairn console); qemu logs all output to console.log whether or not one is connected.
    '-chardev', `socket,id=console,path=${paths.consoleSocket},server=on,wait=off,logfile=${paths.consoleLog},logappend=on`,
    '-serial', 'chardev:console',
    '-qmp', `unix:${paths.qmpSocket},server=on,wait=off`,
    '-qmp', `unix:${paths.controlSocket},server=on,wait=off`,
    '-pidfile', paths.pidFile,
  ];
  input.disks.forEach((d, i) => {
    args.push('-blockdev', blockdev(diskNodeName(i), d.path, 'raw', d.readOnly, d.shared), '-device', `virtio-blk-pci,drive=${diskNodeName(i)},id=disk-${i}`);
  });
  if (q.network === 'user') args.push('-netdev', 'user,id=net0', '-device', 'virtio-net-pci,netdev=net0');
  if (input.incoming) args.push('-incoming', 'defer', '-S');
  return [...args, ...(q.extraArgs ?? [])];
}

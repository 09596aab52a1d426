/**
 * The `file` volume replica driver: replica <index> of a Volume is the file
 * <dataDir>/volumes/<namespace>/<volume>-<index>.img of the Volume's size,
 * preallocated (the util-linux `fallocate` command) or sparse (ftruncate).
 * Before any allocation the free space of the filesystem (statfs) is
 * checked: growing a replica by more than is free fails with NoSpace, for
 * sparse files too, so a later write cannot hit ENOSPC in the workload.
 * A new replica is built under a temporary name and renamed into place only
 * when complete; a failure unlinks it, and leftovers of a killed worker are
 * swept by the next operation. Growing happens in place (a failed grow is
 * truncated back); shrinking is refused with InvalidSpec. ensure()/remove()
 * run in workers, one at a time per replica.
 */
import fs from 'node:fs';
import path from 'node:path';
import { formatQuantity, parseQuantity } from '../../../api/quantity.js';
import type { Allocation } from '../../../api/volume.js';
import type { WorkItem, WorkItemVolumeReplicaSpec } from '../../../api/workitem.js';
import { classify, OperationError } from '../../operations/errors.js';
import type { Driver, DriverEnv, Observation, OperationContext } from '../driver.js';
import { sizeFile } from './fallocate.js';
import { ownerKey, replicaPath } from '../paths.js';

/** A replica's file as it is on disk. */
interface OnDisk {
  sizeBytes: number;
  allocatedBytes: number;
}

const mib = (bytes: number) => `${(bytes / 2 ** 20).toFixed(1)} MiB`;

/** The replica slice of a VolumeReplica WorkItem, its path and size in bytes, checked. */
export function replicaTarget(item: WorkItem, dataDir: string): { spec: WorkItemVolumeReplicaSpec; path: string; bytes: number } {
  const spec = item.spec.volumeReplica;
  if (item.spec.type !== 'VolumeReplica' || !spec) {
    throw new OperationError('InvalidSpec', `WorkItem ${item.metadata.name ?? ''} is not a volume replica`, 'the controller should set spec.type VolumeReplica and spec.volumeReplica');
  }
  let bytes: number;
  try {
    bytes = parseQuantity(spec.size);
  } catch (err) {
    throw new OperationError('InvalidSpec', `size of volume ${spec.volumeName}: ${(err as Error).message}`, 'fix spec.size of the Volume', { cause: err });
  }
  return { spec, path: replicaPath(dataDir, ownerKey(item).namespace, spec.volumeName, spec.index), bytes };
}

async function onDisk(file: string): Promise<OnDisk | undefined> {
  const st = await fs.promises.stat(file).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return undefined;
    throw err;
  });
  return st && { sizeBytes: st.size, allocatedBytes: st.blocks * 512 };
}

function toObservation(file: string, disk: OnDisk | undefined, bytes: number, allocation: Allocation): Observation {
  const base = disk ? { volumeReplica: { path: file, size: formatQuantity(disk.sizeBytes), sizeBytes: disk.sizeBytes, allocatedBytes: disk.allocatedBytes } } : {};
  if (!disk) return { converged: false, action: 'create', message: `replica ${file} does not exist yet`, ...base };
  if (disk.sizeBytes > bytes) return { converged: false, action: 'resize', message: `replica is ${mib(disk.sizeBytes)}, larger than the requested ${mib(bytes)}`, ...base };
  if (disk.sizeBytes < bytes) return { converged: false, action: 'resize', message: `replica is ${mib(disk.sizeBytes)}, growing to ${mib(bytes)}`, ...base };
  if (allocation === 'preallocated' && disk.allocatedBytes < bytes) return { converged: false, action: 'resize', message: 'replica is not fully preallocated', ...base };
  return { converged: true, message: `replica ready: ${mib(bytes)} (${allocation})`, ...base };
}

async function observe(item: WorkItem, env: DriverEnv): Promise<Observation> {
  const { spec, path: file, bytes } = replicaTarget(item, env.dataDir);
  return toObservation(file, await onDisk(file), bytes, spec.allocation ?? 'sparse');
}

async function checkFree(file: string, needed: number, node: string, volume: string): Promise<void> {
  const st = await fs.promises.statfs(path.dirname(file));
  const free = st.bavail * st.bsize;
  if (needed > free) {
    throw new OperationError(
      'NoSpace',
      `replica ${path.basename(file)} needs ${mib(needed)} more but ${path.dirname(file)} on node ${node} has only ${mib(free)} free`,
      `free space on the filesystem of ${path.dirname(file)} on node ${node}, lower spec.size of Volume ${volume}, or keep its replicas off this node (nodeSelector)`,
    );
  }
}

async function sweepTemps(file: string): Promise<void> {
  const prefix = `${path.basename(file)}.tmp-`;
  const names = await fs.promises.readdir(path.dirname(file)).catch(() => []);
  await Promise.all(names.filter((n) => n.startsWith(prefix)).map((n) => fs.promises.rm(path.join(path.dirname(file), n), { force: true })));
}

async function create(file: string, bytes: number, allocation: Allocation, ctx: OperationContext, volume: string): Promise<void> {
  await checkFree(file, bytes, ctx.nodeName, volume);
  const tmp = `${file}.tmp-${process.pid}`;
  try {
    await sizeFile(tmp, bytes, allocation, ctx.nodeName, ctx.signal);
    ctx.signal.throwIfAborted();
    await fs.promises.rename(tmp, file);
  } catch (err) {
    await fs.promises.rm(tmp, { force: true });
    throw err;
  }
  ctx.log.info('replica created', { path: file, bytes, allocation });
}

async function grow(file: string, disk: OnDisk, bytes: number, allocation: Allocation, ctx: OperationContext, volume: string): Promise<void> {
  await checkFree(file, bytes - disk.allocatedBytes, ctx.nodeName, volume);
  try {
    await sizeFile(file, bytes, allocation, ctx.nodeName, ctx.signal);
  } catch (err) {
    await fs.promises.truncate(file, disk.sizeBytes);
    throw err;
  }
  ctx.log.info('replica grown', { path: file, from: disk.sizeBytes, to: bytes, allocation });
}

async function ensure(item: WorkItem, ctx: OperationContext): Promise<Observation> {
  const { spec, path: file, bytes } = replicaTarget(item, ctx.dataDir);
  const allocation = spec.allocation ?? 'sparse';
  const doing = { doing: `ensuring replica ${spec.index} of volume ${spec.volumeName}`, node: ctx.nodeName, path: file };
  try {
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    await sweepTemps(file);
    const disk = await onDisk(file);
    if (disk && disk.sizeBytes > bytes) {
      throw new OperationError('InvalidSpec', `replica ${file} is ${mib(disk.sizeBytes)}; shrinking it to ${mib(bytes)} would destroy data`, `set spec.size of Volume ${spec.volumeName} back to at least ${formatQuantity(disk.sizeBytes)}`);
    }
    if (!disk) await create(file, bytes, allocation, ctx, spec.volumeName);
    else if (disk.sizeBytes < bytes || (allocation === 'preallocated' && disk.allocatedBytes < bytes)) await grow(file, disk, bytes, allocation, ctx, spec.volumeName);
  } catch (err) {
    throw classify(err, doing);
  }
  return toObservation(file, await onDisk(file), bytes, allocation);
}

async function remove(item: WorkItem, ctx: OperationContext): Promise<void> {
  const { spec, path: file } = replicaTarget(item, ctx.dataDir);
  await sweepTemps(file);
  if (spec.reclaimPolicy === 'Retain') {
    ctx.log.info('replica retained (reclaimPolicy Retain)', { path: file });
    return;
  }
  await fs.promises.rm(file, { force: true }).catch((err: unknown) => {
    throw classify(err, { doing: `deleting replica ${spec.index} of volume ${spec.volumeName}`, node: ctx.nodeName, path: file });
  });
  ctx.log.info('replica deleted', { path: file });
}

/** The file volume replica driver. */
export const fileDriver: Driver = { name: 'file', observe, ensure, remove };

/**
 * A gluster brick's size, enforced: each brick is its own ext4 filesystem
 * in a sparse image file (brick.img in its run dir), loop-mounted on the
 * brick directory. Writes past the Volume's size then fail with ENOSPC on
 * every brick, so on the mount. The image is the size plus ext4's own
 * overhead (journal, inode tables, descriptors: estimated, then checked
 * against statfs), so the usable space is at least spec.size; GlusterFS's
 * posix translator keeps 1% free, which takes about that much back.
 * Growing is online where the agent may (CAP_SYS_RESOURCE): the image is
 * extended, the loop device told (losetup -c) and resize2fs grows the
 * mounted filesystem. Without that capability (containers) the brick is
 * stopped for the few hundred ms an offline resize2fs takes and started
 * again; the controller grows one brick at a time, so the others keep
 * quorum. A node reboot loses the mount, not the image: ensure() mounts it
 * again.
 */
import { execFile } from 'node:child_process';
import fs from 'node:fs';
import { promisify } from 'node:util';
import { OperationError } from '../../operations/errors.js';
import type { Allocation } from '../../../api/volume.js';
import type { OperationContext } from '../driver.js';
import { fallocate, sizeFile } from './fallocate.js';
import { isMountPoint } from './gluster-mount.js';

const run = promisify(execFile);
const MiB = 1024 * 1024;
/** One inode per 16 KiB: room for GlusterFS's .glusterfs link tree on small volumes. */
const BYTES_PER_INODE = 16_384;

/** The journal for a filesystem of `bytes`: 1/128 of it, 4–128 MiB. */
function journalMiB(bytes: number): number {
  return Math.min(128, Math.max(4, Math.floor(bytes / MiB / 128)));
}

/** The image for `bytes` of usable space: journal, inode tables (256 B per inode), 2% for group metadata, and 8 MiB. */
export function imageBytes(bytes: number): number {
  const overhead = journalMiB(bytes) * MiB + Math.ceil(bytes / BYTES_PER_INODE) * 256 + Math.ceil(bytes / 50) + 8 * MiB;
  return Math.ceil((bytes + overhead) / MiB) * MiB;
}

/** Usable bytes of the mounted filesystem: what is free to write plus what is written (ext4's statfs leaves its own metadata out). */
export function usableBytes(mountPoint: string): number {
  const st = fs.statfsSync(mountPoint);
  return (st.bavail + (st.blocks - st.bfree)) * st.bsize;
}

async function tool(cmd: string, args: string[], what: string, ctx: OperationContext): Promise<string> {
  try {
    return (await run(cmd, args, { signal: ctx.signal })).stdout;
  } catch (err) {
    const e = err as NodeJS.ErrnoException & { stderr?: string };
    if (e.code === 'ENOENT') throw new OperationError('DriverUnavailable', `${cmd} is not installed on node ${ctx.nodeName}`, `install ${['mkfs.ext4', 'resize2fs', 'e2fsck'].includes(cmd) ? 'e2fsprogs' : 'util-linux and mount'} on node ${ctx.nodeName}`);
    const detail = (e.stderr ?? e.message).trim();
    if (/no space left/i.test(detail)) throw new OperationError('NoSpace', `${what} on node ${ctx.nodeName} failed: ${detail}`, `free space on node ${ctx.nodeName} or lower spec.size of the Volume`);
    if (/loop|\/dev\/loop/i.test(detail)) throw new OperationError('DriverUnavailable', `${what} on node ${ctx.nodeName} failed: ${detail}`, `the agent needs loop devices (modprobe loop) and root on node ${ctx.nodeName}`);
    throw new OperationError('CommandFailed', `${what} on node ${ctx.nodeName} failed: ${detail}`, 'see the agent log');
  }
}

/** The loop device the brick's filesystem is mounted from. */
async function loopDevice(mountPoint: string, ctx: OperationContext): Promise<string> {
  return (await tool('findmnt', ['-n', '-o', 'SOURCE', '--target', mountPoint], `finding the device of ${mountPoint}`, ctx)).trim();
}

/**
 * Creates (when missing) and mounts the brick's filesystem image on `mountPoint`, then grows it to hold `bytes`; `quiesce`
 * stops what uses the brick, for an offline resize. A preallocated image has every block reserved, so that the brick's
 * writes never fail for lack of space on the node, and is allocated whole again here (an image made sparse before).
 */
export async function ensureBrickFilesystem(image: string, mountPoint: string, bytes: number, allocation: Allocation, ctx: OperationContext, quiesce: () => Promise<void>): Promise<void> {
  fs.mkdirSync(mountPoint, { recursive: true, mode: 0o755 });
  if (!isMountPoint(mountPoint)) {
    if (!fs.existsSync(image) && fs.readdirSync(mountPoint).length > 0) {
      // Mounting over it would hide that data (a brick kept by reclaimPolicy Retain, or made by hand).
      throw new OperationError('InvalidSpec', `brick directory ${mountPoint} on node ${ctx.nodeName} holds data but no brick filesystem image (${image})`, `move the data away from ${mountPoint}, or delete it if it is not needed`);
    }
    if (!fs.existsSync(image)) await createImage(image, bytes, allocation, ctx);
    await mount(image, mountPoint, ctx);
  }
  await growTo(image, mountPoint, bytes, allocation, ctx, quiesce);
  if (allocation === 'preallocated' && !fullyAllocated(image)) await fallocate(image, fs.statSync(image).size, ctx.nodeName, ctx.signal);
}

/** Whether every block of the image is allocated on the node (a sparse one, or a volume turned preallocated, has holes). */
export function fullyAllocated(image: string): boolean {
  const st = fs.statSync(image, { throwIfNoEntry: false });
  return !st || st.blocks * 512 >= st.size;
}

/**
 * Loop-mounts the image (autoclear: the loop device goes with the mount), with direct I/O on the loop
 * device: without it every write is cached twice, and fsync through the brick runs at a third of the
 * speed. noinit_itable: the image is sparse, so inode tables mkfs left unwritten read as zeros already,
 * and the kernel's background zeroing would only compete with the first writes.
 */
async function mount(image: string, mountPoint: string, ctx: OperationContext): Promise<void> {
  await tool('mount', ['-o', 'loop,noatime,noinit_itable', image, mountPoint], `mounting ${image} on ${mountPoint}`, ctx);
  const device = await loopDevice(mountPoint, ctx);
  await tool('losetup', ['--direct-io=on', device], `turning on direct I/O of ${device}`, ctx).catch((err: Error) => ctx.log.warn('the brick filesystem runs without direct I/O (slower fsync)', { device, error: err.message }));
}

async function createImage(image: string, bytes: number, allocation: Allocation, ctx: OperationContext): Promise<void> {
  const tmp = `${image}.tmp`;
  fs.rmSync(tmp, { force: true });
  await sizeFile(tmp, imageBytes(bytes), allocation, ctx.nodeName, ctx.signal);
  const args = ['-q', '-F', '-m', '0', '-i', String(BYTES_PER_INODE), '-J', `size=${journalMiB(bytes)}`, '-E', 'lazy_itable_init=1,lazy_journal_init=1', tmp];
  await tool('mkfs.ext4', args, `making the brick filesystem ${image}`, ctx);
  fs.renameSync(tmp, image);
  ctx.log.info('brick filesystem created', { image, bytes, imageBytes: imageBytes(bytes) });
}

/** Grows the mounted filesystem until it holds `bytes`: online, or offline when the kernel refuses (no CAP_SYS_RESOURCE). */
async function growTo(image: string, mountPoint: string, bytes: number, allocation: Allocation, ctx: OperationContext, quiesce: () => Promise<void>): Promise<void> {
  for (let round = 0; usableBytes(mountPoint) < bytes; round++) {
    if (round === 3) throw new OperationError('CommandFailed', `the brick filesystem ${image} on node ${ctx.nodeName} holds ${usableBytes(mountPoint)} bytes after growing, not ${bytes}`, 'see the agent log');
    const shortfall = bytes - usableBytes(mountPoint);
    const target = Math.max(imageBytes(bytes), fs.statSync(image).size + Math.ceil((shortfall * 1.05) / MiB) * MiB + MiB);
    await sizeFile(image, target, allocation, ctx.nodeName, ctx.signal);
    const device = await loopDevice(mountPoint, ctx);
    await tool('losetup', ['-c', device], `telling ${device} its new size`, ctx);
    const online = await tool('resize2fs', [device], `growing the brick filesystem on ${device}`, ctx).then(() => true, (err: OperationError) => {
      if (/Permission denied to resize/i.test(err.message)) return false;
      throw err;
    });
    if (!online) await growOffline(image, mountPoint, ctx, quiesce);
    ctx.log.info('brick filesystem grown', { image, bytes, imageBytes: target, online });
  }
}

async function growOffline(image: string, mountPoint: string, ctx: OperationContext, quiesce: () => Promise<void>): Promise<void> {
  await quiesce();
  await tool('umount', [mountPoint], `unmounting ${mountPoint} to grow it`, ctx);
  await tool('e2fsck', ['-f', '-p', image], `checking ${image} before growing it`, ctx);
  await tool('resize2fs', [image], `growing the brick filesystem ${image}`, ctx);
  await mount(image, mountPoint, ctx);
}

/** Unmounts the brick's filesystem (its loop device goes with it) and deletes the image. */
export async function removeBrickFilesystem(image: string, mountPoint: string, ctx: OperationContext): Promise<void> {
  if (isMountPoint(mountPoint)) await tool('umount', [mountPoint], `unmounting ${mountPoint}`, ctx);
  fs.rmSync(image, { force: true });
}

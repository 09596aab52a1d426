/**
 * The size of a volume's file on the node (a file replica, or a gluster brick's filesystem image): sparse,
 * or preallocated with util-linux's `fallocate` (`allocation: preallocated`), so that writes into it never
 * fail for lack of space on the node.
 */
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import type { Allocation } from '../../../api/volume.js';
import { OperationError } from '../../operations/errors.js';

/**
 * Sizes `file`, created (mode 0600) when missing: `bytes` long and sparse, or preallocated with every block of
 * its first `bytes` reserved (fallocate extends a file, never shrinks it).
 */
export async function sizeFile(file: string, bytes: number, allocation: Allocation, node: string, signal: AbortSignal): Promise<void> {
  const handle = await fs.promises.open(file, fs.constants.O_WRONLY | fs.constants.O_CREAT, 0o600);
  try {
    if (allocation !== 'preallocated') await handle.truncate(bytes);
  } finally {
    await handle.close();
  }
  if (allocation === 'preallocated') await fallocate(file, bytes, node, signal);
}

/** Runs `fallocate -l <bytes> <file>`, mapping its failures to reasons. */
export function fallocate(file: string, bytes: number, node: string, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn('fallocate', ['-l', String(bytes), file], { stdio: ['ignore', 'ignore', 'pipe'], signal });
    let stderr = '';
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('error', (err: NodeJS.ErrnoException) => {
      if (err.code === 'ENOENT') reject(new OperationError('NotFound', `the fallocate command does not exist on node ${node}`, `install util-linux on node ${node}, or use allocation: sparse`, { cause: err }));
      else reject(err);
    });
    child.on('close', (code, sig) => (code === 0 ? resolve() : reject(fallocateError(stderr.trim(), code, sig, node))));
  });
}

/** The OperationError for a failed fallocate command, from its stderr. */
export function fallocateError(stderr: string, code: number | null, signal: NodeJS.Signals | null, node: string): OperationError {
  const what = `fallocate on node ${node} failed (${signal ?? `exit ${code}`}): ${stderr}`;
  if (/no space left|quota exceeded/i.test(stderr)) return new OperationError('NoSpace', what, `free space on node ${node} or lower spec.size of the Volume`);
  if (/operation not supported/i.test(stderr)) return new OperationError('DriverUnavailable', what, 'the data dir\'s filesystem cannot preallocate: use allocation: sparse, or put the data dir on ext4 or xfs');
  if (/file too large/i.test(stderr)) return new OperationError('InvalidSpec', what, 'the size exceeds the largest file the filesystem allows: lower spec.size');
  if (/permission denied|read-only/i.test(stderr)) return new OperationError('PermissionDenied', what, `check ownership and mode of the data dir on node ${node}`);
  return new OperationError('CommandFailed', what, `run the same fallocate by hand on node ${node} to see why`);
}

/**
 * Crash-safe writes for keys, tokens and kubeconfigs. The data goes to a
 * temporary file in the same directory, created with its final mode (so a
 * secret is never readable by others, not even briefly) and fsync'ed, and is
 * then renamed — or hard-linked, for create-once files — into place, so a
 * reader sees the old content or the new, never a torn file.
 *
 * Concurrency: concurrent `writeFileAtomic` calls on one path are safe (the
 * last rename wins); `createFileExclusive` lets exactly one caller win.
 */
import { randomBytes } from 'node:crypto';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** Atomically replaces (or creates) `file` with `data`, with permission bits `mode` (default 0600). */
export async function writeFileAtomic(file: string, data: string | Uint8Array, mode = 0o600): Promise<void> {
  const tmp = await writeTemp(file, data, mode);
  try {
    await fs.rename(tmp, file);
  } catch (err) {
    await fs.rm(tmp, { force: true });
    throw err;
  }
  await syncDir(path.dirname(file));
}

/** Atomically creates `file` with `data` and `mode` unless it exists; false (nothing written) when it did. */
export async function createFileExclusive(file: string, data: string | Uint8Array, mode = 0o600): Promise<boolean> {
  const tmp = await writeTemp(file, data, mode);
  try {
    // link(2), unlike rename(2), fails when the target exists: first writer wins.
    await fs.link(tmp, file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  } finally {
    await fs.rm(tmp, { force: true });
  }
  await syncDir(path.dirname(file));
  return true;
}

async function writeTemp(file: string, data: string | Uint8Array, mode: number): Promise<string> {
  const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await fs.open(tmp, 'wx', mode);
  let written = false;
  try {
    // The umask may have narrowed `mode` at open; set it exactly.
    await handle.chmod(mode);
    await handle.writeFile(data);
    await handle.sync();
    written = true;
  } finally {
    await handle.close();
    if (!written) await fs.rm(tmp, { force: true });
  }
  return tmp;
}

// Makes the rename itself durable; some filesystems refuse to fsync a directory, which is harmless.
async function syncDir(dir: string): Promise<void> {
  try {
    const handle = await fs.open(dir, 'r');
    try {
      await handle.sync();
    } finally {
      await handle.close();
    }
  } catch {
    // best effort
  }
}
